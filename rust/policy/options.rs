// SPDX-License-Identifier: GPL-2.0

//! Every setting an operator writes, in one table for both interfaces: a
//! sysfs file brings text, a netlink attribute a number, and each option
//! turns either into the same validated [`BondSetting`] or
//! [`MemberSetting`] here, so that sysfs and netlink cannot accept
//! different things (as bonding's `bond_options.c`). Applying a setting is
//! the driver's; nothing here holds state.

use super::eligibility::AdminState;
use super::knobs::{self, ConfigError, Knob};
use super::placement::Policy;

/// A value as an interface delivers it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Input<'a> {
    /// What was written to a sysfs file (a trailing newline is fine).
    Text(&'a [u8]),
    /// A netlink attribute: a number, or the UAPI number of a name.
    Number(u64),
    /// A netlink flag that clears the setting (sysfs writes `none`).
    Clear,
}

/// A writable setting of a bond.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BondOption {
    /// `policy`: the placement policy.
    Policy,
    /// One ECN/DCQCN knob (`ecn/<knob>`).
    Ecn(Knob),
    /// `pfc/enable`: the bond's PFC priority bitmap.
    PfcEnable,
}

/// A validated bond setting.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BondSetting {
    /// The placement policy.
    Policy(Policy),
    /// An ECN/DCQCN knob and its value.
    Ecn(Knob, u32),
    /// The PFC priority bitmap.
    PfcEnable(u8),
}

/// A writable setting of one member.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MemberOption {
    /// `weight`: the member's share under WRR.
    Weight,
    /// `capacity_mbps`: the rate WRR divides its traffic by (0: link speed).
    CapacityMbps,
    /// `admin`: up, drain or down.
    Admin,
    /// `pfc_override`: the member's own PFC bitmap, or none.
    PfcOverride,
}

/// A validated member setting.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MemberSetting {
    /// The WRR weight.
    Weight(u16),
    /// The capacity in Mb/s.
    CapacityMbps(u32),
    /// The admin state.
    Admin(AdminState),
    /// The PFC override (`None`: follow the bond).
    PfcOverride(Option<u8>),
}

/// The policy of a UAPI number (`enum rdma_mrbond_policy`: the order of
/// [`Policy::ALL`]).
pub fn policy_from_id(id: u64) -> Option<Policy> {
    Policy::ALL.get(usize::try_from(id).ok()?).copied()
}

/// Admin states by UAPI number (`enum rdma_mrbond_admin_state`), with their
/// sysfs words.
const ADMIN_STATES: [(AdminState, &str); 3] = [
    (AdminState::Up, "up"),
    (AdminState::Drain, "drain"),
    (AdminState::Down, "down"),
];

/// The UAPI number of an admin state.
pub fn admin_id(a: AdminState) -> u32 {
    match a {
        AdminState::Up => 0,
        AdminState::Drain => 1,
        AdminState::Down => 2,
    }
}

/// The sysfs word of an admin state.
pub fn admin_name(a: AdminState) -> &'static str {
    ADMIN_STATES
        .iter()
        .find(|(s, _)| *s == a)
        .map_or("?", |(_, n)| *n)
}

/// The admin state of a UAPI number.
pub fn admin_from_id(id: u64) -> Result<AdminState, ConfigError> {
    let i = usize::try_from(id).map_err(|_| ConfigError::UnknownAdminState)?;
    ADMIN_STATES
        .get(i)
        .map(|(s, _)| *s)
        .ok_or(ConfigError::UnknownAdminState)
}

fn admin_from_name(text: &[u8]) -> Result<AdminState, ConfigError> {
    let text = knobs::trim(text);
    ADMIN_STATES
        .iter()
        .find(|(_, n)| n.as_bytes() == text)
        .map(|(s, _)| *s)
        .ok_or(ConfigError::UnknownAdminState)
}

/// A number from either interface; `Clear` is not one.
fn number(input: Input<'_>) -> Result<u64, ConfigError> {
    match input {
        Input::Text(t) => knobs::parse_number(t),
        Input::Number(n) => Ok(n),
        Input::Clear => Err(ConfigError::NotANumber),
    }
}

impl BondOption {
    /// Validates `input` for this option.
    pub fn parse(self, input: Input<'_>) -> Result<BondSetting, ConfigError> {
        match self {
            BondOption::Policy => match input {
                Input::Text(t) => Policy::from_name(t),
                Input::Number(n) => policy_from_id(n).ok_or(ConfigError::UnknownPolicy),
                Input::Clear => Err(ConfigError::UnknownPolicy),
            }
            .map(BondSetting::Policy),
            BondOption::Ecn(knob) => {
                if !knob.is_ecn() {
                    return Err(ConfigError::UnknownKnob);
                }
                Ok(BondSetting::Ecn(knob, knob.validate(number(input)?)?))
            }
            BondOption::PfcEnable => Ok(BondSetting::PfcEnable(knobs::validate_pfc_bitmap(
                number(input)?,
            )?)),
        }
    }
}

impl MemberOption {
    /// Validates `input` for this option.
    pub fn parse(self, input: Input<'_>) -> Result<MemberSetting, ConfigError> {
        match self {
            MemberOption::Weight => Ok(MemberSetting::Weight(knobs::validate_weight(number(
                input,
            )?)?)),
            MemberOption::CapacityMbps => Ok(MemberSetting::CapacityMbps(
                knobs::validate_capacity_mbps(number(input)?)?,
            )),
            MemberOption::Admin => match input {
                Input::Text(t) => admin_from_name(t),
                Input::Number(n) => admin_from_id(n),
                Input::Clear => Err(ConfigError::UnknownAdminState),
            }
            .map(MemberSetting::Admin),
            MemberOption::PfcOverride => match input {
                Input::Clear => Ok(None),
                Input::Text(t) => knobs::parse_pfc_override(t),
                Input::Number(n) => knobs::validate_pfc_bitmap(n).map(Some),
            }
            .map(MemberSetting::PfcOverride),
        }
    }
}
