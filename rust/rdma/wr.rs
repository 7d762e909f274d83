// SPDX-License-Identifier: GPL-2.0

//! Work requests: the member's copy of a WR posted on a QP of the device,
//! its keys translated by the device's [`MrTable`]. A key of another
//! member's MR never reaches the wrong HCA: the post is refused. No
//! allocation: the copy and its SGEs are the post path's (on its stack).

use core::{mem::size_of, ptr};

use kernel::{error::Error, ffi::c_int, prelude::*};

use super::{
    bindings,
    mr::{Lkey, Mr, MrTable},
};

const _: () = assert!(bindings::MRBOND_RDMA_MAX_SGE <= u32::BITS);

/// The key byte of an lkey or rkey: the consumer's; the rest is the index.
const KEY_BYTE: u32 = 0xff;

/// Why a WR cannot go to the member.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// A key of another member's MR, or of an orphan: counted.
    WrongMember,
    /// A key the device does not know, or a malformed WR.
    Invalid,
    /// An opcode the device does not offer.
    Unsupported,
}

impl From<Refused> for Error {
    fn from(r: Refused) -> Self {
        match r {
            Refused::WrongMember => EXDEV,
            Refused::Invalid => EINVAL,
            Refused::Unsupported => super::eopnotsupp(),
        }
    }
}

/// Where a member WR goes: the member slot of the QP it is posted on, and
/// what its keys become there.
pub(crate) struct Target<'a> {
    /// The device's MRs.
    pub(crate) mrs: &'a MrTable,
    /// The device the WR was posted to: a REG_MR names an MR of it.
    pub(crate) dev: *const bindings::ib_device,
    /// The member slot of the QP.
    pub(crate) slot: usize,
    /// The `local_dma_lkey` of the QP's member PD.
    pub(crate) local_dma_lkey: u32,
}

impl Target<'_> {
    /// Copies the `count` SGEs at `src` into `dst` with each lkey made the
    /// member's; `inline_data` SGEs are copied by the CPU and carry no key.
    /// Bit `i` of the result is set if SGE `i` uses the local DMA lkey: its
    /// address is a kernel virtual one ([`super::dma`]).
    ///
    /// # Safety
    ///
    /// `src` must point at `count` SGEs valid for the call (if `count` is
    /// not 0).
    unsafe fn sges(
        &self,
        src: *const bindings::ib_sge,
        count: c_int,
        dst: &mut [bindings::ib_sge],
        inline_data: bool,
    ) -> Result<LocalDmaSges, Refused> {
        let count = usize::try_from(count)
            .ok()
            .filter(|&n| n <= dst.len())
            .ok_or(Refused::Invalid)?;
        let mut local = LocalDmaSges(0);
        if count == 0 {
            return Ok(local);
        }
        // SAFETY: as the caller guarantees.
        let src = unsafe { core::slice::from_raw_parts(src, count) };
        for (i, (to, from)) in dst.iter_mut().zip(src).enumerate() {
            to.addr = from.addr;
            to.length = from.length;
            to.lkey = if inline_data {
                from.lkey
            } else {
                match self.mrs.lkey(self.slot, from.lkey) {
                    Lkey::Member(key) => key,
                    Lkey::LocalDma => {
                        // `i` < MAX_SGE <= 32: the bit exists.
                        let bit = u32::try_from(i).ok().and_then(|i| 1u32.checked_shl(i));
                        local.0 |= bit.unwrap_or(0);
                        self.local_dma_lkey
                    }
                    Lkey::WrongMember => return Err(Refused::WrongMember),
                    Lkey::Unknown => return Err(Refused::Invalid),
                }
            };
        }
        Ok(local)
    }

    /// The member MR that a REG_MR `reg` registers, set up for it.
    ///
    /// # Safety
    ///
    /// `reg` must be a consumer's REG_MR, valid for the call, on a QP of
    /// this target whose member QP is live (which keeps the member's MRs).
    unsafe fn reg_target(
        &self,
        reg: &bindings::ib_reg_wr,
    ) -> Result<*mut bindings::ib_mr, Refused> {
        let ibmr = reg.mr;
        // SAFETY: a REG_MR names an MR the consumer holds for the call.
        if ibmr.is_null() || unsafe { (*ibmr).device }.cast_const() != self.dev {
            return Err(Refused::Invalid);
        }
        // SAFETY: an MR of this device, whose MRs are `Mr`s, live while
        // the consumer posts it.
        let mr = unsafe { Mr::from_raw(ibmr) };
        let mmr = mr
            .member_mr_on(self.slot)
            .ok_or(Refused::WrongMember)?
            .as_ptr();
        // SAFETY: the member MR lives while its member QP does, as the
        // caller guarantees; the consumer owns both MRs' registration
        // state until the REG_MR completes. The consumer may move the
        // window after `map_mr_sg` (rpcrdma sets `iova`): the member reads
        // its own MR's at the post.
        unsafe {
            (*mmr).iova = (*ibmr).iova;
            (*mmr).length = (*ibmr).length;
            (*mmr).page_size = (*ibmr).page_size;
        }
        Ok(mmr)
    }

    /// Makes `out` the member's copy of send WR `wr`, with its own SGEs
    /// (its `wr_id` left for the caller); which of them use the local DMA
    /// lkey.
    ///
    /// # Safety
    ///
    /// `wr` must point at a consumer's send WR valid for the call, inside
    /// the container its opcode implies (`rdma_wr()`, `atomic_wr()`,
    /// `reg_wr()`), posted on a QP of this target whose member QP is live.
    /// It is a pointer, not a reference: the container is read through it.
    pub(crate) unsafe fn send(
        &self,
        wr: *const bindings::ib_send_wr,
        out: &mut bindings::mrbond_rdma_send,
    ) -> Result<LocalDmaSges, Refused> {
        let from = wr.cast::<u8>();
        // SAFETY: as the caller guarantees, `wr` is valid for the call.
        let wr = unsafe { &*wr };
        let size = match wr.opcode {
            // SEND_WITH_INV names the peer's rkey: not ours to judge.
            bindings::ib_wr_opcode_IB_WR_SEND
            | bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM
            | bindings::ib_wr_opcode_IB_WR_SEND_WITH_INV => size_of::<bindings::ib_send_wr>(),
            bindings::ib_wr_opcode_IB_WR_RDMA_WRITE
            | bindings::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM
            | bindings::ib_wr_opcode_IB_WR_RDMA_READ => size_of::<bindings::ib_rdma_wr>(),
            bindings::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP
            | bindings::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD => {
                size_of::<bindings::ib_atomic_wr>()
            }
            bindings::ib_wr_opcode_IB_WR_LOCAL_INV => {
                // SAFETY: a LOCAL_INV's `ex` is the rkey to invalidate.
                let rkey = unsafe { *wr.ex.invalidate_rkey.as_ref() };
                if self.mrs.rkey_is_other_members(self.slot, rkey) {
                    return Err(Refused::WrongMember);
                }
                size_of::<bindings::ib_send_wr>()
            }
            bindings::ib_wr_opcode_IB_WR_REG_MR => size_of::<bindings::ib_reg_wr>(),
            _ => return Err(Refused::Unsupported),
        };
        let inline_data = wr.send_flags & bindings::ib_send_flags_IB_SEND_INLINE != 0;
        // SAFETY: the consumer's `sg_list` has `num_sge` entries.
        let local = unsafe { self.sges(wr.sg_list, wr.num_sge, &mut out.sge, inline_data) }?;
        let copy = &mut out.__bindgen_anon_1;
        // SAFETY: as the caller guarantees, `wr` lies in a container of
        // `size` bytes, which is at most the union's; the two do not
        // overlap.
        unsafe { ptr::copy_nonoverlapping(from, ptr::from_mut(copy).cast::<u8>(), size) };
        if wr.opcode == bindings::ib_wr_opcode_IB_WR_REG_MR {
            // SAFETY: a REG_MR lies in an `ib_reg_wr`, as the caller
            // guarantees.
            let reg = unsafe { &*from.cast::<bindings::ib_reg_wr>() };
            // SAFETY: as the caller guarantees.
            let mmr = unsafe { self.reg_target(reg) }?;
            // SAFETY: `out` now holds a copy of the REG_MR.
            let out_reg = unsafe { copy.reg.as_mut() };
            out_reg.mr = mmr;
            // Only the key byte is the consumer's; the index the member's.
            // SAFETY: `mmr` is live (see `reg_target`).
            out_reg.key = (unsafe { (*mmr).lkey } & !KEY_BYTE) | (reg.key & KEY_BYTE);
        }
        // SAFETY: every variant starts with the `ib_send_wr`.
        let out_wr = unsafe { copy.wr.as_mut() };
        out_wr.sg_list = out.sge.as_mut_ptr();
        out_wr.next = ptr::null_mut();
        Ok(local)
    }

    /// Makes `out` the member's copy of receive WR `wr`, with its own SGEs
    /// (its `wr_id` left for the caller); which of them use the local DMA
    /// lkey.
    ///
    /// # Safety
    ///
    /// `wr` must be a consumer's receive WR valid for the call.
    pub(crate) unsafe fn recv(
        &self,
        wr: &bindings::ib_recv_wr,
        out: &mut bindings::mrbond_rdma_recv,
    ) -> Result<LocalDmaSges, Refused> {
        // SAFETY: the consumer's `sg_list` has `num_sge` entries.
        let local = unsafe { self.sges(wr.sg_list, wr.num_sge, &mut out.sge, false) }?;
        // SAFETY: both are `ib_recv_wr`s, `wr` valid for reads and `out`
        // for writes; they do not overlap.
        unsafe { ptr::copy_nonoverlapping(wr, &mut out.wr, 1) };
        out.wr.sg_list = out.sge.as_mut_ptr();
        out.wr.next = ptr::null_mut();
        Ok(local)
    }
}

/// Which SGEs of a member WR use the local DMA lkey: bit `i` for SGE `i`.
#[derive(Clone, Copy, Default)]
pub(crate) struct LocalDmaSges(u32);

impl LocalDmaSges {
    /// Whether SGE `i` uses the local DMA lkey.
    pub(crate) fn contains(self, i: usize) -> bool {
        u32::try_from(i)
            .ok()
            .and_then(|i| self.0.checked_shr(i))
            .is_some_and(|bits| bits & 1 != 0)
    }
}
