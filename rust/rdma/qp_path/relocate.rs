// SPDX-License-Identifier: GPL-2.0

//! A path's half of a move to another member (issue 17,
//! [`crate::rdma::tfo_move`] drives it): the posts held, the old member QP
//! drained into the rings, the new member QP put in its place with the
//! receives posted again, and the send ring resumed on it from the WRs the
//! peer did not execute ([`crate::policy::resume`]).

use core::{ptr::NonNull, sync::atomic::Ordering};

use kernel::prelude::*;

use super::{Binding, MemberCounters, MemberQp, Moving, Posting, QpPath, Rings};
use crate::{
    policy::resume::{Fate, SendOp},
    rdma::{bindings, device::Device, wr},
};

impl QpPath {
    /// The connection became capable of moving.
    pub(crate) fn set_capable(&self) {
        self.capable.store(true, Ordering::Release);
    }

    /// The consumer ended the connection: no move starts any more.
    pub(crate) fn forbid_moves(&self) {
        self.capable.store(false, Ordering::Release);
    }

    pub(super) fn capable(&self) -> bool {
        self.capable.load(Ordering::Acquire)
    }

    /// A move begins, if it has not already (a failed completion begins it
    /// in the poll): from now on posts are held in the rings and the old
    /// member QP's error completions are kept there, unresolved. The
    /// caller moves that QP to ERR. False if the member QP is gone (a
    /// detach flushes the QP then).
    pub(crate) fn begin_move(&self) -> bool {
        let mut rings = self.rings.lock();
        if rings.member.is_none() {
            return false;
        }
        if rings.moving.is_none() {
            rings.moving = Some(Moving {
                draining: true,
                sq_upto: rings.sq.tail,
                rq_upto: rings.rq.tail,
                ..Moving::default()
            });
        }
        // Nothing outstanding: drained already.
        self.note_drain(&mut rings);
        true
    }

    /// Whether a move is on in the path.
    pub(crate) fn is_moving(&self) -> bool {
        self.rings.lock().moving.is_some()
    }

    /// Under the lock: if the old member QP returned every WR it held, the
    /// device's move work learns it, once.
    pub(super) fn note_drain(&self, rings: &mut Rings) {
        let Some(m) = rings.moving.as_mut() else {
            return;
        };
        if m.drained || !rings.sq.drained(m.sq_upto) || !rings.rq.drained(m.rq_upto) {
            return;
        }
        m.drained = true;
        self.queue_move_step();
    }

    /// The device's move work has a step to take for this path.
    pub(super) fn queue_move_step(&self) {
        self.move_pending.store(true, Ordering::Release);
        // SAFETY: by the type invariant the QP, and so its device, outlive
        // the path.
        unsafe { Device::from_raw((*self.qp.as_ptr()).device).queue_moves() };
    }

    /// Whether the move's work has something to do for this path since
    /// the last call.
    pub(crate) fn take_move_pending(&self) -> bool {
        self.move_pending.swap(false, Ordering::AcqRel)
    }

    /// The receives consumed on the connection, final, once the old member
    /// QP is drained and if the session was not told yet.
    pub(crate) fn take_drained(&self) -> Option<u64> {
        let mut rings = self.rings.lock();
        let rx = rings.rx_consumed;
        let m = rings.moving.as_mut()?;
        if !m.drained || m.drain_told {
            return None;
        }
        m.drain_told = true;
        Some(rx)
    }

    /// Keeps `member`, a new member QP on `bound`'s member (in INIT), for
    /// [`QpPath::install`]. False if no move is on, or one was kept
    /// already.
    pub(crate) fn keep_next(&self, bound: Binding, member: NonNull<bindings::ib_qp>) -> bool {
        let mut rings = self.rings.lock();
        if rings.moving.is_none() || rings.next.is_some() {
            return false;
        }
        // INVARIANT: as the caller guarantees, a live member QP, given to
        // the path.
        rings.next = Some((MemberQp(member), bound));
        true
    }

    /// The new member QP kept, and its member slot, taken back: the move
    /// ended without it.
    pub(crate) fn take_next(&self) -> Option<(NonNull<bindings::ib_qp>, usize)> {
        self.rings.lock().next.take().map(|(q, b)| (q.0, b.slot))
    }

    /// The new member QP kept, if it is on member `slot` (which goes
    /// away), taken back.
    pub(crate) fn take_next_on(&self, slot: usize) -> Option<(NonNull<bindings::ib_qp>, usize)> {
        let mut rings = self.rings.lock();
        if rings.next.as_ref().is_some_and(|(_, b)| b.slot == slot) {
            return rings.next.take().map(|(q, b)| (q.0, b.slot));
        }
        None
    }

    /// Puts the new member QP kept ([`QpPath::keep_next`]) in the old
    /// one's place, once the old one is drained: completions of the old
    /// one are dropped from now on (the generation flips), the mappings
    /// made for it undone, and every receive not consumed posted again to
    /// the new one. The new QP and the old one, for the caller to destroy.
    pub(crate) fn install(
        &self,
        posting: &Posting<'_>,
    ) -> Result<(NonNull<bindings::ib_qp>, Option<NonNull<bindings::ib_qp>>)> {
        let mut guard = self.rings.lock();
        let rings = &mut *guard;
        let Some(m) = rings.moving.as_mut() else {
            return Err(EINVAL);
        };
        if !m.drained {
            return Err(EBUSY);
        }
        let Some((member, bound)) = rings.next.take() else {
            return Err(EINVAL);
        };
        let new = member.0;
        m.draining = false;
        m.receives_live = true;
        let old_dma = rings.bound.dma;
        for ring in [&mut rings.sq, &mut rings.rq] {
            let mut s = ring.tail;
            while s != ring.sent {
                ring.unmap(s, old_dma.as_ref());
                s = s.wrapping_add(1);
            }
            ring.generation = !ring.generation;
            ring.sent = ring.tail;
        }
        // The WRs left, and those held, are the new member's to complete.
        let wrs = rings.sq.len().wrapping_add(rings.rq.len());
        if let (Some(from), Some(to)) = (
            posting.counters.get(rings.bound.slot),
            posting.counters.get(bound.slot),
        ) {
            from.retire(wrs);
            to.adopt(wrs);
        }
        rings.bound = bound;
        let old = rings.member.replace(member).map(|q| q.0);
        let on = posting.bind(&rings.bound, self.device()).ok_or(EINVAL)?;
        while rings.rq.sent != rings.rq.head {
            let seq = rings.rq.sent;
            self.post_kept_recv(rings, &on, seq)?;
            rings.rq.sent = seq.wrapping_add(1);
        }
        Ok((new, old))
    }

    /// The unresolved sends, oldest first, as what they do at the peer,
    /// into `ops`; how many, and the consuming count of the first (the
    /// input of [`crate::policy::resume::plan_resume`]). `None` if `ops`
    /// is too short.
    pub(crate) fn unresolved(&self, ops: &mut [SendOp]) -> Option<(usize, u64)> {
        let rings = self.rings.lock();
        let n = usize::try_from(rings.sq.len()).ok()?;
        let ops = ops.get_mut(..n)?;
        let mut consuming = 0u64;
        let mut s = rings.sq.tail;
        for op in ops.iter_mut() {
            let (kept, _) = rings.sq.kept(s);
            *op = kept.map_or(SendOp::Unresumable, wr::kept_send_op);
            if *op == SendOp::Consuming {
                consuming = consuming.checked_add(1)?;
            }
            s = s.wrapping_add(1);
        }
        Some((n, rings.tx_consuming.checked_sub(consuming)?))
    }

    /// Resumes the send ring on the new member QP with `fates`, one per
    /// unresolved send as [`QpPath::unresolved`] listed them: the ones the
    /// peer executed complete with success (into the send CQ, in ring
    /// order, those the consumer asked a completion of), the others, and the posts held since, are posted. Only a
    /// prefix may succeed: a WR that succeeded behind one posted again
    /// would have to complete after it, which the caller refuses before
    /// (the move then takes the flush path). The move is over.
    pub(crate) fn replay(&self, posting: &Posting<'_>, fates: &[Fate]) -> Result {
        let mut kick = false;
        let mut guard = self.rings.lock();
        let rings = &mut *guard;
        if rings.moving.is_none() || rings.member.is_none() {
            return Err(EINVAL);
        }
        let on = posting.bind(&rings.bound, self.device()).ok_or(EINVAL)?;
        let succeed = fates.iter().take_while(|f| **f == Fate::Succeed).count();
        let cq = self.cq(false);
        for _ in 0..succeed {
            let seq = rings.sq.tail;
            if let Some(slot) = rings.sq.slot(seq).copied().filter(|s| s.signaled) {
                let mut wc = super::Wc::default();
                wc.set_success(self.qp.as_ptr(), slot.wr_id, slot.opcode);
                kick |= cq.push(&wc);
            }
            rings.sq.tail = seq.wrapping_add(1);
            rings.sq.sent = rings.sq.tail;
            on.counters.retire(1);
        }
        while rings.sq.sent != rings.sq.head {
            let seq = rings.sq.sent;
            self.post_kept_send(rings, &on, seq)?;
            rings.sq.sent = seq.wrapping_add(1);
        }
        rings.moving = None;
        drop(guard);
        if kick {
            cq.kick_later();
        }
        Ok(())
    }

    /// The move failed: posts are no longer held, and every WR the old
    /// member QP did not complete, with every one held, completes with a
    /// flush through the QP's CQs, in ring order; the QP is in ERR. The
    /// caller kicks the CQs and reports the QP fatal. False if no move was
    /// on.
    pub(crate) fn abandon_move(&self, counters: &MemberCounters) -> bool {
        let mut guard = self.rings.lock();
        let rings = &mut *guard;
        if rings.moving.take().is_none() {
            return false;
        }
        let (qp, dma) = (self.qp.as_ptr(), rings.bound.dma);
        rings.sq.flush(qp, self.cq(false), counters, dma.as_ref());
        rings.rq.flush(qp, self.cq(true), counters, dma.as_ref());
        rings.sq.sent = rings.sq.head;
        rings.rq.sent = rings.rq.head;
        rings.state = bindings::ib_qp_state_IB_QPS_ERR;
        true
    }
}
