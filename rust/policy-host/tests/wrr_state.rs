//! The integer window state of `SmoothWrr` is exactly nginx's `current`
//! state, across picks, weight changes and active-set changes.
#![allow(clippy::needless_range_loop)] // index loops read clearer in tests

use mrbond_policy::policy::wrr::SmoothWrr;
use mrbond_policy::{MemberIndex, MemberMask, MAX_MEMBERS};
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Pick,
    Weight(usize, u32),
    Active(u16),
    Rebase,
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(
        prop_oneof![
            20 => Just(Op::Pick),
            2 => (0..MAX_MEMBERS, prop_oneof![1u32..2000, 400u32..1_400_000, Just(0u32)])
                .prop_map(|(m, w)| Op::Weight(m, w)),
            1 => any::<u16>().prop_map(Op::Active),
            1 => Just(Op::Rebase),
        ],
        1..400,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn matches_nginx_state(ops in ops()) {
        let mut w = SmoothWrr::new();
        let mut weights = [0i64; MAX_MEMBERS];
        let mut active = MemberMask::EMPTY;
        // Reference nginx currents.
        let mut cur = [0i64; MAX_MEMBERS];
        let eligible = |weights: &[i64; MAX_MEMBERS], active: MemberMask| {
            active.iter().filter(|m| weights[m.get()] > 0).collect::<Vec<_>>()
        };
        for op in ops {
            match op {
                Op::Rebase => {
                    // Re-origining changes no decision: a clone that was not
                    // rebased picks the same members from here on.
                    let mut not_rebased = w;
                    w.rebase();
                    let mut rebased = w;
                    for _ in 0..64 {
                        prop_assert_eq!(rebased.pick(), not_rebased.pick());
                    }
                }
                Op::Pick => {
                    let el = eligible(&weights, active);
                    let total: i64 = el.iter().map(|m| weights[m.get()]).sum();
                    let got = w.pick();
                    if el.is_empty() {
                        prop_assert_eq!(got, None);
                        continue;
                    }
                    let g = got.unwrap();
                    prop_assert!(el.contains(&g));
                    for m in &el {
                        cur[m.get()] += weights[m.get()];
                    }
                    // Released: its current after adding its weight is positive.
                    prop_assert!(cur[g.get()] > 0, "picked an unreleased member");
                    // Earliest deadline among released members (ties: lowest index).
                    for m in &el {
                        let (i, j) = (m.get(), g.get());
                        if cur[i] > 0 {
                            // ceil-deadlines: member i's integer deadline is not earlier.
                            let di = (total - cur[i]).div_euclid(weights[i])
                                + i64::from((total - cur[i]).rem_euclid(weights[i]) > 0);
                            let dj = (total - cur[j]).div_euclid(weights[j])
                                + i64::from((total - cur[j]).rem_euclid(weights[j]) > 0);
                            prop_assert!(di >= dj, "a released member had an earlier deadline");
                            if di == dj && i < j {
                                prop_assert!(false, "tie not given to lowest index");
                            }
                        }
                    }
                    cur[g.get()] -= total;
                }
                Op::Weight(m, x) => {
                    let before = eligible(&weights, active);
                    weights[m] = i64::from(x);
                    w.set_weight(MemberIndex::new(m).unwrap(), x);
                    if eligible(&weights, active) != before {
                        cur = [0; MAX_MEMBERS];
                    }
                }
                Op::Active(bits) => {
                    let a = MemberMask::from_bits(bits);
                    if a != active {
                        cur = [0; MAX_MEMBERS];
                    }
                    active = a;
                    w.set_active(a);
                }
            }
            let el = eligible(&weights, active);
            let mut sum = 0;
            for i in 0..MAX_MEMBERS {
                let m = MemberIndex::new(i).unwrap();
                let want = if el.contains(&m) { cur[i] } else { 0 };
                prop_assert_eq!(w.current(m), want, "member {} current", i);
                sum += w.current(m);
            }
            prop_assert_eq!(sum, 0, "currents must sum to zero");
        }
    }
}
