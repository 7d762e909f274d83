// SPDX-License-Identifier: GPL-2.0

//! The pages of an FRWR MR bound to a member that needs DMA mapping.
//!
//! The consumer maps its pages with the device, whose DMA addresses are
//! kernel virtual ones, and hands the list to `map_mr_sg`. The member
//! must register its own DMA addresses instead: the pages are copied into
//! the MR's own list, mapped on the member both ways (the peer may read
//! or write them), and that list is what the member MR maps. The mapping
//! lasts until the member is done with the registration: the MR mapped
//! again, its invalidation (a LOCAL_INV that completed, or a RECV that
//! invalidated it), its deregistration, or its member's departure. Only
//! then is it undone, which copies what the peer wrote back from a bounce
//! buffer before the consumer, done waiting for the invalidation, reads
//! it.

use core::ptr::NonNull;

use kernel::{ffi::c_int, ffi::c_uint, prelude::*};

use super::{bindings, dma::MemberDma};

/// An MR's own list of its pages, and their mapping on the member.
///
/// # Invariants
///
/// `sgl` is a list of `max` entries this value owns. While `mapped` is
/// not 0, its first `mapped` entries are mapped on `dma`'s device.
pub(crate) struct MrPages {
    sgl: NonNull<kernel::bindings::scatterlist>,
    max: u32,
    dma: MemberDma,
    mapped: c_int,
}

// SAFETY: the list is plain memory this value owns; its mapping may be
// undone from any thread.
unsafe impl Send for MrPages {}

impl MrPages {
    /// The list of an MR of up to `max` pages on `dma`'s device. Process
    /// context.
    pub(super) fn new(dma: MemberDma, max: u32) -> Result<Self> {
        // SAFETY: allocates and initialises a list; no pointer is kept.
        let sgl = NonNull::new(unsafe { bindings::mrbond_rdma_sg_alloc(max) }).ok_or(ENOMEM)?;
        // INVARIANT: just allocated, mapped nowhere.
        Ok(Self {
            sgl,
            max,
            dma,
            mapped: 0,
        })
    }

    /// Maps the consumer's list `sg` of `nents` entries on the member and
    /// registers it in member MR `mmr` (`ib_map_mr_sg()` with `sg_offset`
    /// and `page_size`); what that returns for the consumer's list: all of
    /// it, or a negative errno (a partial map is undone, and refused as
    /// the FRWR ULPs treat it anyway). A previous mapping is undone first:
    /// a consumer maps an MR again only once its registration is over.
    /// Any context.
    ///
    /// # Safety
    ///
    /// `mmr` must be a live MR of the member this list maps on, not in use
    /// by a registration; `sg` a consumer's list of at least `nents`
    /// entries with their pages, and `sg_offset` null or valid, for the
    /// call.
    pub(super) unsafe fn map(
        &mut self,
        mmr: *mut bindings::ib_mr,
        sg: *mut kernel::bindings::scatterlist,
        nents: c_int,
        sg_offset: *mut c_uint,
        page_size: c_uint,
    ) -> c_int {
        self.unmap();
        // SAFETY: by the type invariant `sgl` has `max` entries; `sg` as
        // the caller guarantees.
        let n = unsafe { bindings::mrbond_rdma_sg_copy(self.sgl.as_ptr(), self.max, sg, nents) };
        if n <= 0 {
            return EINVAL.to_errno();
        }
        // SAFETY: the first `n` entries have their pages, and are mapped
        // nowhere (undone above).
        let mapped = unsafe { self.dma.map_sg(self.sgl, n) };
        if mapped <= 0 {
            return ENOMEM.to_errno();
        }
        // INVARIANT: the first `n` entries are mapped on the device.
        self.mapped = n;
        // SAFETY: `mmr` as the caller guarantees; the list's first `mapped`
        // entries carry the member's DMA addresses.
        let done =
            unsafe { bindings::ib_map_mr_sg(mmr, self.sgl.as_ptr(), mapped, sg_offset, page_size) };
        if done != mapped {
            self.unmap();
            return if done < 0 { done } else { EINVAL.to_errno() };
        }
        nents
    }

    /// Undoes the mapping, if any, once the member is done with it. Any
    /// context.
    pub(super) fn unmap(&mut self) {
        if self.mapped <= 0 {
            return;
        }
        // SAFETY: by the type invariant the first `mapped` entries are
        // mapped on the device; the callers undo it only when the member
        // is done with the registration.
        unsafe { self.dma.unmap_sg(self.sgl, self.mapped) };
        // INVARIANT: mapped nowhere now.
        self.mapped = 0;
    }

    /// Undoes the mapping and frees the list. Process context.
    pub(super) fn free(mut self) {
        self.unmap();
        // SAFETY: by the type invariant the list is this value's, mapped
        // nowhere now; nothing uses it after this.
        unsafe { bindings::mrbond_rdma_sg_free(self.sgl.as_ptr()) };
    }
}
