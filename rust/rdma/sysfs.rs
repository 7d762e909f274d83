// SPDX-License-Identifier: GPL-2.0

//! A driver's sysfs directories under its device: one for the device, with
//! a `members/` directory holding one per member. Their files are static
//! tables the driver builds with the `const fn`s below, each file a name,
//! a mode and an id; every show and store reaches the driver's
//! [`DeviceOps::sysfs_show`] and [`DeviceOps::sysfs_store`] with the id, the
//! directory and the driver data the directory was made with (see
//! [`super::container`], which adds and removes them). 6.12's kernel crate has
//! no kobject abstraction.
//!
//! Removal waits for running show/store: the driver must not remove a
//! directory from inside one of its callbacks, nor with a lock they take.

use core::{
    ffi::{c_void, CStr},
    marker::PhantomData,
    mem::MaybeUninit,
    ptr::{null, null_mut, NonNull},
};

use kernel::{
    bindings as kbindings,
    ffi::{c_char, c_int},
    prelude::*,
    types::{ForeignOwnable, Opaque},
};

use super::device::DeviceOps;

/// What sysfs hands a show callback (`PAGE_SIZE`).
const PAGE_LEN: usize = 4096;

/// Which directory a file is in.
#[derive(Clone, Copy)]
pub(crate) enum Dir {
    /// The device's.
    Device,
    /// Member slot's.
    Member(u32),
}

/// A file: its `kobj_attribute` (name, mode, the adapters of `T`) and the
/// id the driver is handed.
#[repr(C)]
pub(crate) struct File<T: DeviceOps> {
    kattr: kbindings::kobj_attribute,
    id: u32,
    _ops: PhantomData<T>,
}

// SAFETY: never written after it is built (sysfs only reads it); its
// pointers are a static name and functions.
unsafe impl<T: DeviceOps> Sync for File<T> {}

impl<T: DeviceOps> File<T> {
    /// A file that root may write (0644; storing needs `CAP_NET_ADMIN`).
    pub(crate) const fn rw(name: &'static CStr, id: u32) -> Self {
        Self::new(name, id, true)
    }

    /// A read-only file (0444: sysfs opens it read-only).
    pub(crate) const fn ro(name: &'static CStr, id: u32) -> Self {
        Self::new(name, id, false)
    }

    const fn new(name: &'static CStr, id: u32, writable: bool) -> Self {
        // SAFETY: all zeroes is a valid `kobj_attribute` (no name, mode or
        // callbacks; lockdep's key fields, if any, unused by static files).
        let mut kattr: kbindings::kobj_attribute = unsafe { MaybeUninit::zeroed().assume_init() };
        kattr.attr.name = name.as_ptr().cast();
        kattr.attr.mode = if writable { 0o644 } else { 0o444 };
        kattr.show = Some(show::<T>);
        kattr.store = if writable { Some(store::<T>) } else { None };
        Self {
            kattr,
            id,
            _ops: PhantomData,
        }
    }
}

/// The NULL-terminated attribute list of a group: `N` is its files + 1.
#[repr(transparent)]
pub(crate) struct AttrList<T: DeviceOps, const N: usize>(
    [*const kbindings::attribute; N],
    PhantomData<T>,
);

// SAFETY: never written after it is built; it points at static files.
unsafe impl<T: DeviceOps, const N: usize> Sync for AttrList<T, N> {}

impl<T: DeviceOps, const N: usize> AttrList<T, N> {
    /// The list of `files`; `N` must be `F + 1` (checked at build time).
    pub(crate) const fn new<const F: usize>(files: &'static [File<T>; F]) -> Self {
        assert!(N == F + 1);
        let mut attrs = [null(); N];
        let mut i = 0;
        while i < F {
            attrs[i] = &files[i].kattr.attr;
            i += 1;
        }
        Self(attrs, PhantomData)
    }
}

/// A group of files, in a subdirectory if it has a name.
#[repr(transparent)]
pub(crate) struct Group<T: DeviceOps>(kbindings::attribute_group, PhantomData<T>);

// SAFETY: never written after it is built; it points at static data.
unsafe impl<T: DeviceOps> Sync for Group<T> {}

impl<T: DeviceOps> Group<T> {
    /// The files of `attrs`, in subdirectory `name` if given.
    pub(crate) const fn new<const N: usize>(
        name: Option<&'static CStr>,
        attrs: &'static AttrList<T, N>,
    ) -> Self {
        // SAFETY: all zeroes is a valid `attribute_group`: no name, no
        // files, no visibility callbacks.
        let mut group: kbindings::attribute_group = unsafe { MaybeUninit::zeroed().assume_init() };
        if let Some(name) = name {
            group.name = name.as_ptr().cast();
        }
        // CAST: sysfs never writes through the list.
        group.attrs = attrs.0.as_ptr().cast_mut().cast();
        Self(group, PhantomData)
    }
}

/// The kind of one level of directories: its groups, NULL-terminated (`N`
/// is their count + 1).
#[repr(transparent)]
pub(crate) struct DirType<T: DeviceOps, const N: usize>(kbindings::kobj_type, PhantomData<T>);

// SAFETY: never written after it is built; it points at static data.
unsafe impl<T: DeviceOps, const N: usize> Sync for DirType<T, N> {}

/// The groups of a [`DirType`].
#[repr(transparent)]
pub(crate) struct GroupList<T: DeviceOps, const N: usize>(
    [*const kbindings::attribute_group; N],
    PhantomData<T>,
);

// SAFETY: never written after it is built; it points at static groups.
unsafe impl<T: DeviceOps, const N: usize> Sync for GroupList<T, N> {}

impl<T: DeviceOps, const N: usize> GroupList<T, N> {
    /// The list of `groups`; `N` must be `G + 1` (checked at build time).
    pub(crate) const fn new<const G: usize>(groups: [&'static Group<T>; G]) -> Self {
        assert!(N == G + 1);
        let mut list = [null(); N];
        let mut i = 0;
        while i < G {
            list[i] = &groups[i].0;
            i += 1;
        }
        Self(list, PhantomData)
    }
}

impl<T: DeviceOps, const N: usize> DirType<T, N> {
    /// Directories whose files are `groups`' (default groups: the files
    /// exist as soon as the directory does).
    pub(crate) const fn new(groups: &'static GroupList<T, N>) -> Self {
        // SAFETY: all zeroes is a valid `kobj_type`: no callbacks, groups
        // or namespace.
        let mut ktype: kbindings::kobj_type = unsafe { MaybeUninit::zeroed().assume_init() };
        ktype.release = Some(release);
        ktype.sysfs_ops = &raw const kbindings::kobj_sysfs_ops;
        // CAST: sysfs never writes through the list.
        ktype.default_groups = groups.0.as_ptr().cast_mut();
        Self(ktype, PhantomData)
    }
}

/// The driver's directories of a device: the device's kind and a member's.
pub(crate) struct Layout<T: DeviceOps> {
    device: *const kbindings::kobj_type,
    member: *const kbindings::kobj_type,
    _ops: PhantomData<T>,
}

// SAFETY: never written after it is built; it points at static kinds.
unsafe impl<T: DeviceOps> Sync for Layout<T> {}

impl<T: DeviceOps> Layout<T> {
    /// The device's directory is of kind `device`, a member's of `member`.
    pub(crate) const fn new<const D: usize, const M: usize>(
        device: &'static DirType<T, D>,
        member: &'static DirType<T, M>,
    ) -> Self {
        Self {
            device: &device.0,
            member: &member.0,
            _ops: PhantomData,
        }
    }
}

/// A directory as the kobject code holds it.
#[repr(C)]
struct DirKobj {
    /// At offset 0: the callbacks cast it back.
    kobj: Opaque<kbindings::kobject>,
    /// The driver data, which outlives the directory.
    data: *mut c_void,
    dir: Dir,
    /// The device's directory only: its `members/`.
    members: *mut kbindings::kobject,
}

/// Frees a directory at its last put.
///
/// # Safety
///
/// Called by the kobject code with the `kobj` of a [`DirKobj`] made by
/// [`add`], at its last reference.
unsafe extern "C" fn release(kobj: *mut kbindings::kobject) {
    // SAFETY: `kobj` is the first field of a `DirKobj` that `add` leaked
    // from a `KBox`; nothing refers to it any more.
    drop(unsafe { KBox::from_raw(kobj.cast::<DirKobj>()) });
}

/// Makes directory `name` of kind `ktype` under `parent`.
///
/// # Safety
///
/// `parent` must be a live kobject, `ktype` a [`DirType`] whose adapters'
/// driver data is `data`'s type, and `data` outlive the directory.
unsafe fn add(
    ktype: *const kbindings::kobj_type,
    parent: *mut kbindings::kobject,
    name: &kernel::str::CStr,
    data: *mut c_void,
    dir: Dir,
) -> Result<NonNull<DirKobj>> {
    let boxed = KBox::new(
        DirKobj {
            // SAFETY: all zeroes is the state `kobject_init()` wants.
            kobj: Opaque::new(unsafe { MaybeUninit::zeroed().assume_init() }),
            data,
            dir,
            members: null_mut(),
        },
        GFP_KERNEL,
    )?;
    let raw = KBox::into_raw(boxed);
    // SAFETY: `raw` is live and zeroed where `kobject_init` looks; the
    // format takes `name`, a NUL-terminated string. From here on only the
    // release function frees it, at the last put.
    let ret = unsafe {
        kbindings::kobject_init_and_add(
            (*raw).kobj.get(),
            ktype,
            parent,
            c"%s".as_ptr().cast(),
            name.as_char_ptr(),
        )
    };
    if ret != 0 {
        // SAFETY: initialised: the put frees it.
        unsafe { kbindings::kobject_put((*raw).kobj.get()) };
        return Err(Error::from_errno(ret));
    }
    // SAFETY: `KBox::into_raw` never returns NULL.
    Ok(unsafe { NonNull::new_unchecked(raw) })
}

/// A directory of the driver, until [`SysfsDir::remove`].
///
/// # Invariants
///
/// `0` is a live [`DirKobj`] made by [`add`], with one reference this
/// handle owns.
pub(super) struct SysfsDir(NonNull<DirKobj>);

// SAFETY: the kobject code is internally synchronised; the handle only
// removes the directory, from any thread.
unsafe impl Send for SysfsDir {}

impl SysfsDir {
    /// Makes the device's directory `name` under `parent`, with its
    /// `members/`.
    ///
    /// # Safety
    ///
    /// `parent` must be the live kobject of a device of `T`, and `data` its
    /// `T::Data`, outliving the directory.
    pub(super) unsafe fn device<T: DeviceOps>(
        layout: &'static Layout<T>,
        parent: *mut kbindings::kobject,
        name: &kernel::str::CStr,
        data: *mut c_void,
    ) -> Result<Self> {
        // SAFETY: as the caller guarantees; the kind is `T`'s.
        let dir = unsafe { add(layout.device, parent, name, data, Dir::Device) }?;
        // INVARIANT: made just above, its reference ours.
        let dir = Self(dir);
        // SAFETY: the directory is live; the name is NUL-terminated.
        let members =
            unsafe { kbindings::kobject_create_and_add(c"members".as_ptr().cast(), dir.kobj()) };
        if members.is_null() {
            dir.remove();
            return Err(ENOMEM);
        }
        // SAFETY: nobody else reads `members` until the handle is shared.
        unsafe { (*dir.0.as_ptr()).members = members };
        Ok(dir)
    }

    /// Makes member `slot`'s directory `name` under this device's
    /// `members/`.
    pub(super) fn member<T: DeviceOps>(
        &self,
        layout: &'static Layout<T>,
        slot: u32,
        name: &kernel::str::CStr,
    ) -> Result<Self> {
        // SAFETY: by the invariant the directory is live; `members` was
        // set before the handle was shared.
        let (members, data) = unsafe {
            let d = self.0.as_ptr();
            ((*d).members, (*d).data)
        };
        if name.is_empty() {
            return Err(EINVAL);
        }
        // SAFETY: `members` lives while its parent does; the kind and the
        // data are the device directory's (`T`'s, per `Self::device`).
        let dir = unsafe { add(layout.member, members, name, data, Dir::Member(slot)) }?;
        // INVARIANT: made just above, its reference ours.
        Ok(Self(dir))
    }

    fn kobj(&self) -> *mut kbindings::kobject {
        // SAFETY: by the invariant the directory is live.
        unsafe { (*self.0.as_ptr()).kobj.get() }
    }

    /// Removes the directory (a device's after its members'); waits for
    /// its running show/store.
    pub(super) fn remove(self) {
        let kobj = self.kobj();
        // SAFETY: by the invariant the reference is ours; `members` is
        // NULL or the dynamic `members/`, whose last put removes it.
        unsafe {
            kbindings::kobject_put((*self.0.as_ptr()).members);
            kbindings::kobject_del(kobj);
            kbindings::kobject_put(kobj);
        }
    }
}

/// `show` of every file.
///
/// # Safety
///
/// Called by sysfs with a [`DirKobj`] of `T`'s kind, a [`File`] of `T` and
/// a page.
unsafe extern "C" fn show<T: DeviceOps>(
    kobj: *mut kbindings::kobject,
    kattr: *mut kbindings::kobj_attribute,
    buf: *mut c_char,
) -> isize {
    // SAFETY: as the caller guarantees: both are the first fields of
    // ours (the directory's fields read in place: its kobject is the
    // kobject code's), the data outlives the directory, and the page is
    // `PAGE_LEN` bytes.
    let (dir, file, data, page) = unsafe {
        let d = kobj.cast::<DirKobj>();
        (
            (*d).dir,
            &*kattr.cast::<File<T>>(),
            <T::Data as ForeignOwnable>::borrow((*d).data),
            core::slice::from_raw_parts_mut(buf.cast::<u8>(), PAGE_LEN),
        )
    };
    T::sysfs_show(data, dir, file.id, page)
}

/// `store` of every writable file.
///
/// # Safety
///
/// As for [`show`], with `count` bytes readable at `buf`.
unsafe extern "C" fn store<T: DeviceOps>(
    kobj: *mut kbindings::kobject,
    kattr: *mut kbindings::kobj_attribute,
    buf: *const c_char,
    count: usize,
) -> isize {
    // The 0644 mode only stops non-root; root without the cap too.
    // SAFETY: a plain capability check of the current task.
    if !unsafe { kbindings::capable(kbindings::CAP_NET_ADMIN as c_int) } {
        return EPERM.to_errno() as isize;
    }
    // SAFETY: as the caller guarantees (see `show`).
    let (dir, file, data, input) = unsafe {
        let d = kobj.cast::<DirKobj>();
        (
            (*d).dir,
            &*kattr.cast::<File<T>>(),
            <T::Data as ForeignOwnable>::borrow((*d).data),
            core::slice::from_raw_parts(buf.cast::<u8>(), count),
        )
    };
    match T::sysfs_store(data, dir, file.id, input) {
        Ok(()) => isize::try_from(count).unwrap_or(isize::MAX),
        Err(e) => e.to_errno() as isize,
    }
}
