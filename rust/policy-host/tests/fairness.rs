//! Jain's fairness over 10^5 simulated placements per policy and member count.
#![allow(clippy::needless_range_loop)] // index loops read clearer in tests

mod common;

use common::{jain, mi, normalised, placer};
use mrbond_policy::{
    workload::Rng, FlowKey, MemberMask, PlaceRequest, Placer, Policy, MAX_MEMBERS,
};
use proptest::prelude::*;

const PLACEMENTS: u64 = 100_000;

/// Flows of this file's own shape over the shared generator.
trait Flows {
    fn flow(&mut self) -> FlowKey;
}

impl Flows for Rng {
    fn flow(&mut self) -> FlowKey {
        let r = self.next_u64();
        FlowKey::ipv4(
            [10, 0, (r >> 8) as u8, r as u8],
            [10, 1, (r >> 24) as u8, (r >> 16) as u8],
            (r >> 32) as u16 | 0xc000,
        )
    }
}

/// Places `PLACEMENTS` QPs; LQF sees each QP accounted (and a random tenth
/// of them destroyed) so that it has something to balance.
fn simulate(p: &mut Placer, seed: u64) -> [u64; MAX_MEMBERS] {
    let mut rng = Rng(seed | 1);
    let mut counts = [0u64; MAX_MEMBERS];
    let mut live: Vec<_> = Vec::new();
    for _ in 0..PLACEMENTS {
        let req = PlaceRequest::new(rng.flow());
        let m = p.place(&req).unwrap();
        counts[m.get()] += 1;
        p.qp_added(m);
        live.push(m);
        if rng.next_u64() % 10 == 0 {
            let victim = live.swap_remove((rng.next_u64() % live.len() as u64) as usize);
            p.qp_removed(victim);
        }
    }
    counts
}

#[test]
fn equal_weights_jain_at_least_099() {
    for n in [2usize, 4, 8, 16] {
        for policy in [Policy::Wrr, Policy::Lqf, Policy::Hash, Policy::RoundRobin] {
            let mut p = placer(policy, &vec![100; n]);
            let counts = simulate(&mut p, 42 + n as u64);
            let members: Vec<usize> = (0..n).collect();
            let j = jain(&normalised(&counts, &members, None));
            assert!(j >= 0.99, "{policy:?} n={n}: Jain {j:.5} counts {counts:?}");
        }
    }
}

#[test]
fn weighted_wrr_jain_at_least_098() {
    let weights: [u16; 8] = [1, 10, 100, 1000, 3, 77, 500, 999];
    let mut p = placer(Policy::Wrr, &weights);
    let counts = simulate(&mut p, 7);
    let eff: Vec<u32> = (0..8).map(|i| p.effective_weight(mi(i))).collect();
    let members: Vec<usize> = (0..8).collect();
    let j = jain(&normalised(&counts, &members, Some(&eff)));
    assert!(j >= 0.98, "Jain {j:.5} counts {counts:?}");
}

#[test]
fn fairness_survives_member_loss() {
    for policy in [Policy::Wrr, Policy::Lqf, Policy::Hash, Policy::RoundRobin] {
        let mut p = placer(policy, &[100; 8]);
        simulate(&mut p, 3);
        p.set_usable_mask(MemberMask::from_bits(0b1011_0110));
        let counts = simulate(&mut p, 4);
        let members: Vec<usize> = p.usable().iter().map(|m| m.get()).collect();
        for m in 0..8 {
            if !p.usable().contains(mi(m)) {
                assert_eq!(counts[m], 0, "{policy:?}: placed on lost member {m}");
            }
        }
        let j = jain(&normalised(&counts, &members, None));
        // LQF first refills the survivors that were emptier, then evens out.
        assert!(j >= 0.99, "{policy:?}: Jain {j:.5} counts {counts:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Any weights and utilisations: WRR's weight-normalised Jain >= 0.98.
    #[test]
    fn wrr_weighted_fairness(
        ws in prop::collection::vec((1u16..=1000, 0u16..=1000), 2..=MAX_MEMBERS),
        seed in any::<u64>(),
    ) {
        let mut p = placer(Policy::Wrr, &ws.iter().map(|w| w.0).collect::<Vec<_>>());
        for (i, w) in ws.iter().enumerate() {
            p.set_utilisation(mi(i), w.1);
        }
        let counts = simulate(&mut p, seed);
        let eff: Vec<u32> = (0..ws.len()).map(|i| p.effective_weight(mi(i))).collect();
        let members: Vec<usize> = (0..ws.len()).collect();
        let j = jain(&normalised(&counts, &members, Some(&eff)));
        prop_assert!(j >= 0.98, "Jain {} counts {:?}", j, counts);
    }

    /// Equal weights on any usable subset: Jain >= 0.99 for every policy.
    #[test]
    fn equal_weight_fairness(usable in 1u16.., seed in any::<u64>()) {
        for policy in [Policy::Wrr, Policy::Lqf, Policy::Hash, Policy::RoundRobin] {
            let mut p = placer(policy, &[100; MAX_MEMBERS]);
            p.set_usable_mask(MemberMask::from_bits(usable));
            let counts = simulate(&mut p, seed);
            let members: Vec<usize> = p.usable().iter().map(|m| m.get()).collect();
            let j = jain(&normalised(&counts, &members, None));
            prop_assert!(j >= 0.99, "{:?}: Jain {} counts {:?}", policy, j, counts);
        }
    }
}
