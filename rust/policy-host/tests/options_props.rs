// SPDX-License-Identifier: GPL-2.0
//! The option table: sysfs text and netlink numbers give the same setting,
//! and what one refuses the other refuses too.

use mrbond_policy::policy::eligibility::AdminState;
use mrbond_policy::policy::knobs::ConfigError;
use mrbond_policy::policy::knobs::Knob;
use mrbond_policy::policy::options::*;
use mrbond_policy::policy::placement::Policy;
use proptest::prelude::*;

proptest! {
    /// Any number, written to sysfs in decimal or hex or sent over netlink,
    /// gives the same setting or the same refusal, for every numeric option.
    #[test]
    fn text_and_number_agree_for_any_value(n in prop_oneof![
        any::<u64>(), 0u64..70_000, Just(256u64), Just(u64::from(u32::MAX) + 1),
    ]) {
        let dec = format!("{n}\n");
        let hex = format!("0x{n:x}");
        for opt in [MemberOption::Weight, MemberOption::CapacityMbps, MemberOption::PfcOverride] {
            let wire = opt.parse(Input::Number(n));
            prop_assert_eq!(opt.parse(Input::Text(dec.as_bytes())), wire);
            prop_assert_eq!(opt.parse(Input::Text(hex.as_bytes())), wire);
        }
        let knobs = Knob::ALL.iter().filter(|k| k.is_ecn()).map(|&k| BondOption::Ecn(k));
        for opt in knobs.chain([BondOption::PfcEnable]) {
            let wire = opt.parse(Input::Number(n));
            prop_assert_eq!(opt.parse(Input::Text(dec.as_bytes())), wire);
            prop_assert_eq!(opt.parse(Input::Text(hex.as_bytes())), wire);
        }
    }
}

#[test]
fn text_and_number_agree() {
    for (text, n) in [
        (&b"0\n"[..], 0u64),
        (b"100", 100),
        (b"0x10", 16),
        (b"65535", 65535),
    ] {
        for opt in [MemberOption::Weight, MemberOption::CapacityMbps] {
            assert_eq!(opt.parse(Input::Text(text)), opt.parse(Input::Number(n)));
        }
    }
    let admin = [
        (AdminState::Up, "up"),
        (AdminState::Drain, "drain"),
        (AdminState::Down, "down"),
    ];
    for (i, (state, name)) in admin.iter().enumerate() {
        let by_name = MemberOption::Admin.parse(Input::Text(name.as_bytes()));
        assert_eq!(by_name, Ok(MemberSetting::Admin(*state)));
        assert_eq!(by_name, MemberOption::Admin.parse(Input::Number(i as u64)));
        assert_eq!(admin_id(*state), i as u32);
        assert_eq!(admin_name(*state), *name);
    }
    for (i, p) in Policy::ALL.iter().enumerate() {
        assert_eq!(
            BondOption::Policy.parse(Input::Text(p.name().as_bytes())),
            BondOption::Policy.parse(Input::Number(i as u64))
        );
    }
}

#[test]
fn refusals() {
    assert_eq!(
        MemberOption::Admin.parse(Input::Number(3)),
        Err(ConfigError::UnknownAdminState)
    );
    assert_eq!(
        MemberOption::Admin.parse(Input::Text(b"sideways")),
        Err(ConfigError::UnknownAdminState)
    );
    assert_eq!(
        BondOption::Policy.parse(Input::Number(Policy::ALL.len() as u64)),
        Err(ConfigError::UnknownPolicy)
    );
    assert_eq!(
        MemberOption::PfcOverride.parse(Input::Clear),
        Ok(MemberSetting::PfcOverride(None))
    );
    assert_eq!(
        MemberOption::PfcOverride.parse(Input::Text(b"none\n")),
        Ok(MemberSetting::PfcOverride(None))
    );
    assert_eq!(
        BondOption::PfcEnable.parse(Input::Number(256)),
        BondOption::PfcEnable.parse(Input::Text(b"256"))
    );
    assert!(BondOption::PfcEnable.parse(Input::Number(256)).is_err());
    assert_eq!(
        MemberOption::Weight.parse(Input::Clear),
        Err(ConfigError::NotANumber)
    );
    assert_eq!(
        BondOption::Ecn(Knob::Weight).parse(Input::Number(1)),
        Err(ConfigError::UnknownKnob)
    );
}
