// SPDX-License-Identifier: GPL-2.0

//! What an RC QP of a device holds of the C GSI proxy
//! (`verbs/mrbond_verbs_gsi.c`) until the proxy moves: its record of the
//! connection exchange that speaks for it ([`CmRecord`]), which a member's
//! departure ends.

use core::{ffi::c_void, ptr::NonNull};

use kernel::prelude::*;

use super::{bindings, device::ObjectsGuard};

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
