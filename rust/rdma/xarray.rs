// SPDX-License-Identifier: GPL-2.0

//! XArrays of borrowed objects, which 6.12's kernel crate lacks: the data
//! path finds its QPs (by id) and MRs (by key) in one without a lock, while
//! their owners file and unfile them. An entry is a pointer the array does
//! not own: how long the object it names lives is the owner's to say, at
//! each [`XArray::load`].

use core::{marker::PhantomData, ptr::NonNull};

use kernel::{ffi::c_ulong, prelude::*, types::Opaque};

use super::bindings;

/// An XArray index from a `u32`: `unsigned long` holds every `u32` on
/// every target the kernel supports.
fn index(i: u32) -> c_ulong {
    i as c_ulong
}

/// An XArray of pointers to `T`, indexed by `u32`.
///
/// # Invariants
///
/// `xa` is initialised (with `XA_FLAGS_ALLOC` when made by
/// [`XArray::new_allocating`]); every entry is a `NonNull<T>` filed by one
/// of the methods below, or reserved (null to a load).
#[pin_data(PinnedDrop)]
pub(crate) struct XArray<T> {
    #[pin]
    xa: Opaque<kernel::bindings::xarray>,
    /// The next index [`XArray::reserve_cyclic`] tries; written only under
    /// the XArray's own lock (by `__xa_alloc_cyclic`).
    next: Opaque<u32>,
    _entries: PhantomData<NonNull<T>>,
}

// SAFETY: the XArray takes its own lock for changes and is read under RCU
// from any thread. It never dereferences its entries: whoever does, at an
// unsafe `as_ref` of a loaded pointer, answers for sharing the object.
unsafe impl<T> Send for XArray<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for XArray<T> {}

impl<T> XArray<T> {
    fn init(alloc: bool) -> impl PinInit<Self> {
        pin_init!(Self {
            // INVARIANT: initialised here.
            // SAFETY: `p` is the XArray's place, valid for writes.
            xa <- Opaque::ffi_init(|p| unsafe { bindings::mrbond_rdma_xa_init(p, alloc) }),
            next: Opaque::new(1),
            _entries: PhantomData,
        })
    }

    /// An empty array whose entries are filed at indexes the caller picks.
    pub(crate) fn new() -> impl PinInit<Self> {
        Self::init(false)
    }

    /// An empty array that picks free indexes ([`XArray::alloc`],
    /// [`XArray::reserve_cyclic`]).
    pub(crate) fn new_allocating() -> impl PinInit<Self> {
        Self::init(true)
    }

    /// The entry at `i`. Any context; takes no lock. The pointer is valid
    /// for as long as the entry's owner says.
    #[inline]
    pub(crate) fn load(&self, i: u32) -> Option<NonNull<T>> {
        // SAFETY: by the type invariant the XArray is initialised;
        // `xa_load` takes the RCU read lock itself.
        let entry = unsafe { kernel::bindings::xa_load(self.xa.get(), index(i)) };
        NonNull::new(entry.cast())
    }

    /// Files `entry` at a free index in `min..=max` and returns it. May
    /// sleep (allocates).
    pub(crate) fn alloc(&self, entry: NonNull<T>, min: u32, max: u32) -> Result<u32> {
        let mut i = 0u32;
        // SAFETY: the XArray is initialised (allocating: the caller's
        // mistake otherwise is an error, not memory unsafety); `i` is
        // valid for writes.
        let ret = unsafe {
            bindings::mrbond_rdma_xa_alloc(self.xa.get(), &mut i, entry.as_ptr().cast(), min, max)
        };
        kernel::error::to_result(ret).map(|()| i)
    }

    /// Files `entry` at `i`, which must be free (`EBUSY` otherwise). May
    /// sleep (allocates).
    pub(crate) fn insert(&self, i: u32, entry: NonNull<T>) -> Result {
        // SAFETY: the XArray is initialised.
        let ret = unsafe {
            bindings::mrbond_rdma_xa_insert(self.xa.get(), index(i), entry.as_ptr().cast())
        };
        kernel::error::to_result(ret)
    }

    /// Reserves a free index in `min..=max`, the one after the last
    /// reserved if it can, so that a stale index names nothing new for a
    /// long while. Loads find nothing there until [`XArray::store_reserved`]
    /// fills it. May sleep (allocates).
    pub(crate) fn reserve_cyclic(&self, min: u32, max: u32) -> Result<u32> {
        let mut i = 0u32;
        // SAFETY: the XArray is initialised; `i` and `next` are valid.
        let ret = unsafe {
            bindings::mrbond_rdma_xa_alloc_cyclic(self.xa.get(), &mut i, min, max, self.next.get())
        };
        kernel::error::to_result(ret).map(|()| i)
    }

    /// Fills index `i`, reserved by [`XArray::reserve_cyclic`]: that needs
    /// no allocation, so it cannot fail.
    pub(crate) fn store_reserved(&self, i: u32, entry: NonNull<T>) {
        // SAFETY: the XArray is initialised.
        unsafe { bindings::mrbond_rdma_xa_store(self.xa.get(), i, entry.as_ptr().cast()) };
    }

    /// Unfiles the entry (or reservation) at `i`. Concurrent loads may
    /// still return it: the owner frees the object only once they are
    /// done (after a grace period, or behind a lock they hold).
    pub(crate) fn erase(&self, i: u32) {
        // SAFETY: the XArray is initialised; `xa_erase` takes its lock.
        unsafe { kernel::bindings::xa_erase(self.xa.get(), index(i)) };
    }

    /// Every entry, by rising index. Entries filed or unfiled meanwhile may
    /// or may not be seen: the caller excludes that if it matters.
    pub(crate) fn entries(&self) -> impl Iterator<Item = NonNull<T>> + '_ {
        let mut i: c_ulong = 0;
        let mut after = false;
        core::iter::from_fn(move || {
            // SAFETY: the XArray is initialised; `i` is valid.
            let entry = unsafe { bindings::mrbond_rdma_xa_find(self.xa.get(), &mut i, after) };
            after = true;
            NonNull::new(entry.cast())
        })
    }
}

#[pinned_drop]
impl<T> PinnedDrop for XArray<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: initialised by `new`; the entries are not the array's
        // to free.
        unsafe { kernel::bindings::xa_destroy(self.xa.get()) };
    }
}
