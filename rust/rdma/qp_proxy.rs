// SPDX-License-Identifier: GPL-2.0

//! What a QP of a device holds of the C GSI proxy
//! (`verbs/mrbond_verbs_gsi.c`) until the proxy moves: QP1 itself
//! ([`GsiQp`]), and an RC QP's record of the connection exchange that
//! speaks for it ([`CmRecord`]), which a member's departure ends.

use core::{ffi::c_void, ptr::NonNull, sync::atomic::AtomicU32};

use kernel::{error::from_err_ptr, prelude::*};

use super::{bindings, device::ObjectsGuard};

/// The GSI proxy's QP1 of a port (`struct mrbond_gsi_qp`, C's), freed when
/// dropped.
///
/// # Invariants
///
/// `ptr` is a live QP1 of the proxy, created for this QP.
pub(super) struct GsiQp {
    pub(super) ptr: NonNull<c_void>,
    /// The state ib_mad last set: QP1 has no wire state of its own.
    pub(super) state: AtomicU32,
}

// SAFETY: the proxy's QP1 may be posted to from any thread, and is freed
// once, by the owner of this handle.
unsafe impl Send for GsiQp {}
// SAFETY: as above; the proxy locks what its posts share.
unsafe impl Sync for GsiQp {}

impl GsiQp {
    /// The proxy's QP1 for QP `ibqp` (whose number it sets to 1).
    ///
    /// # Safety
    ///
    /// `ibqp` and `init` must be those of a `create_qp` of a device of this
    /// module, valid for the call; the QP outlives the handle.
    pub(super) unsafe fn new(
        ibqp: *mut bindings::ib_qp,
        init: *const bindings::ib_qp_init_attr,
    ) -> Result<Self> {
        // SAFETY: as the caller guarantees.
        let gsi = from_err_ptr(unsafe { bindings::mrbond_rdma_vdev_gsi_create(ibqp, init) })?;
        // INVARIANT: just created for this QP.
        Ok(Self {
            ptr: NonNull::new(gsi).ok_or(ENOMEM)?,
            state: AtomicU32::new(bindings::ib_qp_state_IB_QPS_RESET),
        })
    }
}

impl Drop for GsiQp {
    fn drop(&mut self) {
        // SAFETY: by the type invariant the QP1 is live; nothing uses it
        // after this.
        unsafe { bindings::mrbond_rdma_vdev_gsi_destroy(self.ptr.as_ptr()) };
    }
}

/// What the GSI proxy records of an RC QP (`struct mrbond_qp_cm`, C's): its
/// member and the connection exchange that speaks for it.
///
/// # Invariants
///
/// `0` is a live record the proxy allocated for one QP, freed only by
/// [`CmRecord::free`].
pub(crate) struct CmRecord(NonNull<c_void>);

// SAFETY: the record is read and written by the proxy under the device's
// objects lock only; this handle only passes the pointer.
unsafe impl Send for CmRecord {}
// SAFETY: as above.
unsafe impl Sync for CmRecord {}

impl CmRecord {
    pub(super) fn new(ibqp: *mut bindings::ib_qp, slot: u32) -> Result<Self> {
        // SAFETY: an allocation that keeps `ibqp` only to name the QP.
        let record = unsafe { bindings::mrbond_rdma_vdev_qp_cm_new(ibqp, slot) };
        // INVARIANT: just allocated.
        Ok(Self(NonNull::new(record).ok_or(ENOMEM)?))
    }

    /// The record's address, by which the proxy finds it (the driver's QPN
    /// table hands it out).
    pub(crate) fn as_raw(&self) -> *mut c_void {
        self.0.as_ptr()
    }

    /// Frees the record; whether a REJ of the device ended its exchange.
    /// Under the device's objects lock.
    pub(super) fn free(self, _objects: &ObjectsGuard<'_>) -> bool {
        // SAFETY: by the type invariant the record is live; consumed here.
        unsafe { bindings::mrbond_rdma_vdev_qp_cm_free(self.0.as_ptr()) }
    }
}
