// SPDX-License-Identifier: GPL-2.0

//! Protection domains: the object the core allocates for a PD of a device
//! whose PD verbs are Rust's ([`Pd`]), the set of a device's live PDs that
//! device-wide events walk ([`PdSet`]), and a PD this module owns on
//! another driver's device ([`MemberPd`]).

use core::{
    mem::{align_of, size_of},
    ptr::{addr_of_mut, NonNull},
};

use kernel::{
    error::{from_err_ptr, from_result},
    ffi::c_int,
    prelude::*,
    str::CStr,
    types::Opaque,
};

use super::{
    bindings,
    device::{Adapter, Device, DeviceOps},
    set::ObjectSet,
};

/// The object the core allocates for a PD (`size_ib_pd` bytes, zeroed):
/// the core's `ib_pd` first, as `INIT_RDMA_OBJ_SIZE` requires, then the
/// driver's data.
///
/// # Invariants
///
/// A `&Pd<T>` exists only for a PD whose `alloc_pd` initialised `data`
/// and whose `dealloc_pd` has not dropped it yet.
#[repr(C)]
#[pin_data]
pub(crate) struct Pd<T> {
    ibpd: Opaque<bindings::ib_pd>,
    #[pin]
    data: T,
}

impl<T> Pd<T> {
    /// The PD whose `ib_pd` is at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` must be the `ib_pd` of a `Pd<T>` whose data is initialised
    /// and stays so for `'a`: a PD of a device whose table is built from a
    /// [`super::device::DeviceOps`] with `PdData = T`, after its
    /// `alloc_pd` succeeded and before its `dealloc_pd`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_pd) -> &'a Self {
        // CAST: `Pd` is `repr(C)` with the `ib_pd` at offset 0.
        // INVARIANT: guaranteed by the caller.
        // SAFETY: the caller guarantees the object is live for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The driver's data of the PD.
    pub(crate) fn data(&self) -> &T {
        &self.data
    }

    /// The name of the kernel ULP that allocated it (`res.kern_name`);
    /// empty if the core recorded none.
    pub(crate) fn ulp(&self) -> &CStr {
        // SAFETY: by the type invariant the `ib_pd` is initialised.
        unsafe { ulp_of(self.ibpd.get()) }
    }
}

/// The ULP name the core recorded for the PD at `ibpd`.
///
/// # Safety
///
/// `ibpd` must be a PD the core filled in and has not freed, for `'a`.
unsafe fn ulp_of<'a>(ibpd: *const bindings::ib_pd) -> &'a CStr {
    // SAFETY: the core sets `kern_name` before `alloc_pd` and never
    // changes it.
    let name = unsafe { (*ibpd).res.kern_name };
    if name.is_null() {
        return kernel::c_str!("");
    }
    // SAFETY: `kern_name` is the NUL-terminated name the ULP passed to
    // `ib_alloc_pd()` (its `KBUILD_MODNAME`), static while the ULP, which
    // holds the PD, is loaded.
    unsafe { CStr::from_char_ptr(name.cast()) }
}

/// What `alloc_pd` is told about the PD it initialises.
pub(crate) struct NewPd<'a> {
    flags: u32,
    ulp: &'a CStr,
}

impl NewPd<'_> {
    /// Reads what the core filled in before calling `alloc_pd`.
    ///
    /// # Safety
    ///
    /// `ibpd` must be the core's, valid for the call.
    pub(super) unsafe fn new(ibpd: *const bindings::ib_pd) -> Self {
        // SAFETY: the caller guarantees `ibpd` is valid.
        let (flags, ulp) = unsafe { ((*ibpd).flags, ulp_of(ibpd)) };
        Self { flags, ulp }
    }

    /// The name of the kernel ULP that allocates it.
    pub(crate) fn ulp(&self) -> &CStr {
        self.ulp
    }

    /// Whether the ULP asked for an rkey valid on every object of the
    /// device (`IB_PD_UNSAFE_GLOBAL_RKEY`).
    pub(crate) fn wants_global_rkey(&self) -> bool {
        self.flags & bindings::ib_pd_flags_IB_PD_UNSAFE_GLOBAL_RKEY != 0
    }
}

/// The live PDs of a device, for what a device-wide event must do to each
/// (a member going away frees its member PDs).
pub(crate) type PdSet<T> = ObjectSet<Pd<T>>;

// SAFETY: a `&Pd<T>` gives out only the core's PD, which the core shares
// between threads, and a `&T`, which `T: Sync` lets any thread use.
unsafe impl<T: Sync> Sync for Pd<T> {}

/// A PD this module allocated on another driver's device (a member),
/// deallocated when dropped.
///
/// # Invariants
///
/// `ptr` is a PD `ib_alloc_pd()` returned and nothing has deallocated, on
/// a device that stays registered until this handle is dropped.
pub(crate) struct MemberPd {
    ptr: NonNull<bindings::ib_pd>,
}

// SAFETY: a PD may be used and deallocated from any thread in process
// context; the handle is only moved, never shared while being dropped.
unsafe impl Send for MemberPd {}
// SAFETY: `&MemberPd` only reads the pointer.
unsafe impl Sync for MemberPd {}

impl MemberPd {
    /// Allocates a PD on `dev`.
    ///
    /// # Safety
    ///
    /// `dev` must be a registered device that stays registered until the
    /// returned handle is dropped. May sleep.
    pub(crate) unsafe fn alloc(dev: *mut bindings::ib_device) -> Result<Self> {
        // SAFETY: the caller guarantees `dev` is registered.
        let pd = from_err_ptr(unsafe { bindings::mrbond_rdma_alloc_pd(dev) })?;
        let ptr = NonNull::new(pd).ok_or(ENOMEM)?;
        // INVARIANT: just allocated; the caller keeps `dev` registered.
        Ok(Self { ptr })
    }

    /// The `ib_pd`, for the C parts of the data path.
    pub(crate) fn as_raw(&self) -> *mut bindings::ib_pd {
        self.ptr.as_ptr()
    }

    /// The lkey of the PD's local DMA MR on the member.
    pub(crate) fn local_dma_lkey(&self) -> u32 {
        // SAFETY: by the type invariant the PD is live; the key is set at
        // its allocation.
        unsafe { (*self.ptr.as_ptr()).local_dma_lkey }
    }
}

impl Drop for MemberPd {
    fn drop(&mut self) {
        // SAFETY: by the type invariant the PD is live and its device
        // registered; nothing uses the handle after this.
        unsafe { bindings::mrbond_rdma_dealloc_pd(self.ptr.as_ptr()) }
    }
}

impl<T: DeviceOps> Adapter<T> {
    /// `size_ib_pd`: the core allocates a [`Pd`] for every PD.
    pub(super) const PD_SIZE: usize = {
        // `kzalloc()` aligns to `ARCH_KMALLOC_MINALIGN` (at least 8).
        assert!(align_of::<Pd<T::PdData>>() <= 8);
        size_of::<Pd<T::PdData>>()
    };

    /// # Safety
    ///
    /// Called by the RDMA core with a zeroed [`Pd`] of `PD_SIZE` bytes whose
    /// `ib_pd` it filled in, on a device whose table is `T`'s and whose
    /// driver data is a `T::Data`.
    pub(super) unsafe extern "C" fn alloc_pd(
        ibpd: *mut bindings::ib_pd,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            // No ucontext exists until userspace verbs do.
            if !udata.is_null() {
                return Err(super::eopnotsupp());
            }
            // SAFETY: the core sets the PD's device before `alloc_pd`; the
            // device is allocated while it has PDs.
            let dev = unsafe { Device::from_raw((*ibpd).device) };
            // SAFETY: `ibpd` is the core's, valid for the call.
            let new = unsafe { NewPd::new(ibpd) };
            // SAFETY: the device is `T`'s and holds its data until its
            // `.dealloc_driver`, after its last verb.
            let owner = unsafe { dev.driver_data::<T::Data>() }?;
            // SAFETY: as above.
            T::alloc_pd(unsafe { dev.driver_data::<T::Data>() }?, dev, &new)?;
            let init = T::pd_data();
            let raw = ibpd.cast::<Pd<T::PdData>>();
            // SAFETY: the object is a `Pd` (`PD_SIZE` bytes, `repr(C)` with
            // the `ib_pd` first) whose data nothing has seen yet; on an
            // error the initialiser leaves it uninitialised.
            unsafe { init.__pinned_init(addr_of_mut!((*raw).data)) }?;
            // SAFETY: the data is initialised; the PD lives until the
            // `dealloc_pd` below.
            let pd = unsafe { Pd::from_raw(ibpd) };
            if let Err(e) = T::pds(&owner).insert(pd) {
                // SAFETY: initialised above, in no set, seen by no one; the
                // core frees the object without a `dealloc_pd`.
                unsafe { core::ptr::drop_in_place(addr_of_mut!((*raw).data)) };
                return Err(e);
            }
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the RDMA core, once, on a PD whose `alloc_pd` succeeded,
    /// after its last use.
    pub(super) unsafe extern "C" fn dealloc_pd(
        ibpd: *mut bindings::ib_pd,
        _udata: *mut bindings::ib_udata,
    ) -> c_int {
        let raw = ibpd.cast::<Pd<T::PdData>>();
        // SAFETY: `alloc_pd` initialised the data; the core frees the
        // object after this returns and calls nothing else on the PD, so
        // this ends the data's life.
        let drop_data = || unsafe { core::ptr::drop_in_place(addr_of_mut!((*raw).data)) };
        // SAFETY: the PD's device is allocated while it has PDs.
        let dev = unsafe { Device::from_raw((*ibpd).device) };
        // SAFETY: the device is `T`'s and holds its data until its
        // `.dealloc_driver`, which the core calls after the last PD is gone.
        match unsafe { dev.driver_data::<T::Data>() } {
            Ok(data) => T::pds(&data).remove_then(raw, drop_data),
            // No set is left to leave.
            Err(_) => drop_data(),
        }
        0
    }
}
