// SPDX-License-Identifier: GPL-2.0

//! ECN_SET, PFC_SET and the knob part of BOND_GET. Every value is validated
//! by the policy core before anything changes; refusals carry its extack
//! text.

use kernel::{c_str, prelude::*, sync::Arc};

use crate::{
    bond::{Bond, Name},
    ffi::{EcnSpec, KnobsInfo, PfcSpec, KNOB_ECN_COUNT, MAX_MEMBERS, NAME_MAX},
    policy::knobs::{self, ConfigError, Knob},
    registry::{Registry, ReqError},
};

use super::{pfc, report};

type ReqResult<T = ()> = core::result::Result<T, ReqError>;

fn config(e: ConfigError) -> ReqError {
    ReqError {
        errno: EINVAL,
        message: Some(e.message_nul()),
    }
}

fn bond_named(reg: &Registry, name: &[u8; NAME_MAX]) -> ReqResult<Arc<Bond>> {
    let name = Name::new(name).ok_or(ReqError {
        errno: EINVAL,
        message: Some(c_str!("bad bond name").as_bytes_with_nul()),
    })?;
    reg.bond_named(name.as_bytes()).ok_or(ReqError {
        errno: ENODEV,
        message: Some(c_str!("no such bond").as_bytes_with_nul()),
    })
}

/// Says in the log where stored DCQCN parameters stand: no member applies
/// them, and that is not to pass for a success.
pub(super) fn log_ecn(bond: &Bond, changes: &[Option<(Knob, u64)>]) {
    let mut name = [0u8; NAME_MAX];
    bond.name(&mut name);
    let name = Name::new(&name);
    let bond_name = name.as_ref().map_or(c_str!("mrbond"), |n| n.as_cstr());
    for &(knob, value) in changes.iter().flatten() {
        if knob.is_congestion_control() {
            pr_notice!(
                "{}: {} = {} stored, unsupported on every member (no kernel interface for DCQCN parameters)\n",
                bond_name,
                knob.name(),
                value
            );
        } else {
            pr_info!("{}: {} = {}\n", bond_name, knob.name(), value);
        }
    }
}

/// ECN_SET: all given values validated, then stored together.
pub(crate) fn ecn_set(reg: &Registry, spec: &EcnSpec) -> ReqResult {
    let bond = bond_named(reg, &spec.name)?;
    let mut changes: [Option<(Knob, u64)>; KNOB_ECN_COUNT] = [None; KNOB_ECN_COUNT];
    for (i, (dst, &value)) in changes.iter_mut().zip(spec.values.iter()).enumerate() {
        if spec.mask & 1u32.checked_shl(i as u32).unwrap_or(0) == 0 {
            continue;
        }
        let knob = u16::try_from(i)
            .ok()
            .and_then(Knob::from_id)
            .ok_or(config(ConfigError::UnknownKnob))?;
        *dst = Some((knob, value));
    }
    if changes.iter().all(Option::is_none) {
        return Err(config(ConfigError::NothingToSet));
    }
    bond.knobs
        .settings
        .lock()
        .set_ecn(&changes)
        .map_err(config)?;
    log_ecn(&bond, &changes);
    Ok(())
}

/// PFC_SET: the bitmap and every override validated, every member named
/// checked, then stored, then applied member by member.
pub(crate) fn pfc_set(reg: &Registry, spec: &PfcSpec) -> ReqResult {
    let bond = bond_named(reg, &spec.name)?;
    let bitmap = if spec.has_bitmap != 0 {
        Some(knobs::validate_pfc_bitmap(spec.bitmap).map_err(config)?)
    } else {
        None
    };
    if bitmap.is_none() && spec.members().is_empty() {
        return Err(config(ConfigError::NothingToSet));
    }
    {
        let st = bond.state.lock();
        let mut overrides: [Option<(usize, Name, Option<u8>)>; MAX_MEMBERS] = [None; MAX_MEMBERS];
        for (dst, m) in overrides.iter_mut().zip(spec.members()) {
            let name = Name::new(&m.ibdev).ok_or(config(ConfigError::NoSuchMember))?;
            let slot = st
                .members
                .iter()
                .position(|x| {
                    x.as_ref()
                        .is_some_and(|x| x.name.as_bytes() == name.as_bytes())
                })
                .ok_or(ReqError {
                    errno: ENOENT,
                    message: Some(ConfigError::NoSuchMember.message_nul()),
                })?;
            let value = match (m.has_override != 0, m.clear != 0) {
                (true, true) => return Err(config(ConfigError::ConflictingOverride)),
                (true, false) => Some(knobs::validate_pfc_bitmap(m.pfc_override).map_err(config)?),
                (false, true) => None,
                (false, false) => return Err(config(ConfigError::NothingToSet)),
            };
            *dst = Some((slot, name, value));
        }
        let mut settings = bond.knobs.settings.lock();
        if let Some(b) = bitmap {
            settings.set_pfc_bitmap(b);
        }
        for &(slot, name, value) in overrides.iter().flatten() {
            settings.set_pfc_override(slot, &name, value);
        }
    }
    pfc::apply(&bond).map_err(|e| ReqError {
        errno: Error::from_errno(-i32::from(e.0)),
        message: Some(
            c_str!("mrbond: PFC failed on a member and was rolled back there; see pfc status")
                .as_bytes_with_nul(),
        ),
    })
}

/// The knob snapshot of the bond named `name`, with counters.
pub(crate) fn knobs_info(reg: &Registry, name: &[u8], info: &mut KnobsInfo) -> Result {
    let bond = reg.bond_named(name).ok_or(ENOENT)?;
    report::fill(&bond, info, report::Reads::Counters);
    Ok(())
}
