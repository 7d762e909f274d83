// SPDX-License-Identifier: GPL-2.0

//! Address handles: the object the core allocates for an AH of a device
//! whose AH verbs are Rust's ([`Ah`]). The device has no hardware to load
//! an address into: an AH keeps its attributes for the sender to read at
//! send time (the GSI proxy, which sends through a member).

use core::{
    mem::{align_of, size_of},
    ptr,
};

use kernel::{ffi::c_int, types::Opaque};

use super::{
    bindings,
    device::{Adapter, DeviceOps},
};

/// The object the core allocates for an AH (`size_ib_ah` bytes, zeroed):
/// the core's `ib_ah` first, as `INIT_RDMA_OBJ_SIZE` requires, then its
/// attributes.
///
/// # Invariants
///
/// A `&Ah` exists only for an AH whose `create_ah` copied its attributes
/// into `attr` and that the core has not freed; the source GID entry they
/// name is held by the core (`ib_ah.sgid_attr`) for as long.
#[repr(C)]
pub(crate) struct Ah {
    ibah: Opaque<bindings::ib_ah>,
    attr: Opaque<bindings::rdma_ah_attr>,
}

impl Ah {
    /// The AH whose `ib_ah` is at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` must be the `ib_ah` of an `Ah` of a device whose table is
    /// built from a [`DeviceOps`], after its `create_ah` succeeded and
    /// before its `destroy_ah`, for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_ah) -> &'a Self {
        // CAST: `Ah` is `repr(C)` with the `ib_ah` at offset 0.
        // INVARIANT: guaranteed by the caller.
        // SAFETY: the caller guarantees the object is live for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    /// The attributes the AH was created with, for the C sender to copy.
    pub(crate) fn attr(&self) -> *const bindings::rdma_ah_attr {
        self.attr.get()
    }
}

impl<T: DeviceOps> Adapter<T> {
    /// `size_ib_ah`: the core allocates an [`Ah`] for every AH.
    pub(super) const AH_SIZE: usize = {
        // `kzalloc()` aligns to `ARCH_KMALLOC_MINALIGN` (at least 8).
        assert!(align_of::<Ah>() <= 8);
        size_of::<Ah>()
    };

    /// Keeps a RoCE address for its sender; refuses user AHs. Any context:
    /// ib_cm creates AHs under spinlocks.
    ///
    /// # Safety
    ///
    /// Called by the RDMA core with a zeroed [`Ah`] of `AH_SIZE` bytes and
    /// `init` of this call.
    pub(super) unsafe extern "C" fn create_ah(
        ibah: *mut bindings::ib_ah,
        init: *mut bindings::rdma_ah_init_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        // SAFETY: `init` and its attributes are the core's, valid for the
        // call.
        let (attr, kind) = unsafe { ((*init).ah_attr, (*(*init).ah_attr).type_) };
        if !udata.is_null() || kind != bindings::rdma_ah_attr_type_RDMA_AH_ATTR_TYPE_ROCE {
            return super::eopnotsupp().to_errno();
        }
        let raw = ibah.cast::<Ah>();
        // INVARIANT: the attributes are copied; the core holds their GID
        // entry in the AH until it frees it.
        // SAFETY: the object is an `Ah`, ours during the call; `attr` is
        // valid for reads and does not overlap it.
        unsafe { ptr::copy_nonoverlapping(attr, (*raw).attr.get(), 1) };
        0
    }

    /// Nothing to undo: the core drops the GID entry and frees the object.
    ///
    /// # Safety
    ///
    /// Called by the RDMA core.
    pub(super) unsafe extern "C" fn destroy_ah(_ibah: *mut bindings::ib_ah, _flags: u32) -> c_int {
        0
    }
}
