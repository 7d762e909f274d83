// SPDX-License-Identifier: GPL-2.0
//! Resuming a QP on another rail against a model of RC: the peer executed a
//! prefix of the posted WRs, in order; the local end saw completions for a
//! shorter prefix. Every WR the peer executed that consumed a receive must
//! succeed without being posted again (exactly once), every WR it did not
//! execute must be posted again (nothing lost), and a WRITE is written twice
//! only where the peer's count cannot tell.

use mrbond_policy::policy::resume::{plan_resume, Fate, ResumeError, ResumePlan, SendOp};
use proptest::prelude::*;

fn op() -> impl Strategy<Value = SendOp> {
    prop_oneof![
        4 => Just(SendOp::Consuming),
        3 => Just(SendOp::Write),
        1 => Just(SendOp::Read),
        1 => Just(SendOp::Local),
    ]
}

fn consuming(ops: &[SendOp]) -> u64 {
    ops.iter().filter(|o| **o == SendOp::Consuming).count() as u64
}

/// `ops` posted, the peer executed the first `executed`, completions came
/// back here for the first `completed`: the plan for the rest.
fn resume(ops: &[SendOp], completed: usize, executed: usize) -> (Vec<Fate>, ResumePlan) {
    let unresolved = &ops[completed..];
    let mut fates = vec![Fate::Succeed; unresolved.len()];
    let plan = plan_resume(
        unresolved,
        consuming(&ops[..completed]),
        consuming(&ops[..executed]),
        &mut fates,
    )
    .expect("a consistent peer count resumes");
    (fates, plan)
}

proptest! {
    #[test]
    fn executed_consuming_wrs_succeed_once_and_the_rest_are_reposted(
        ops in prop::collection::vec(op(), 0..64),
        a in 0usize..=64,
        b in 0usize..=64,
    ) {
        let executed = a.min(ops.len());
        let completed = b.min(executed);
        let (fates, plan) = resume(&ops, completed, executed);
        let peer_count = consuming(&ops[..executed]);
        for (i, (op, fate)) in ops[completed..].iter().zip(&fates).enumerate() {
            let i = i + completed;
            if i >= executed {
                // Not executed: lost unless posted again.
                prop_assert_eq!(*fate, Fate::Repost, "WR {} ({:?}) not executed", i, op);
                continue;
            }
            match op {
                SendOp::Consuming => prop_assert_eq!(*fate, Fate::Succeed, "WR {} consumed", i),
                // Twice only when no consuming WR the peer executed follows it.
                SendOp::Write if *fate == Fate::Repost => {
                    prop_assert_eq!(consuming(&ops[..i]), peer_count, "WR {} written twice", i)
                }
                SendOp::Write => {}
                SendOp::Read | SendOp::Local => prop_assert_eq!(*fate, Fate::Repost),
                SendOp::Unresumable => unreachable!(),
            }
        }
        prop_assert_eq!(plan.succeed + plan.repost, ops.len() - completed);
        prop_assert_eq!(plan.succeed, fates.iter().filter(|f| **f == Fate::Succeed).count());
    }

    #[test]
    fn a_peer_count_the_local_ring_rules_out_is_refused(
        ops in prop::collection::vec(op(), 1..32),
        b in 0usize..32,
        short in 1u64..4,
        over in 1u64..4,
    ) {
        let completed = b.min(ops.len());
        let before = consuming(&ops[..completed]);
        let mut fates = vec![Fate::Succeed; ops.len()];
        if let Some(low) = before.checked_sub(short) {
            prop_assert_eq!(
                plan_resume(&ops[completed..], before, low, &mut fates),
                Err(ResumeError::PeerBehind)
            );
        }
        let high = consuming(&ops) + over;
        prop_assert_eq!(
            plan_resume(&ops[completed..], before, high, &mut fates),
            Err(ResumeError::PeerAhead)
        );
    }
}

#[test]
fn an_outstanding_atomic_takes_the_flush_path() {
    let mut fates = [Fate::Succeed; 3];
    let ops = [SendOp::Consuming, SendOp::Unresumable, SendOp::Write];
    assert_eq!(
        plan_resume(&ops, 0, 1, &mut fates),
        Err(ResumeError::Unresumable)
    );
}

#[test]
fn fates_shorter_than_the_ring_are_refused() {
    let mut fates = [Fate::Succeed; 1];
    let ops = [SendOp::Write, SendOp::Write];
    assert_eq!(
        plan_resume(&ops, 0, 0, &mut fates),
        Err(ResumeError::NoRoom)
    );
}

/// The example: a READ whose response was lost before a SEND the
/// peer executed is read again, the SEND succeeds (completing after the
/// READ), the WRITE after the SEND may have landed and is written again.
#[test]
fn a_lost_read_response_before_an_executed_send() {
    let ops = [
        SendOp::Read,
        SendOp::Consuming,
        SendOp::Write,
        SendOp::Consuming,
    ];
    let mut fates = [Fate::Succeed; 4];
    let plan = plan_resume(&ops, 7, 8, &mut fates).expect("resumable");
    assert_eq!(
        fates,
        [Fate::Repost, Fate::Succeed, Fate::Repost, Fate::Repost]
    );
    assert_eq!(
        plan,
        ResumePlan {
            succeed: 1,
            repost: 3,
            writes_maybe_twice: 1
        }
    );
}
