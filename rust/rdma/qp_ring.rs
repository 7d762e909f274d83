// SPDX-License-Identifier: GPL-2.0

//! A QP's shadow ring of one queue: every WR posted and not yet completed,
//! oldest (`tail`) to newest (`head - 1`), with what its flush completes
//! and, member-independent, the WR itself: the consumer's copy with the
//! bond's keys ([`super::wr::keep_send`]), its SGEs in storage sized at
//! creation. A member's copy is made from the kept one at the post
//! ([`super::wr::Target`]); transparent failover (issue 17) makes it again
//! on another member, from the same copy, for the WRs the peer did not
//! execute ([`crate::policy::resume`]).

use kernel::{ffi::c_int, prelude::*};

use super::{
    bindings,
    cq::{Cq, Wc},
    dma::{DmaMap, MemberDma},
    qp_path::MemberCounters,
};

/// The SGEs a WR may have: as many as the member's copy has room for.
const MAX_SGE: usize = bindings::MRBOND_RDMA_MAX_SGE as usize;

/// One entry of a shadow ring: what the member WR stands for.
#[derive(Clone, Copy, Default)]
pub(super) struct WrSlot {
    /// The consumer's.
    pub(super) wr_id: u64,
    /// The `ib_wc_opcode` of the WR's flush completion.
    pub(super) opcode: bindings::ib_wc_opcode,
    /// A LOCAL_INV's rkey: its success ends that MR's registration.
    pub(super) invalidates: Option<u32>,
    /// The consumer asked for its completion (a receive always does): a
    /// success a move makes is given only then.
    pub(super) signaled: bool,
    /// The SGEs kept. (A send's effect at the peer and its consuming count
    /// follow from the kept WRs: [`super::wr::send_op`], counted back from
    /// the path's total.)
    pub(super) num_sge: u8,
}

/// The WRs of one queue, oldest (`tail`) to newest (`head - 1`).
pub(super) struct Ring {
    /// A power of two entries, more than the queue's WRs.
    slots: KVVec<WrSlot>,
    /// A send queue's kept WRs, one per entry; empty for a receive queue.
    kept_wrs: KVVec<bindings::mrbond_rdma_send_wr>,
    /// `sges` kept SGEs per entry, in entry order.
    kept_sges: KVVec<bindings::ib_sge>,
    /// `sges` mappings per entry, in entry order, on a member that needs
    /// DMA mapping; empty otherwise.
    maps: KVVec<DmaMap>,
    /// SGEs per entry: the queue's, at most [`MAX_SGE`].
    sges: usize,
    pub(super) head: u64,
    pub(super) tail: u64,
    /// The first WR not posted to the current member QP: `head`, but for
    /// the WRs a move holds ([`super::qp_path`]'s `Moving`).
    pub(super) sent: u64,
    /// The generation of the member QP the ring posts to
    /// ([`crate::policy::wrid`]).
    pub(super) generation: bool,
}

/// `n` default (zeroed) C structs, which bindgen does not make `Clone`.
fn filled<T: Default>(n: usize) -> Result<KVVec<T>> {
    let mut v = KVVec::with_capacity(n, GFP_KERNEL)?;
    for _ in 0..n {
        v.push(T::default(), GFP_KERNEL)?;
    }
    Ok(v)
}

impl Ring {
    /// A ring for `wrs` WRs of up to `sges` SGEs each, keeping send WRs
    /// if `send`, mapped if `dma`.
    pub(super) fn new(wrs: u32, sges: u32, send: bool, dma: bool) -> Result<Self> {
        let size = usize::try_from(wrs)?
            .checked_add(1)
            .and_then(usize::checked_next_power_of_two)
            .ok_or(EINVAL)?;
        let sges = usize::try_from(sges)?.min(MAX_SGE);
        let per_ring = size.checked_mul(sges).ok_or(EINVAL)?;
        Ok(Self {
            slots: KVVec::from_elem(WrSlot::default(), size, GFP_KERNEL)?,
            kept_wrs: filled(if send { size } else { 0 })?,
            kept_sges: filled(per_ring)?,
            maps: KVVec::from_elem(
                DmaMap::default(),
                if dma { per_ring } else { 0 },
                GFP_KERNEL,
            )?,
            sges,
            head: 0,
            tail: 0,
            sent: 0,
            generation: false,
        })
    }

    fn index(&self, seq: u64) -> Option<usize> {
        // The length is a power of two: the mask picks the entry.
        let mask = self.slots.len().wrapping_sub(1);
        Some(usize::try_from(seq).ok()? & mask)
    }

    pub(super) fn slot(&mut self, seq: u64) -> Option<&mut WrSlot> {
        let i = self.index(seq)?;
        self.slots.get_mut(i)
    }

    /// The range of the entry of `seq` in the per-SGE arrays.
    fn sge_range(&self, seq: u64) -> Option<core::ops::Range<usize>> {
        let start = self.index(seq)?.checked_mul(self.sges)?;
        Some(start..start.checked_add(self.sges)?)
    }

    /// The mappings of the entry of `seq`: empty without DMA mapping
    /// (`maps` is empty then, and holds no entry's range).
    pub(super) fn maps(&mut self, seq: u64) -> &mut [DmaMap] {
        match self.sge_range(seq) {
            Some(r) => self.maps.get_mut(r).unwrap_or(&mut []),
            None => &mut [],
        }
    }

    /// Where the entry of `seq` keeps its send WR (`None` in a receive
    /// queue) and its SGEs, to be filled.
    pub(super) fn keep(
        &mut self,
        seq: u64,
    ) -> (
        Option<&mut bindings::mrbond_rdma_send_wr>,
        &mut [bindings::ib_sge],
    ) {
        let (i, range) = (self.index(seq), self.sge_range(seq));
        let wr = i.and_then(|i| self.kept_wrs.get_mut(i));
        let sges = range
            .and_then(|r| self.kept_sges.get_mut(r))
            .unwrap_or(&mut []);
        (wr, sges)
    }

    /// The kept WR of the entry of `seq` (`None` in a receive queue) and
    /// its SGEs.
    pub(super) fn kept(
        &self,
        seq: u64,
    ) -> (Option<&bindings::mrbond_rdma_send_wr>, &[bindings::ib_sge]) {
        let Some(i) = self.index(seq) else {
            return (None, &[]);
        };
        let n = self.slots.get(i).map_or(0, |s| usize::from(s.num_sge));
        let sges = self
            .sge_range(seq)
            .and_then(|r| self.kept_sges.get(r))
            .and_then(|s| s.get(..n))
            .unwrap_or(&[]);
        (self.kept_wrs.get(i), sges)
    }

    /// Undoes the mappings of the entry of `seq`, if any.
    pub(super) fn unmap(&mut self, seq: u64, dma: Option<&MemberDma>) {
        if let Some(dma) = dma {
            self.maps(seq).iter_mut().for_each(|m| dma.unmap(m));
        }
    }

    pub(super) fn len(&self) -> u64 {
        self.head.wrapping_sub(self.tail)
    }

    fn is_full(&self) -> bool {
        usize::try_from(self.len()).map_or(true, |n| n >= self.slots.len())
    }

    /// Takes the next place for a WR of `num_sge` SGEs, recording what its
    /// flush would complete; its sequence. Nothing changes on an error.
    pub(super) fn reserve(&mut self, num_sge: c_int, mut entry: WrSlot) -> Result<u64> {
        if self.is_full() {
            return Err(ENOMEM);
        }
        entry.num_sge = usize::try_from(num_sge)
            .ok()
            .filter(|&n| n <= self.sges)
            .and_then(|n| u8::try_from(n).ok())
            .ok_or(EINVAL)?;
        let head = self.head;
        if let Some(slot) = self.slot(head) {
            *slot = entry;
        }
        Ok(head)
    }

    /// The WR at the reserved place was queued: held for a move, or for a
    /// flush.
    pub(super) fn commit(&mut self, counters: &MemberCounters) {
        self.head = self.head.wrapping_add(1);
        counters.posted();
    }

    /// The WR at the reserved place was posted to the member QP.
    pub(super) fn commit_posted(&mut self, counters: &MemberCounters) {
        self.commit(counters);
        self.sent = self.head;
    }

    /// Whether the member QP returned a completion for every WR posted to
    /// it: those before `tail` retired, those before `upto` came back with
    /// an error a move keeps.
    pub(super) fn drained(&self, upto: u64) -> bool {
        self.sent == self.tail || self.sent == upto
    }

    /// Completes every WR with a flush into `cq`, oldest first: the WRs the
    /// member QP held when it went away and the ones posted since. Their
    /// mappings are undone: the member QP is gone.
    pub(super) fn flush(
        &mut self,
        qp: *mut bindings::ib_qp,
        cq: &Cq,
        counters: &MemberCounters,
        dma: Option<&MemberDma>,
    ) {
        let mut wc = Wc::default();
        wc.set_flush(qp);
        let (mut n, mut pushed) = (0u64, 0u64);
        while self.tail != self.head {
            let tail = self.tail;
            self.unmap(tail, dma);
            if let Some(slot) = self.slot(tail) {
                wc.set_wr(slot.wr_id, slot.opcode);
                if cq.push(&wc) {
                    pushed += 1;
                }
            }
            self.tail = tail.wrapping_add(1);
            n += 1;
        }
        counters.retire(n);
        counters.add_flushed(pushed);
    }
}
