//! Property tests of knob validation and name parsing.

use mrbond_policy::policy::knobs::{self, KNOB_COUNT};
use mrbond_policy::{ConfigError, Knob, KnobValues, Policy};
use proptest::prelude::*;

proptest! {
    /// A value is accepted exactly when it is inside the knob's range, and is
    /// then stored unchanged; a refused value leaves the store as it was.
    #[test]
    fn validate_is_exactly_the_range(id in 0u16..KNOB_COUNT as u16, v in prop_oneof![
        any::<u64>(), 0u64..2_000_000, Just(u64::from(u32::MAX) + 1), Just(256u64),
    ]) {
        let k = Knob::from_id(id).unwrap();
        let inside = v >= u64::from(k.min()) && v <= u64::from(k.max());
        let mut store = KnobValues::DEFAULTS;
        match store.set(k, v) {
            Ok(stored) => {
                prop_assert!(inside);
                prop_assert_eq!(u64::from(stored), v);
                prop_assert_eq!(u64::from(store.get(k)), v);
            }
            Err(e) => {
                prop_assert!(!inside);
                prop_assert_eq!(e, ConfigError::OutOfRange(k));
                prop_assert_eq!(store, KnobValues::DEFAULTS);
                prop_assert!(e.message().contains(k.name()));
            }
        }
    }

    /// Parsers never panic and accept only the documented names.
    #[test]
    fn parsers_total(bytes in prop::collection::vec(any::<u8>(), 0..20)) {
        let p = Policy::from_name(&bytes);
        let t = knobs::trim(&bytes);
        prop_assert_eq!(p.is_ok(), Policy::ALL.iter().any(|x| x.name().as_bytes() == t));
        let m = knobs::parse_mode(&bytes);
        prop_assert_eq!(m.is_ok(), t == b"rail" || t == b"active-backup");
        let _ = Knob::from_name(&bytes);
    }

    #[test]
    fn pfc_bitmap_is_a_byte(v in any::<u64>()) {
        prop_assert_eq!(knobs::validate_pfc_bitmap(v).is_ok(), v <= 0xff);
    }
}

#[test]
fn knob_names_unique_and_ids_dense() {
    let mut names: Vec<&str> = Knob::ALL.iter().map(|k| k.name()).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), KNOB_COUNT);
    for (i, k) in Knob::ALL.iter().enumerate() {
        assert_eq!(usize::from(k.id()), i);
    }
}

#[test]
fn brief_section7_knobs_present() {
    for name in [
        "np_enable",
        "np_min_time_between_cnps",
        "np_cnp_dscp",
        "np_cnp_802p_prio",
        "rp_enable",
        "rp_clamp_tgt_rate",
        "rp_rpg_time_reset",
        "rp_rpg_byte_reset",
        "rp_rpg_threshold",
        "rp_rpg_ai_rate",
        "rp_rpg_hai_rate",
        "rp_rpg_gd",
        "rp_rpg_min_dec_fac",
        "rp_rpg_min_rate",
        "rp_dce_tcp_g",
        "rp_dce_tcp_rtt",
        "rp_initial_alpha_value",
        "rp_rate_reduce_monitor_period",
        "pfc_enable",
    ] {
        let k = Knob::from_name(name.as_bytes()).unwrap_or_else(|| panic!("{name}"));
        assert!(name == "pfc_enable" || k.is_congestion_control(), "{name}");
        assert!(name == "pfc_enable" || k.is_ecn(), "{name}");
    }
}
