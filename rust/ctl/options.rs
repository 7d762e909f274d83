// SPDX-License-Identifier: GPL-2.0

//! Settings written through sysfs or netlink, applied to a bond in one
//! place. The option table (`policy::options`) turns a sysfs text or a
//! netlink number into a validated setting; this module finds the members
//! the settings are for, changes nothing unless every one is found, applies
//! them under the bond's locks (state, then knob settings), and then does
//! what a change needs afterwards: PFC pushed to the members, an evaluation
//! pass. [`ReqError`] is the one error of a request: sysfs returns its
//! errno, netlink its errno and extack text.

#![deny(unsafe_code)]

use kernel::{c_str, prelude::*, str::CStr};

use crate::{
    ctl::bond::{Bond, Member},
    ctl::text::Name,
    ffi::{self, bond_change, KNOB_ECN_COUNT, NAME_MAX},
    knobs,
    policy::{
        knobs::{ConfigError, Knob},
        options::{BondOption, BondSetting, Input, MemberOption, MemberSetting},
        MemberIndex,
    },
};

/// A refused or failed request: the errno, and the extack text netlink
/// reports with it.
pub(crate) struct ReqError {
    pub(crate) errno: Error,
    pub(crate) message: Option<&'static [u8]>,
}

impl ReqError {
    /// `errno` with the text `message`.
    pub(crate) fn new(errno: Error, message: &'static CStr) -> Self {
        Self {
            errno,
            message: Some(message.as_bytes_with_nul()),
        }
    }

    /// A failure of the kernel or of our own bookkeeping that no input
    /// causes: the errno, with a message that says so.
    pub(crate) fn internal(errno: Error) -> Self {
        Self::new(errno, c_str!("mrbond: internal error (see the kernel log)"))
    }

    /// The errno as a sysfs store or a netlink handler returns it.
    pub(crate) fn to_errno(&self) -> i32 {
        self.errno.to_errno()
    }
}

impl From<ConfigError> for ReqError {
    /// A refused value: `-EINVAL`, with the policy core's text.
    fn from(e: ConfigError) -> Self {
        let errno = match e {
            ConfigError::NoSuchMember => ENOENT,
            _ => EINVAL,
        };
        Self {
            errno,
            message: Some(e.message_nul()),
        }
    }
}

/// The result of a request.
pub(crate) type ReqResult<T = ()> = core::result::Result<T, ReqError>;

/// The member a setting is for: a sysfs directory's slot, or a name given
/// over netlink.
#[derive(Clone, Copy)]
pub(crate) enum Target {
    /// `members/<dev>/` of this slot.
    Slot(MemberIndex),
    /// The member whose RDMA device has this name.
    Named(Name),
}

/// The slot of `target` in `members`, if it is a member now.
fn slot_of(members: &[Option<Member>], target: Target) -> ReqResult<MemberIndex> {
    match target {
        Target::Slot(m) => match members.get(m.get()) {
            Some(Some(_)) => Ok(m),
            _ => Err(ReqError::new(ENODEV, c_str!("mrbond: the member is gone"))),
        },
        Target::Named(name) => members
            .iter()
            .position(|x| {
                x.as_ref()
                    .is_some_and(|x| x.name.as_bytes() == name.as_bytes())
            })
            .and_then(MemberIndex::new)
            .ok_or(ConfigError::NoSuchMember.into()),
    }
}

/// Says in the log where stored ECN/DCQCN values stand: no member applies
/// the DCQCN parameters, and that is not to pass for a success.
fn log_ecn(bond: &Bond, changes: &[Option<(Knob, u64)>]) {
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

/// Applies validated settings to `bond`: every member target is found
/// before anything changes; the ECN values are stored together.
pub(crate) fn apply(
    bond: &Bond,
    bond_settings: &[Option<BondSetting>],
    member_settings: &[Option<(Target, MemberSetting)>],
) -> ReqResult {
    let mut ecn: [Option<(Knob, u64)>; KNOB_ECN_COUNT] = [None; KNOB_ECN_COUNT];
    let mut pfc_changed = false;
    let mut members_changed = false;
    let mut changes = 0u32;
    {
        let mut st = bond.state.lock();
        for &(target, _) in member_settings.iter().flatten() {
            slot_of(&st.members, target)?;
        }
        let mut settings = bond.knobs.settings.lock();
        for setting in bond_settings.iter().flatten() {
            if let BondSetting::Ecn(knob, value) = *setting {
                let slot = ecn
                    .get_mut(usize::from(knob.id()))
                    .ok_or(ConfigError::UnknownKnob)?;
                *slot = Some((knob, u64::from(value)));
            }
        }
        settings.set_ecn(&ecn)?;
        for setting in bond_settings.iter().flatten() {
            match *setting {
                BondSetting::Policy(p) => {
                    st.placer.set_policy(p);
                    changes |= bond_change::POLICY;
                }
                BondSetting::Ecn(..) => changes |= bond_change::ECN,
                BondSetting::PfcEnable(bitmap) => {
                    settings.set_pfc_bitmap(bitmap);
                    pfc_changed = true;
                    changes |= bond_change::PFC;
                }
            }
        }
        for &(target, setting) in member_settings.iter().flatten() {
            let m = slot_of(&st.members, target)?;
            match setting {
                MemberSetting::Weight(w) => st.placer.set_weight(m, w)?,
                MemberSetting::CapacityMbps(c) => st.set_capacity(m, c),
                MemberSetting::Admin(a) => {
                    if let Some(Some(member)) = st.members.get_mut(m.get()) {
                        member.admin = a;
                    }
                }
                MemberSetting::PfcOverride(v) => {
                    if let Some(Some(member)) = st.members.get(m.get()) {
                        settings.set_pfc_override(m.get(), &member.name, v);
                    }
                    pfc_changed = true;
                    changes |= bond_change::MEMBER_SET;
                    continue;
                }
            }
            members_changed = true;
            changes |= bond_change::MEMBER_SET;
        }
    }
    log_ecn(bond, &ecn);
    // Announced before PFC is pushed: the settings are stored, whatever
    // the members make of them (their status follows in the bond's view).
    bond.announce_change(changes);
    if members_changed {
        ffi::kick();
    }
    if pfc_changed {
        knobs::apply_pfc(bond).map_err(|e| ReqError {
            errno: Error::from_errno(-i32::from(e.0)),
            message: Some(
                c_str!("mrbond: PFC failed on a member and was rolled back there; see pfc status")
                    .as_bytes_with_nul(),
            ),
        })?;
    }
    Ok(())
}

/// A sysfs write to a bond's file of `opt` (`None`: a read-only file).
pub(crate) fn store_bond(bond: &Bond, opt: Option<BondOption>, input: &[u8]) -> i32 {
    let Some(opt) = opt else {
        return EPERM.to_errno();
    };
    opt.parse(Input::Text(input))
        .map_err(ReqError::from)
        .and_then(|s| apply(bond, &[Some(s)], &[]))
        .map_or_else(|e| e.to_errno(), |()| 0)
}

/// A sysfs write to `members/<dev>/` of member `slot`.
pub(crate) fn store_member(bond: &Bond, slot: u32, opt: Option<MemberOption>, input: &[u8]) -> i32 {
    let Some(m) = usize::try_from(slot).ok().and_then(MemberIndex::new) else {
        return EINVAL.to_errno();
    };
    let Some(opt) = opt else {
        return EPERM.to_errno();
    };
    opt.parse(Input::Text(input))
        .map_err(ReqError::from)
        .and_then(|s| apply(bond, &[], &[Some((Target::Slot(m), s))]))
        .map_or_else(|e| e.to_errno(), |()| 0)
}
