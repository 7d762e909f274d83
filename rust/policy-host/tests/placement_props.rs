//! Property tests of the placement policies.
#![allow(clippy::needless_range_loop)] // index loops read clearer in tests

mod common;

use common::{mi, placer};
use mrbond_policy::policy::wrr;
use mrbond_policy::{
    l34_hash, FlowKey, MemberMask, PinScope, PlaceError, PlaceRequest, Placer, Policy, MAX_MEMBERS,
};
use proptest::prelude::*;

fn policy_strategy() -> impl Strategy<Value = Policy> {
    prop::sample::select(Policy::ALL.to_vec())
}

fn flow_strategy() -> impl Strategy<Value = FlowKey> {
    (any::<[u8; 4]>(), any::<[u8; 4]>(), any::<u16>()).prop_map(|(s, d, p)| FlowKey::ipv4(s, d, p))
}

#[derive(Clone, Debug)]
enum Op {
    Place {
        flow: FlowKey,
        pin: Option<(usize, bool)>,
    },
    SetUsable(u16),
    Toggle(usize),
    Util(usize, u16),
    Sample(usize, u64, u64, u32),
    Weight(usize, u16),
    QpAdded(usize),
    QpRemoved(usize),
    Wqes(usize, u32),
    SetPolicy(Policy),
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (flow_strategy(), prop::option::weighted(0.2, (0..MAX_MEMBERS, any::<bool>())))
            .prop_map(|(flow, pin)| Op::Place { flow, pin }),
        1 => any::<u16>().prop_map(Op::SetUsable),
        1 => (0..MAX_MEMBERS).prop_map(Op::Toggle),
        1 => (0..MAX_MEMBERS, 0u16..1200).prop_map(|(m, u)| Op::Util(m, u)),
        1 => (0..MAX_MEMBERS, any::<u64>(), any::<u64>(), any::<u32>())
            .prop_map(|(m, b, i, s)| Op::Sample(m, b, i, s)),
        1 => (0..MAX_MEMBERS, 0u16..1100).prop_map(|(m, w)| Op::Weight(m, w)),
        1 => (0..MAX_MEMBERS).prop_map(Op::QpAdded),
        1 => (0..MAX_MEMBERS).prop_map(Op::QpRemoved),
        1 => (0..MAX_MEMBERS, any::<u32>()).prop_map(|(m, w)| Op::Wqes(m, w)),
        1 => policy_strategy().prop_map(Op::SetPolicy),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever happens, a placement is on a usable member; "no member" only
    /// when none is usable; a pin is honoured or refused as PinnedUnusable.
    #[test]
    fn never_places_on_unusable_member(
        n in 1usize..=MAX_MEMBERS,
        policy in policy_strategy(),
        ops in prop::collection::vec(op_strategy(), 1..300),
    ) {
        let mut p = placer(policy, &vec![100; n]);
        for op in ops {
            match op {
                Op::Place { flow, pin } => {
                    let req = PlaceRequest {
                        flow,
                        pin: pin.map(|(m, qp)| mrbond_policy::Pin {
                            member: mi(m),
                            scope: if qp { PinScope::Qp } else { PinScope::Pd },
                        }),
                    };
                    let usable = p.usable();
                    match (p.place(&req), req.pin) {
                        (Ok(m), Some(pin)) => {
                            prop_assert_eq!(m, pin.member);
                            prop_assert!(usable.contains(m));
                        }
                        (Err(PlaceError::PinnedUnusable(e)), Some(pin)) => {
                            prop_assert_eq!(e, pin);
                            prop_assert!(!usable.contains(pin.member));
                        }
                        (Ok(m), None) => {
                            prop_assert!(usable.contains(m), "placed on unusable {:?}", m);
                            prop_assert!(p.policy() != Policy::Pinned);
                        }
                        (Err(PlaceError::NoUsableMember), None) => prop_assert!(usable.is_empty()),
                        (Err(PlaceError::PinRequired), None) => {
                            prop_assert_eq!(p.policy(), Policy::Pinned);
                            prop_assert!(!usable.is_empty());
                        }
                        (r, pin) => prop_assert!(false, "unexpected {:?} for pin {:?}", r, pin),
                    }
                }
                Op::SetUsable(bits) => p.set_usable_mask(MemberMask::from_bits(bits)),
                Op::Toggle(m) => {
                    let u = p.usable().contains(mi(m));
                    p.set_usable(mi(m), !u);
                }
                Op::Util(m, u) => p.set_utilisation(mi(m), u),
                Op::Sample(m, b, i, s) => {
                    if let Some(u) = p.update_utilisation(mi(m), b, i, s) {
                        prop_assert!(u <= 1000);
                    }
                }
                Op::Weight(m, w) => {
                    let r = p.set_weight(mi(m), w);
                    prop_assert_eq!(r.is_ok(), (1..=1000).contains(&w) && m < n);
                }
                Op::QpAdded(m) => p.qp_added(mi(m)),
                Op::QpRemoved(m) => p.qp_removed(mi(m)),
                Op::Wqes(m, w) => p.set_outstanding_wqes(mi(m), w),
                Op::SetPolicy(pol) => p.set_policy(pol),
            }
            prop_assert!(p.usable().minus(p.present()).is_empty());
        }
    }

    /// Smooth WRR: after every prefix of a round each member's count is within
    /// one of its ideal share, and a full round matches the weights exactly.
    #[test]
    fn wrr_within_one_per_round(
        ws in prop::collection::vec((1u16..=1000, 0u16..=1000), 1..=MAX_MEMBERS),
    ) {
        let mut p = placer(Policy::Wrr, &ws.iter().map(|w| w.0).collect::<Vec<_>>());
        for (i, w) in ws.iter().enumerate() {
            p.set_utilisation(mi(i), w.1);
        }
        let eff: Vec<u64> = (0..ws.len()).map(|i| u64::from(p.effective_weight(mi(i)))).collect();
        for (i, w) in ws.iter().enumerate() {
            prop_assert_eq!(eff[i], u64::from(wrr::effective_weight(w.0, w.1)));
        }
        let total: u64 = eff.iter().sum();
        let g = eff.iter().fold(0u64, |a, &b| gcd(a, b));
        let round = total / g;
        let steps = round.min(30_000);
        let mut counts = vec![0u64; ws.len()];
        for k in 1..=steps {
            let m = p.place(&PlaceRequest::default()).unwrap();
            counts[m.get()] += 1;
            for i in 0..ws.len() {
                let scaled = counts[i] * total;
                let ideal = k * eff[i];
                prop_assert!(
                    scaled.abs_diff(ideal) < total,
                    "member {} count {} after {} picks, ideal {}/{}", i, counts[i], k, ideal, total
                );
            }
        }
        if steps == round {
            for i in 0..ws.len() {
                prop_assert_eq!(counts[i], eff[i] / g);
            }
        }
    }

    /// LQF returns a usable member whose (wqes, qps) is minimal, lowest index
    /// among equals.
    #[test]
    fn lqf_returns_a_minimum(
        loads in prop::collection::vec((0u32..8, 0u32..8), 1..=MAX_MEMBERS),
        usable in any::<u16>(),
    ) {
        let n = loads.len();
        let mut p = placer(Policy::Lqf, &vec![100; n]);
        for (i, (w, q)) in loads.iter().enumerate() {
            p.set_outstanding_wqes(mi(i), *w);
            for _ in 0..*q {
                p.qp_added(mi(i));
            }
        }
        p.set_usable_mask(MemberMask::from_bits(usable));
        let usable = p.usable();
        let expect = usable.iter().min_by_key(|m| (loads[m.get()], m.get()));
        match p.place(&PlaceRequest::default()) {
            Ok(m) => prop_assert_eq!(Some(m), expect),
            Err(e) => {
                prop_assert_eq!(e, PlaceError::NoUsableMember);
                prop_assert!(expect.is_none());
            }
        }
    }

    /// Hash maps a flow to `usable[hash % count]`, the same every time.
    #[test]
    fn hash_is_stable_over_usable_set(
        flows in prop::collection::vec(flow_strategy(), 1..50),
        usable in 1u16..,
        n in 1usize..=MAX_MEMBERS,
    ) {
        let mut p = placer(Policy::Hash, &vec![100; n]);
        p.set_usable_mask(MemberMask::from_bits(usable));
        let list: Vec<_> = p.usable().iter().collect();
        for f in &flows {
            let r = p.place(&PlaceRequest::new(*f));
            if list.is_empty() {
                prop_assert_eq!(r, Err(PlaceError::NoUsableMember));
                continue;
            }
            let want = list[(l34_hash(f) % list.len() as u32) as usize];
            prop_assert_eq!(r, Ok(want));
            prop_assert_eq!(p.place(&PlaceRequest::new(*f)), Ok(want));
        }
    }

    /// RR gives each usable member exactly k picks in k rounds.
    #[test]
    fn rr_is_exact(usable in 1u16.., k in 1u64..20) {
        let mut p = placer(Policy::RoundRobin, &[100; MAX_MEMBERS]);
        p.set_usable_mask(MemberMask::from_bits(usable));
        let c = p.usable().count() as u64;
        let mut counts = [0u64; MAX_MEMBERS];
        for _ in 0..k * c {
            counts[p.place(&PlaceRequest::default()).unwrap().get()] += 1;
        }
        for m in 0..MAX_MEMBERS {
            let want = if p.usable().contains(mi(m)) { k } else { 0 };
            prop_assert_eq!(counts[m], want);
        }
    }

    /// Utilisation from counters: integer formula equals the real ratio
    /// (floored, clamped) whenever the inputs are in a sane range.
    #[test]
    fn utilisation_matches_float(
        bytes in 0u64..1u64 << 40,
        interval in 1u64..100_000_000_000,
        speed in 1u32..1_600_000,
    ) {
        let got = wrr::utilisation_permille(bytes, interval, speed).unwrap();
        let exact = (bytes as f64 * 8e6) / (interval as f64 * speed as f64);
        let want = exact.floor().min(1000.0) as u16;
        prop_assert!(got.abs_diff(want) <= 1, "got {} want {}", got, want);
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[test]
fn weight_validation_on_add() {
    let mut p = Placer::new(Policy::Wrr);
    assert!(p.add_member(mi(0), 0).is_err());
    assert!(p.add_member(mi(0), 1001).is_err());
    assert!(p.add_member(mi(0), 1000).is_ok());
    assert!(p.add_member(mi(0), 10).is_err(), "slot in use");
    assert!(p.remove_member(mi(1)).is_err());
    assert!(p.remove_member(mi(0)).is_ok());
    assert!(p.present().is_empty());
}

#[test]
fn removed_member_never_placed() {
    for policy in [Policy::Wrr, Policy::Lqf, Policy::Hash, Policy::RoundRobin] {
        let mut p = placer(policy, &[100; 4]);
        p.remove_member(mi(2)).unwrap();
        p.set_usable_mask(MemberMask::first_n(4));
        assert_eq!(p.usable(), MemberMask::from_bits(0b1011));
        for sport in 0..1000u16 {
            let req = PlaceRequest::new(FlowKey::ipv4([1, 2, 3, 4], [5, 6, 7, 8], sport));
            assert_ne!(p.place(&req).unwrap(), mi(2), "{policy:?}");
        }
    }
}

#[test]
fn cleared_utilisation_weighs_idle_and_restarts_the_average() {
    let mut p = placer(Policy::Wrr, &[100, 100]);
    assert!(!p.utilisation_known(mi(0)));
    // 1 Gb/s for 1 s on a 1000 Mb/s link: full.
    assert_eq!(
        p.update_utilisation(mi(0), 125_000_000, 1_000_000_000, 1000),
        Some(1000)
    );
    assert!(p.utilisation_known(mi(0)));
    assert_eq!(p.effective_weight(mi(0)), wrr::effective_weight(100, 1000));
    p.clear_utilisation(mi(0));
    assert!(!p.utilisation_known(mi(0)));
    assert_eq!(p.utilisation(mi(0)), 0);
    assert_eq!(p.effective_weight(mi(0)), wrr::effective_weight(100, 0));
    // The next sample starts afresh instead of averaging with the old one.
    assert_eq!(
        p.update_utilisation(mi(0), 62_500_000, 1_000_000_000, 1000),
        Some(500)
    );
}
