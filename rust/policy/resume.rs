// SPDX-License-Identifier: GPL-2.0

//! Transparent failover of a bond QP (issue 17): which of the send WRs left
//! without a completion on the failed member QP the peer executed, and which
//! must be posted again on the standby member QP.
//!
//! Both ends of a connection count the WRs that consume a receive at the
//! other end: SEND (with or without immediate data or an invalidation) and
//! RDMA WRITE with immediate data. A WR's *consuming count* is the number of
//! such WRs posted before it on its QP; each end also counts the receives it
//! consumed (`rx_consumed`, completions drained from the failed QP
//! included). On RESUME each end learns the peer's `rx_consumed`, `P`, and
//! RC's in-order execution gives every WR still unresolved a fate:
//!
//! - a consuming WR with consuming count `< P` (it is the `count + 1`-th)
//!   was executed: it completes with success, and is never posted again
//!   (its receive was consumed once: exactly once);
//! - a plain RDMA WRITE before such a WR was executed too; one after the
//!   last executed consuming WR may or may not have been, and is written
//!   again (the same bytes from the same buffer, which the ULP may not reuse
//!   before its completion);
//! - an RDMA READ without a completion is read again, and a local operation
//!   (memory registration, local invalidation) is done again on the new
//!   member, whose MRs are its own;
//! - every WR after the first one not executed is posted again, in order;
//! - atomics and inline sends are not resumed: a failover-enabled bond
//!   advertises no atomics, and a QP that has one outstanding takes the
//!   flush path.
//!
//! Completions leave in ring order: a WR that succeeds behind one posted
//! again completes after it (RC completes a send queue in order, and the ULP
//! relies on it). A `P` the local counts rule out (fewer receives than the
//! WRs that completed here consumed, or more than were ever posted) is a
//! protocol error: the QP takes the flush path.

/// What a send WR does at the peer, as far as resuming it goes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum SendOp {
    /// Consumes a receive at the peer: SEND, SEND_WITH_IMM, SEND_WITH_INV,
    /// RDMA_WRITE_WITH_IMM.
    Consuming,
    /// RDMA WRITE: the peer's memory only.
    Write,
    /// RDMA READ: the peer's memory read into ours.
    Read,
    /// A local operation (REG_MR, LOCAL_INV): the member's own objects.
    Local,
    /// An atomic or an inline send: not resumable (an atomic's effect is
    /// not idempotent; an inline send's data was the ULP's for the post
    /// only, and the bond keeps none).
    Unresumable,
}

/// The fate of one unresolved WR.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Fate {
    /// The peer executed it: complete it with success, in ring order.
    Succeed,
    /// Post it again on the standby member QP, in ring order.
    Repost,
}

/// Why a QP cannot be resumed (it takes the flush path instead).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ResumeError {
    /// The peer consumed fewer receives than the WRs that completed here
    /// sent it.
    PeerBehind,
    /// The peer consumed more receives than were ever sent it.
    PeerAhead,
    /// An atomic or inline send is outstanding.
    Unresumable,
    /// `fates` is shorter than `unresolved`.
    NoRoom,
}

/// What [`plan_resume`] decided, besides the fates.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct ResumePlan {
    /// WRs that complete with success.
    pub succeed: usize,
    /// WRs posted again.
    pub repost: usize,
    /// Plain WRITEs posted again that the peer may already have executed.
    pub writes_maybe_twice: usize,
}

/// The fates of a QP's unresolved send WRs, oldest first, into `fates`.
///
/// `unresolved` is the send ring from its oldest WR without a completion
/// on; `consumed_before` is the consuming count of that oldest WR (the
/// consuming WRs that completed here before it); `peer_rx_consumed` is the
/// peer's `rx_consumed` from its RESUME.
pub fn plan_resume(
    unresolved: &[SendOp],
    consumed_before: u64,
    peer_rx_consumed: u64,
    fates: &mut [Fate],
) -> Result<ResumePlan, ResumeError> {
    if fates.len() < unresolved.len() {
        return Err(ResumeError::NoRoom);
    }
    if peer_rx_consumed < consumed_before {
        return Err(ResumeError::PeerBehind);
    }
    let mut plan = ResumePlan::default();
    // The consuming count of the WR at hand: how many consuming WRs were
    // posted before it.
    let mut count = consumed_before;
    for (op, fate) in unresolved.iter().zip(fates.iter_mut()) {
        *fate = match op {
            SendOp::Unresumable => return Err(ResumeError::Unresumable),
            // The (count + 1)-th consuming WR was executed if the peer
            // consumed that many receives.
            SendOp::Consuming if count < peer_rx_consumed => Fate::Succeed,
            SendOp::Consuming => Fate::Repost,
            // A consuming WR after it was executed, so it was too.
            SendOp::Write if count < peer_rx_consumed => Fate::Succeed,
            SendOp::Write => {
                // Between the last consuming WR the peer executed and the
                // next: executed or not.
                if count == peer_rx_consumed {
                    plan.writes_maybe_twice = plan.writes_maybe_twice.saturating_add(1);
                }
                Fate::Repost
            }
            SendOp::Read | SendOp::Local => Fate::Repost,
        };
        if *op == SendOp::Consuming {
            count = count.saturating_add(1);
        }
        match fate {
            Fate::Succeed => plan.succeed = plan.succeed.saturating_add(1),
            Fate::Repost => plan.repost = plan.repost.saturating_add(1),
        }
    }
    if peer_rx_consumed > count {
        return Err(ResumeError::PeerAhead);
    }
    Ok(plan)
}
