// SPDX-License-Identifier: GPL-2.0

//! ECN_SET, PFC_SET and the knob part of BOND_GET. Every value goes through
//! the option table before anything changes; refusals carry its extack
//! text.

use kernel::{c_str, prelude::*, sync::Arc};

use crate::{
    ctl::bond::Bond,
    ctl::options::{self, ReqError, ReqResult, Target},
    ctl::registry::Registry,
    ctl::text::Name,
    ffi::{EcnSpec, KnobsInfo, PfcSpec, KNOB_ECN_COUNT, MAX_MEMBERS, NAME_MAX},
    policy::{
        knobs::{ConfigError, Knob},
        options::{BondOption, BondSetting, Input, MemberOption, MemberSetting},
    },
};

use super::report;

fn bond_named(reg: &Registry, name: &[u8; NAME_MAX]) -> ReqResult<Arc<Bond>> {
    let name = Name::new(name).ok_or(ReqError::new(EINVAL, c_str!("bad bond name")))?;
    reg.bond_named(name.as_bytes())
        .ok_or(ReqError::new(ENODEV, c_str!("no such bond")))
}

/// ECN_SET: all given values validated, then stored together.
pub(crate) fn ecn_set(reg: &Registry, spec: &EcnSpec) -> ReqResult {
    let bond = bond_named(reg, &spec.name)?;
    let mut changes: [Option<BondSetting>; KNOB_ECN_COUNT] = [None; KNOB_ECN_COUNT];
    for (i, (dst, &value)) in changes.iter_mut().zip(spec.values.iter()).enumerate() {
        if spec.mask & 1u32.checked_shl(i as u32).unwrap_or(0) == 0 {
            continue;
        }
        let knob = u16::try_from(i)
            .ok()
            .and_then(Knob::from_id)
            .ok_or(ConfigError::UnknownKnob)?;
        *dst = Some(BondOption::Ecn(knob).parse(Input::Number(value))?);
    }
    if changes.iter().all(Option::is_none) {
        return Err(ConfigError::NothingToSet.into());
    }
    options::apply(&bond, &changes, &[])
}

/// PFC_SET: the bitmap and every override validated, every member named
/// found, then stored, then applied member by member.
pub(crate) fn pfc_set(reg: &Registry, spec: &PfcSpec) -> ReqResult {
    let bond = bond_named(reg, &spec.name)?;
    let bitmap = if spec.has_bitmap != 0 {
        Some(BondOption::PfcEnable.parse(Input::Number(spec.bitmap))?)
    } else {
        None
    };
    if bitmap.is_none() && spec.members().is_empty() {
        return Err(ConfigError::NothingToSet.into());
    }
    let mut overrides: [Option<(Target, MemberSetting)>; MAX_MEMBERS] = [None; MAX_MEMBERS];
    for (dst, m) in overrides.iter_mut().zip(spec.members()) {
        let name =
            Name::new(&m.ibdev).ok_or(ReqError::new(EINVAL, c_str!("bad member device name")))?;
        let input = match (m.has_override != 0, m.clear != 0) {
            (true, true) => return Err(ConfigError::ConflictingOverride.into()),
            (true, false) => Input::Number(m.pfc_override),
            (false, true) => Input::Clear,
            (false, false) => return Err(ConfigError::NothingToSet.into()),
        };
        *dst = Some((Target::Named(name), MemberOption::PfcOverride.parse(input)?));
    }
    options::apply(&bond, &[bitmap], &overrides)
}

/// The knob snapshot of the bond named `name`, with counters.
pub(crate) fn knobs_info(reg: &Registry, name: &[u8], info: &mut KnobsInfo) -> Result {
    let bond = reg.bond_named(name).ok_or(ENOENT)?;
    report::fill(&bond, info, report::Reads::Counters);
    Ok(())
}
