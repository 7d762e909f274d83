//! Property tests of the ECN/PFC decisions: traffic class, per-member
//! status groups, PFC fan-out plans and outcomes, counter sums, parsers.

use mrbond_policy::policy::congestion::{member_knob_status, COUNTER_COUNT, REPORTED};
use mrbond_policy::policy::knobs;
use mrbond_policy::{
    pfc_outcome, pfc_plan, pfc_target, qp_traffic_class, status_groups, ConfigError, Counters,
    Errno, Knob, KnobStatus, PfcOutcome, PfcPlan, Unsupported,
};
use proptest::prelude::*;

fn status_strategy() -> impl Strategy<Value = KnobStatus> {
    prop_oneof![
        Just(KnobStatus::Unset),
        Just(KnobStatus::Pending),
        Just(KnobStatus::Applied),
        Just(KnobStatus::Unsupported(Unsupported::NoDcbnlSetpfc)),
        (1u16..200).prop_map(|e| KnobStatus::Failed(Errno(e))),
    ]
}

proptest! {
    /// DSCP bits come from the request (or the default for 0); the ECN bits
    /// are exactly ECT(0) with ECN on and 00 with it off.
    #[test]
    fn traffic_class_keeps_dscp(req in any::<u8>(), def in any::<u8>(), ecn in any::<bool>()) {
        let tc = qp_traffic_class(req, def, ecn);
        let base = if req == 0 { def } else { req };
        prop_assert_eq!(tc & 0xfc, base & 0xfc);
        prop_assert_eq!(tc & 0b11, if ecn { 0b10 } else { 0 });
    }

    /// The groups hold every reported knob exactly once, with its status.
    #[test]
    fn status_groups_are_lossless(pfc in status_strategy()) {
        let groups = status_groups(pfc);
        let mut seen = 0u32;
        for g in groups.iter().flatten() {
            prop_assert_eq!(seen & g.knobs, 0);
            seen |= g.knobs;
            for k in REPORTED {
                if g.knobs & (1 << k.id()) != 0 {
                    prop_assert_eq!(member_knob_status(k, pfc), Some(g.status));
                }
            }
        }
        let all: u32 = REPORTED.iter().map(|k| 1u32 << k.id()).sum();
        prop_assert_eq!(seen, all);
    }

    /// A member is changed only when it reads a different value; a probe
    /// error other than EOPNOTSUPP is a failure, never a success.
    #[test]
    fn plan_changes_only_what_differs(
        bond in proptest::option::of(any::<u8>()),
        over in proptest::option::of(any::<u8>()),
        probe in prop_oneof![any::<u8>().prop_map(Ok), (1u16..200).prop_map(|e| Err(Errno(e)))],
    ) {
        let target = pfc_target(bond, over);
        prop_assert_eq!(target, over.or(bond));
        match (target, probe, pfc_plan(target, probe)) {
            (None, _, PfcPlan::Leave) => {}
            (Some(t), Ok(cur), PfcPlan::Apply(v)) => {
                prop_assert_ne!(cur, t);
                prop_assert_eq!(v, t);
            }
            (Some(t), Ok(cur), PfcPlan::Report(KnobStatus::Applied)) => prop_assert_eq!(cur, t),
            (Some(_), Err(Errno::EOPNOTSUPP), PfcPlan::Report(KnobStatus::Unsupported(_))) => {}
            (Some(_), Err(e), PfcPlan::Report(KnobStatus::Failed(f))) => prop_assert_eq!(e, f),
            (t, p, plan) => prop_assert!(false, "{:?} {:?} -> {:?}", t, p, plan),
        }
    }

    /// Applied only when the set worked and the read-back matches.
    #[test]
    fn outcome_is_applied_only_on_match(
        wanted in any::<u8>(),
        set in prop_oneof![Just(Ok(())), (1u16..200).prop_map(|e| Err(Errno(e)))],
        rb in prop_oneof![any::<u8>().prop_map(Ok), (1u16..200).prop_map(|e| Err(Errno(e)))],
    ) {
        let o = pfc_outcome(wanted, set, rb);
        prop_assert_eq!(o == PfcOutcome::Applied, set.is_ok() && rb == Ok(wanted));
    }

    /// A sum is available where any member has the counter, and is the sum
    /// of the members that have it.
    #[test]
    fn counter_sums(members in prop::collection::vec(
        prop::collection::vec(proptest::option::of(0u64..1_000_000), COUNTER_COUNT), 0..16)) {
        let mut sum = Counters::default();
        for m in &members {
            let mut c = Counters::default();
            c.0.copy_from_slice(m);
            sum.add(&c);
        }
        for i in 0..COUNTER_COUNT {
            let have: Vec<u64> = members.iter().filter_map(|m| m[i]).collect();
            let want = if have.is_empty() { None } else { Some(have.iter().sum()) };
            prop_assert_eq!(sum.0[i], want);
        }
    }

    /// Numbers parse in decimal and 0x-hex, anything else is refused.
    #[test]
    fn parse_number_round_trips(v in any::<u64>()) {
        prop_assert_eq!(knobs::parse_number(format!("{v}\n").as_bytes()), Ok(v));
        prop_assert_eq!(knobs::parse_number(format!("0x{v:x}").as_bytes()), Ok(v));
        prop_assert_eq!(knobs::parse_number(format!("{v}x").as_bytes()), Err(ConfigError::NotANumber));
        // As kstrtou64: an optional '+', one trailing newline at most.
        prop_assert_eq!(knobs::parse_number(format!("+{v}\n").as_bytes()), Ok(v));
        prop_assert_eq!(knobs::parse_number(format!("{v}\n\n").as_bytes()), Err(ConfigError::NotANumber));
    }
}

#[test]
fn parse_edge_cases() {
    assert_eq!(knobs::parse_number(b""), Err(ConfigError::NotANumber));
    assert_eq!(knobs::parse_number(b"0x"), Err(ConfigError::NotANumber));
    assert_eq!(knobs::parse_number(b"-1"), Err(ConfigError::NotANumber));
    assert_eq!(
        knobs::parse_number(b"18446744073709551616"),
        Err(ConfigError::NotANumber)
    );
    assert_eq!(knobs::parse_pfc_override(b"none\n"), Ok(None));
    assert_eq!(knobs::parse_pfc_override(b"0x0c"), Ok(Some(0x0c)));
    assert_eq!(
        knobs::parse_pfc_override(b"0x100"),
        Err(ConfigError::OutOfRange(Knob::PfcEnable))
    );
    assert_eq!(
        knobs::parse_knob(Knob::RpRpgGd, b"16\n"),
        Err(ConfigError::OutOfRange(Knob::RpRpgGd))
    );
    assert_eq!(knobs::parse_knob(Knob::Tclass, b"0x68"), Ok(0x68));
}

#[test]
fn status_texts() {
    let s = |k: KnobStatus| k.to_string();
    assert_eq!(s(KnobStatus::Applied), "applied");
    assert_eq!(s(KnobStatus::Failed(Errno::EIO)), "failed(-EIO)");
    assert_eq!(s(KnobStatus::Failed(Errno(200))), "failed(-200)");
    assert_eq!(
        s(KnobStatus::Unsupported(Unsupported::NoDcbnlSetpfc)),
        "unsupported(no dcbnl ieee_setpfc)"
    );
    assert_eq!(Errno::from_ret(-5), Some(Errno::EIO));
    assert_eq!(Errno::from_ret(0), None);
    for r in [
        Unsupported::DcqcnNoKernelInterface,
        Unsupported::NoDcbnlSetpfc,
    ] {
        assert_eq!(Unsupported::from_id(r.id()), Some(r));
    }
}

/// The netlink `knob` flags and the sysfs attribute ids are the knob ids:
/// they must not move.
#[test]
fn knob_ids_are_stable() {
    assert_eq!(Knob::NpEnable.id(), 0);
    assert_eq!(Knob::RpRateReduceMonitorPeriod.id(), 17);
    assert_eq!(Knob::Tclass.id(), 18);
    assert_eq!(Knob::EcnEnable.id(), 19);
    assert_eq!(Knob::PfcEnable.id(), 20);
    for (i, k) in REPORTED.iter().enumerate() {
        assert_eq!(usize::from(k.id()), i);
        assert_eq!(k.is_ecn(), *k != Knob::PfcEnable);
    }
}

/// rxe members: marking applied, every DCQCN parameter unsupported with the
/// reason, PFC as recorded.
#[test]
fn rxe_member_groups() {
    let g = status_groups(KnobStatus::Failed(Errno::EIO));
    let groups: Vec<_> = g.iter().flatten().collect();
    assert_eq!(groups.len(), 3);
    assert_eq!(groups[0].knobs, (1 << 18) - 1);
    assert_eq!(
        groups[0].status,
        KnobStatus::Unsupported(Unsupported::DcqcnNoKernelInterface)
    );
    assert_eq!(groups[1].knobs, (1 << 18) | (1 << 19));
    assert_eq!(groups[1].status, KnobStatus::Applied);
    assert_eq!(groups[2].knobs, 1 << 20);
    assert_eq!(
        status_groups(KnobStatus::Applied).iter().flatten().count(),
        2
    );
}
