// SPDX-License-Identifier: GPL-2.0

//! Work requests: the copy of a WR posted on a QP of the device that its
//! shadow ring keeps ([`keep_send`], [`keep_recv`]: the bond's keys,
//! member-independent), and the member's copy made from it, its keys
//! translated by the device's [`MrTable`] ([`Target`]). A key of another
//! member's MR never reaches the wrong HCA: the post is refused. No
//! allocation: the kept copy lives in the ring, the member's on the post
//! path's stack.

use core::{mem::size_of, ptr};

use kernel::{error::Error, ffi::c_int, prelude::*};

use super::{
    bindings,
    mr::{Lkey, Mr, MrTable},
};
use crate::policy::resume::SendOp;

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

/// The size of the container a send WR of `opcode` lies in, if the device
/// offers the opcode.
fn container_size(opcode: bindings::ib_wr_opcode) -> Option<usize> {
    Some(match opcode {
        bindings::ib_wr_opcode_IB_WR_SEND
        | bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM
        | bindings::ib_wr_opcode_IB_WR_SEND_WITH_INV
        | bindings::ib_wr_opcode_IB_WR_LOCAL_INV => size_of::<bindings::ib_send_wr>(),
        bindings::ib_wr_opcode_IB_WR_RDMA_WRITE
        | bindings::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM
        | bindings::ib_wr_opcode_IB_WR_RDMA_READ => size_of::<bindings::ib_rdma_wr>(),
        bindings::ib_wr_opcode_IB_WR_ATOMIC_CMP_AND_SWP
        | bindings::ib_wr_opcode_IB_WR_ATOMIC_FETCH_AND_ADD => size_of::<bindings::ib_atomic_wr>(),
        bindings::ib_wr_opcode_IB_WR_REG_MR => size_of::<bindings::ib_reg_wr>(),
        _ => return None,
    })
}

/// What send WR `wr` does at the peer, as resuming it on another member
/// goes ([`crate::policy::resume`]).
pub(crate) fn send_op(wr: &bindings::ib_send_wr) -> SendOp {
    if wr.send_flags & bindings::ib_send_flags_IB_SEND_INLINE != 0 {
        return SendOp::Unresumable;
    }
    match wr.opcode {
        bindings::ib_wr_opcode_IB_WR_SEND
        | bindings::ib_wr_opcode_IB_WR_SEND_WITH_IMM
        | bindings::ib_wr_opcode_IB_WR_SEND_WITH_INV
        | bindings::ib_wr_opcode_IB_WR_RDMA_WRITE_WITH_IMM => SendOp::Consuming,
        bindings::ib_wr_opcode_IB_WR_RDMA_WRITE => SendOp::Write,
        bindings::ib_wr_opcode_IB_WR_RDMA_READ => SendOp::Read,
        bindings::ib_wr_opcode_IB_WR_REG_MR | bindings::ib_wr_opcode_IB_WR_LOCAL_INV => {
            SendOp::Local
        }
        _ => SendOp::Unresumable,
    }
}

/// What kept send WR `kept` does at the peer ([`send_op`]).
pub(crate) fn kept_send_op(kept: &bindings::mrbond_rdma_send_wr) -> SendOp {
    // SAFETY: every variant of a kept WR starts with its `ib_send_wr`.
    send_op(unsafe { kept.wr.as_ref() })
}

/// The opcode of kept send WR `kept`.
pub(crate) fn kept_opcode(kept: &bindings::mrbond_rdma_send_wr) -> bindings::ib_wr_opcode {
    // SAFETY: every variant of a kept WR starts with its `ib_send_wr`.
    unsafe { kept.wr.as_ref() }.opcode
}

/// Copies the `count` SGEs at `src` into `dst`, as they are.
///
/// # Safety
///
/// `src` must point at `count` SGEs valid for the call (if `count` is not
/// 0).
unsafe fn keep_sges(
    src: *const bindings::ib_sge,
    count: c_int,
    dst: &mut [bindings::ib_sge],
) -> Result<(), Refused> {
    let count = usize::try_from(count)
        .ok()
        .filter(|&n| n <= dst.len())
        .ok_or(Refused::Invalid)?;
    if count != 0 {
        // SAFETY: as the caller guarantees, `src` has `count` SGEs; `dst`
        // has room for them, and is the ring's, not the consumer's.
        unsafe { ptr::copy_nonoverlapping(src, dst.as_mut_ptr(), count) };
    }
    Ok(())
}

/// Keeps consumer send WR `wr` in `kept` and its SGEs in `sges` (which has
/// room for as many as the QP takes), keys as they are; the pointers to the
/// consumer's chain and SGEs are not kept.
///
/// # Safety
///
/// `wr` must point at a consumer's send WR valid for the call, inside the
/// container its opcode implies (`rdma_wr()`, `atomic_wr()`, `reg_wr()`).
/// It is a pointer, not a reference: the container is read through it.
pub(crate) unsafe fn keep_send(
    wr: *const bindings::ib_send_wr,
    kept: &mut bindings::mrbond_rdma_send_wr,
    sges: &mut [bindings::ib_sge],
) -> Result<(), Refused> {
    // SAFETY: as the caller guarantees, `wr` is valid for the call.
    let one = unsafe { &*wr };
    let size = container_size(one.opcode).ok_or(Refused::Unsupported)?;
    // SAFETY: as the caller guarantees, the SGE list has `num_sge` entries.
    unsafe { keep_sges(one.sg_list, one.num_sge, sges) }?;
    // SAFETY: as the caller guarantees, `wr` lies in a container of `size`
    // bytes, which is at most the union's; the two do not overlap.
    unsafe { ptr::copy_nonoverlapping(wr.cast::<u8>(), ptr::from_mut(kept).cast::<u8>(), size) };
    // SAFETY: every variant starts with the `ib_send_wr`.
    let kept_wr = unsafe { kept.wr.as_mut() };
    kept_wr.sg_list = ptr::null_mut();
    kept_wr.next = ptr::null_mut();
    Ok(())
}

/// Keeps consumer receive WR `wr`'s SGEs in `sges` (the rest is in the
/// ring's slot).
///
/// # Safety
///
/// `wr` must be a consumer's receive WR valid for the call.
pub(crate) unsafe fn keep_recv(
    wr: &bindings::ib_recv_wr,
    sges: &mut [bindings::ib_sge],
) -> Result<(), Refused> {
    // SAFETY: as the caller guarantees, the SGE list has `num_sge` entries.
    unsafe { keep_sges(wr.sg_list, wr.num_sge, sges) }
}

impl Target<'_> {
    /// Copies SGEs `src` into `dst` with each lkey made the member's;
    /// `inline_data` SGEs are copied by the CPU and carry no key. Bit `i`
    /// of the result is set if SGE `i` uses the local DMA lkey: its
    /// address is a kernel virtual one ([`super::dma`]).
    fn sges(
        &self,
        src: &[bindings::ib_sge],
        dst: &mut [bindings::ib_sge],
        inline_data: bool,
    ) -> Result<LocalDmaSges, Refused> {
        if src.len() > dst.len() {
            return Err(Refused::Invalid);
        }
        let mut local = LocalDmaSges(0);
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

    /// Makes `out` the member's copy of kept send WR `kept` with SGEs
    /// `sges` ([`keep_send`]), with its own keys (its `wr_id` left for the
    /// caller); which SGEs use the local DMA lkey.
    ///
    /// # Safety
    ///
    /// `kept` must be a consumer's send WR kept by [`keep_send`] from a
    /// post on a QP of this target whose member QP is live.
    pub(crate) unsafe fn send(
        &self,
        kept: &bindings::mrbond_rdma_send_wr,
        sges: &[bindings::ib_sge],
        out: &mut bindings::mrbond_rdma_send,
    ) -> Result<LocalDmaSges, Refused> {
        // SAFETY: every variant starts with the `ib_send_wr`.
        let wr = unsafe { kept.wr.as_ref() };
        if wr.opcode == bindings::ib_wr_opcode_IB_WR_LOCAL_INV {
            // SEND_WITH_INV names the peer's rkey: not ours to judge.
            // SAFETY: a LOCAL_INV's `ex` is the rkey to invalidate.
            let rkey = unsafe { *wr.ex.invalidate_rkey.as_ref() };
            if self.mrs.rkey_is_other_members(self.slot, rkey) {
                return Err(Refused::WrongMember);
            }
        }
        let inline_data = wr.send_flags & bindings::ib_send_flags_IB_SEND_INLINE != 0;
        let local = self.sges(sges, &mut out.sge, inline_data)?;
        // SAFETY: plain C data, copied bit for bit; the pointers in it are
        // the consumer's MR (a REG_MR's, replaced below) or null.
        out.u = unsafe { ptr::read(kept) };
        if wr.opcode == bindings::ib_wr_opcode_IB_WR_REG_MR {
            // SAFETY: a REG_MR is kept in an `ib_reg_wr`.
            let reg = unsafe { kept.reg.as_ref() };
            // SAFETY: as the caller guarantees.
            let mmr = unsafe { self.reg_target(reg) }?;
            // SAFETY: `out` now holds a copy of the REG_MR.
            let out_reg = unsafe { out.u.reg.as_mut() };
            out_reg.mr = mmr;
            // Only the key byte is the consumer's; the index the member's.
            // SAFETY: `mmr` is live (see `reg_target`).
            out_reg.key = (unsafe { (*mmr).lkey } & !KEY_BYTE) | (reg.key & KEY_BYTE);
        }
        // SAFETY: every variant starts with the `ib_send_wr`.
        let out_wr = unsafe { out.u.wr.as_mut() };
        out_wr.sg_list = out.sge.as_mut_ptr();
        out_wr.next = ptr::null_mut();
        Ok(local)
    }

    /// Makes `out` the member's copy of a receive WR with kept SGEs
    /// `sges` ([`keep_recv`]), with its own keys (its `wr_id` left for the
    /// caller); which SGEs use the local DMA lkey.
    pub(crate) fn recv(
        &self,
        sges: &[bindings::ib_sge],
        out: &mut bindings::mrbond_rdma_recv,
    ) -> Result<LocalDmaSges, Refused> {
        let local = self.sges(sges, &mut out.sge, false)?;
        out.wr.num_sge = c_int::try_from(sges.len()).map_err(|_| Refused::Invalid)?;
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
