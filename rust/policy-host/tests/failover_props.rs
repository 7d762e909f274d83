//! Property tests of the failover planner and the rebalance.
#![allow(clippy::needless_range_loop)] // index loops read clearer in tests

mod common;

use common::mi;
use mrbond_policy::{
    plan_failover, plan_rebalance, Action, ActionKind, MemberMask, MemberView, QpEntry,
    RebalanceConfig, MAX_MEMBERS,
};
use proptest::prelude::*;

const NONE: Action = Action {
    qp_index: usize::MAX,
    qp_id: 0,
    from: mrbond_policy::MemberIndex::FIRST,
    to: None,
    kind: ActionKind::Failover,
};

/// A table of `n` QPs spread round robin over `present` (so members start
/// balanced within one), with `loads` cycling through the given values.
fn rr_table(n: usize, present: MemberMask, loads: &[u32]) -> Vec<QpEntry> {
    let members: Vec<_> = present.iter().collect();
    (0..n)
        .map(|i| QpEntry {
            id: i as u32 + 100,
            member: members[i % members.len()],
            load: loads[i % loads.len()],
        })
        .collect()
}

fn loads_after(qps: &[QpEntry], actions: &[Action]) -> [u64; MAX_MEMBERS] {
    let mut loads = [0u64; MAX_MEMBERS];
    let mut moved = vec![None; qps.len()];
    for a in actions {
        moved[a.qp_index] = Some(a.to);
    }
    for (i, q) in qps.iter().enumerate() {
        match moved[i] {
            None => loads[q.member.get()] += u64::from(q.load),
            Some(Some(t)) => loads[t.get()] += u64::from(q.load),
            Some(None) => {}
        }
    }
    loads
}

fn view_strategy() -> impl Strategy<Value = (MemberMask, MemberMask, MemberMask)> {
    // present, usable, draining (usable and draining disjoint, within present)
    (1u16.., any::<u16>(), any::<u16>()).prop_map(|(p, u, d)| {
        let present = MemberMask::from_bits(p);
        let usable = MemberMask::from_bits(u).and(present);
        let draining = MemberMask::from_bits(d).and(present).minus(usable);
        (present, usable, draining)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Every QP on a failed member is errored exactly once, nothing else is
    /// touched, replacements land on usable members only, and none is left
    /// without target while a member is usable.
    #[test]
    fn failover_invariants(
        (present, usable, draining) in view_strategy(),
        table in prop::collection::vec((0usize..MAX_MEMBERS, 0u32..5), 0..300),
        weights in prop::array::uniform16(0u32..=1000),
    ) {
        let members: Vec<_> = present.iter().collect();
        let qps: Vec<QpEntry> = table
            .iter()
            .enumerate()
            .map(|(i, (m, l))| QpEntry { id: i as u32, member: members[m % members.len()], load: *l })
            .collect();
        let view = MemberView::new(usable, draining, weights);
        let mut out = vec![NONE; qps.len()];
        let sum = plan_failover(&view, &qps, &mut out);
        let actions = &out[..sum.written];
        prop_assert!(!sum.truncated);
        let keep = usable.or(draining);
        let must: Vec<usize> = (0..qps.len()).filter(|&i| !keep.contains(qps[i].member)).collect();
        prop_assert_eq!(sum.errored, must.len());
        prop_assert_eq!(actions.len(), must.len());
        let mut seen = vec![0u32; qps.len()];
        for a in actions {
            seen[a.qp_index] += 1;
            prop_assert_eq!(a.kind, ActionKind::Failover);
            prop_assert_eq!(a.qp_id, qps[a.qp_index].id);
            prop_assert_eq!(a.from, qps[a.qp_index].member);
            prop_assert!(!keep.contains(a.from));
            match a.to {
                Some(t) => prop_assert!(usable.contains(t), "target {:?} not usable", t),
                None => prop_assert!(usable.is_empty()),
            }
        }
        for &i in &must {
            prop_assert_eq!(seen[i], 1, "qp {} errored {} times", i, seen[i]);
        }
        prop_assert!(seen.iter().all(|&s| s <= 1));
        prop_assert_eq!(sum.replaced, if usable.is_empty() { 0 } else { must.len() });

        // Spread: no survivor gets more than its weight share (rounded up).
        let n = must.len() as u64;
        let w = |m: usize| u64::from(weights[m].max(1));
        let total: u64 = usable.iter().map(|m| w(m.get())).sum();
        let mut got = [0u64; MAX_MEMBERS];
        for a in actions {
            if let Some(t) = a.to {
                got[t.get()] += 1;
            }
        }
        for s in usable.iter() {
            prop_assert!(got[s.get()] <= (n * w(s.get())).div_ceil(total));
        }
    }

    /// Balanced unit-load start, equal weights: after failover the survivors'
    /// loads are within one, and with >= 2 survivors and >= 2 errored QPs the
    /// replacements never all go to one member.
    #[test]
    fn failover_balances_survivors(
        present in 2u16..,
        failed in any::<u16>(),
        n in 0usize..400,
    ) {
        let present = MemberMask::from_bits(present);
        let failed = MemberMask::from_bits(failed).and(present);
        let usable = present.minus(failed);
        let qps = rr_table(n, present, &[1]);
        let view = MemberView::new(usable, MemberMask::EMPTY, [100; MAX_MEMBERS]);
        let mut out = vec![NONE; qps.len()];
        let sum = plan_failover(&view, &qps, &mut out);
        let actions = &out[..sum.written];
        if usable.is_empty() {
            prop_assert!(actions.iter().all(|a| a.to.is_none()));
            return Ok(());
        }
        let loads = loads_after(&qps, actions);
        let ls: Vec<u64> = usable.iter().map(|m| loads[m.get()]).collect();
        let (lo, hi) = (*ls.iter().min().unwrap(), *ls.iter().max().unwrap());
        prop_assert!(hi - lo <= 1, "survivor loads {:?}", ls);
        let targets: std::collections::BTreeSet<_> = actions.iter().filter_map(|a| a.to).collect();
        if usable.count() >= 2 && actions.len() >= 2 {
            prop_assert!(targets.len() >= 2, "all replacements on one member");
        }
    }

    /// Rebalance: moves only between usable members, each QP at most once,
    /// at most max_moves, never overshooting (the weighted sum of squared
    /// loads strictly drops each tick that moves), and converges.
    #[test]
    fn rebalance_invariants(
        (present, usable, draining) in view_strategy(),
        table in prop::collection::vec((0usize..MAX_MEMBERS, 1u32..4), 0..200),
        weights in prop::array::uniform16(1u32..=10),
        threshold in 0u32..500,
        max_moves in 1u32..20,
    ) {
        let members: Vec<_> = present.iter().collect();
        let mut qps: Vec<QpEntry> = table
            .iter()
            .enumerate()
            .map(|(i, (m, l))| QpEntry { id: i as u32, member: members[m % members.len()], load: *l })
            .collect();
        let view = MemberView::new(usable, draining, weights);
        let cfg = RebalanceConfig { threshold_permille: threshold, max_moves, ..RebalanceConfig::DEFAULT };
        let potential = |qps: &[QpEntry]| -> f64 {
            let mut loads = [0u64; MAX_MEMBERS];
            for q in qps {
                loads[q.member.get()] += u64::from(q.load);
            }
            usable.iter().map(|m| (loads[m.get()] as f64).powi(2) / f64::from(weights[m.get()])).sum()
        };
        let mut out = vec![NONE; qps.len()];
        let mut before = potential(&qps);
        for _tick in 0..200 {
            let sum = plan_rebalance(&view, &cfg, &qps, &mut out);
            prop_assert!(sum.rebalanced <= max_moves as usize);
            if sum.rebalanced == 0 {
                return Ok(());
            }
            let mut seen = vec![false; qps.len()];
            for a in &out[..sum.written] {
                prop_assert_eq!(a.kind, ActionKind::Rebalance);
                prop_assert!(!seen[a.qp_index], "moved twice in one tick");
                seen[a.qp_index] = true;
                prop_assert!(usable.contains(a.from));
                let to = a.to.unwrap();
                prop_assert!(usable.contains(to) && to != a.from);
                qps[a.qp_index].member = to;
            }
            let after = potential(&qps);
            prop_assert!(after < before, "potential rose {} -> {}", before, after);
            before = after;
        }
        prop_assert!(false, "rebalance did not converge");
    }
}

#[test]
fn failover_weighted_targets_follow_weights() {
    // Survivors 0 (weight 300) and 1 (weight 100), both empty: 40 replacements
    // split 30/10.
    let present = MemberMask::first_n(3);
    let qps: Vec<QpEntry> = (0..40)
        .map(|i| QpEntry {
            id: i,
            member: mi(2),
            load: 1,
        })
        .collect();
    let mut w = [100u32; MAX_MEMBERS];
    w[0] = 300;
    let view = MemberView::new(present.without(mi(2)), MemberMask::EMPTY, w);
    let mut out = vec![NONE; 40];
    let sum = plan_failover(&view, &qps, &mut out);
    assert_eq!(sum.errored, 40);
    let loads = loads_after(&qps, &out[..sum.written]);
    assert_eq!(&loads[..3], &[30, 10, 0]);
}

#[test]
fn failover_caps_trust_in_stale_loads() {
    // Survivor 0 idle, survivor 1 heavily loaded: replacements still spread
    // (at most ceil(n/2) each) rather than all onto member 0.
    let mut qps: Vec<QpEntry> = (0..50)
        .map(|i| QpEntry {
            id: i,
            member: mi(1),
            load: 1,
        })
        .collect();
    qps.extend((0..6).map(|i| QpEntry {
        id: 100 + i,
        member: mi(2),
        load: 1,
    }));
    let view = MemberView::new(
        MemberMask::first_n(2),
        MemberMask::EMPTY,
        [100; MAX_MEMBERS],
    );
    let mut out = vec![NONE; qps.len()];
    let sum = plan_failover(&view, &qps, &mut out);
    let to0 = out[..sum.written]
        .iter()
        .filter(|a| a.to == Some(mi(0)))
        .count();
    assert_eq!(sum.errored, 6);
    assert_eq!(to0, 3);
}
