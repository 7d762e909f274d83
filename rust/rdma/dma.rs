// SPDX-License-Identifier: GPL-2.0

//! Buffers mapped for a member that needs DMA mapping (a PCI HCA, or the
//! `rdma_rxe_dma` test double).
//!
//! The device has no DMA device, so the addresses a consumer hands it (the
//! SGEs of its local DMA lkey) are kernel virtual ones, and the consumer's
//! own `ib_dma_map_*`, `sync` and `unmap` calls on the device are no-ops the
//! device cannot hook. A member with a DMA device must be given DMA
//! addresses of its own: the data path maps each such SGE on the member at
//! the post, in the direction the opcode implies, and unmaps it (copying a
//! bounce buffer back, for data the member wrote) when the WR retires,
//! before the consumer sees its completion, or after the member QP is
//! destroyed. No allocation: the mappings live in the QP's rings. The pages
//! of an FRWR MR are mapped the same way, at `map_mr_sg`
//! ([`super::mr_pages`]).

use core::ptr::NonNull;

use kernel::{error::to_result, ffi::c_int, prelude::*};

use super::bindings;

/// One SGE's mapping on a member; `len == 0` maps nothing.
#[derive(Clone, Copy, Default)]
pub(crate) struct DmaMap {
    dma: u64,
    len: u32,
    to_device: bool,
}

/// A member device that needs its buffers DMA-mapped, as a QP's data path
/// holds it.
///
/// # Invariants
///
/// `0` is a registered device that stays registered while a [`DmaMap`] or
/// a list made through the handle is not unmapped: the member slot holds
/// the device until its detach has destroyed the member QPs and MRs and
/// unmapped what their rings and pages held.
#[derive(Clone, Copy)]
pub(crate) struct MemberDma(NonNull<bindings::ib_device>);

// SAFETY: a registered device may map from any thread and context.
unsafe impl Send for MemberDma {}
// SAFETY: as above.
unsafe impl Sync for MemberDma {}

impl MemberDma {
    /// The mapping handle of member device `dev`.
    ///
    /// # Safety
    ///
    /// `dev` must stay registered until every mapping made through the
    /// handle is unmapped.
    pub(super) unsafe fn new(dev: NonNull<bindings::ib_device>) -> Self {
        // INVARIANT: as the caller guarantees.
        Self(dev)
    }

    /// Maps the `len` bytes at kernel virtual address `kva` for the member
    /// to read (`to_device`) or write; the member's DMA address. Any
    /// context.
    pub(super) fn map(&self, kva: u64, len: u32, to_device: bool) -> Result<DmaMap> {
        let mut dma = 0u64;
        // SAFETY: by the type invariant the device is registered; the
        // helper refuses an address outside the linear map.
        to_result(unsafe {
            bindings::mrbond_rdma_dma_map(self.0.as_ptr(), kva, len, to_device, &mut dma)
        })?;
        Ok(DmaMap {
            dma,
            len,
            to_device,
        })
    }

    /// Unmaps `map` and leaves it empty; an empty one is left alone. For
    /// data the member wrote, only after the member is done with it: its
    /// WR retired, or its QP destroyed. Any context.
    pub(super) fn unmap(&self, map: &mut DmaMap) {
        let m = core::mem::take(map);
        if m.len == 0 {
            return;
        }
        // SAFETY: by the type invariant the device is registered; `m` is a
        // live mapping made on it, unmapped once (taken out above).
        unsafe { bindings::mrbond_rdma_dma_unmap(self.0.as_ptr(), m.dma, m.len, m.to_device) };
    }
}

impl MemberDma {
    /// Maps the `nents` entries of `sgl` on the member, both ways; the
    /// entries the member's DMA addresses take (an IOMMU may merge
    /// some), 0 if the mapping failed. Any context.
    ///
    /// # Safety
    ///
    /// `sgl` must be a list of `nents` entries with their pages set, not
    /// mapped, valid until [`MemberDma::unmap_sg`].
    pub(super) unsafe fn map_sg(
        &self,
        sgl: NonNull<kernel::bindings::scatterlist>,
        nents: c_int,
    ) -> c_int {
        // SAFETY: by the type invariant the device is registered; the
        // list as the caller guarantees.
        unsafe { bindings::mrbond_rdma_dma_map_sg(self.0.as_ptr(), sgl.as_ptr(), nents) }
    }

    /// Undoes [`MemberDma::map_sg`] of `sgl` with the `nents` it was given.
    /// Any context.
    ///
    /// # Safety
    ///
    /// `sgl` must be mapped on this device by `map_sg` with `nents`, and
    /// the member done with it (its MR invalidated or deregistered).
    pub(super) unsafe fn unmap_sg(
        &self,
        sgl: NonNull<kernel::bindings::scatterlist>,
        nents: c_int,
    ) {
        // SAFETY: by the type invariant the device is registered; the
        // mapping as the caller guarantees.
        unsafe { bindings::mrbond_rdma_dma_unmap_sg(self.0.as_ptr(), sgl.as_ptr(), nents) }
    }
}

impl DmaMap {
    /// The member's DMA address of the buffer.
    pub(super) fn dma(&self) -> u64 {
        self.dma
    }
}
