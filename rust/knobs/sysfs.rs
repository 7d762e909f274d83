// SPDX-License-Identifier: GPL-2.0

//! `mrbond/ecn/`, `mrbond/pfc/` and `mrbond/counters/`; a member's
//! `pfc_override`, `pfc_target`, `status/` and `counters/`
//! (`Documentation/ABI/testing/sysfs-class-infiniband-mrbond`). One value
//! per file. A refused write returns `-EINVAL` and changes nothing; a PFC
//! write that fails on a member returns that member's error, every
//! member's outcome being in its `status/pfc`.

use kernel::prelude::*;

use crate::{
    ctl::bond::Bond,
    ctl::options,
    ctl::text::emit,
    ffi::KNOB_ECN_COUNT,
    policy::{
        congestion::{member_knob_status, Counters, COUNTER_COUNT},
        knobs::Knob,
        options::{BondOption, MemberOption},
        MemberIndex,
    },
};

use super::report;

/// The ids of the knob files besides the ECN knobs' (whose ids are their
/// knobs' ids).
pub(crate) mod knob_attr {
    pub(crate) const PFC_ENABLE: u32 = 34;
    /// In `members/<dev>/`.
    pub(crate) const PFC_OVERRIDE: u32 = 37;
    /// In `members/<dev>/`: the bitmap the bond wants on that member.
    pub(crate) const PFC_TARGET: u32 = 38;
    /// In `members/<dev>/status/`: one knob's status each.
    pub(crate) const STATUS_ECN_ENABLE: u32 = 40;
    pub(crate) const STATUS_TCLASS: u32 = 41;
    pub(crate) const STATUS_DCQCN: u32 = 42;
    pub(crate) const STATUS_PFC: u32 = 43;
    /// `counters/` (the bond's sums, a member's own): this plus the index
    /// in `policy::congestion::COUNTER_NAMES`.
    pub(crate) const COUNTER0: u32 = 64;
}

fn ecn_knob(attr: u32) -> Option<Knob> {
    let id = u16::try_from(attr).ok()?;
    Knob::from_id(id).filter(|k| usize::from(k.id()) < KNOB_ECN_COUNT)
}

/// The counter index of file `attr` of a `counters/` directory.
fn counter_index(attr: u32) -> Option<usize> {
    let i = usize::try_from(attr.checked_sub(knob_attr::COUNTER0)?).ok()?;
    (i < COUNTER_COUNT).then_some(i)
}

/// A PFC bitmap as sysfs shows it: `0x08`, or `none`.
struct BitmapText(Option<u8>);

impl core::fmt::Display for BitmapText {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.0 {
            Some(v) => write!(f, "0x{:02x}", v),
            None => f.write_str("none"),
        }
    }
}

/// Counter `index` of `counters`; a counter no member has reads as
/// `-EOPNOTSUPP` rather than a zero that would pass for a measurement.
fn show_counter(counters: Result<Counters>, index: usize, page: &mut [u8]) -> isize {
    match counters.map(|c| c.0.get(index).copied().flatten()) {
        Ok(Some(v)) => emit(page, format_args!("{}\n", v)),
        // 6.12's error codes lack EOPNOTSUPP (ENOTSUPP is kernel-internal).
        Ok(None) => -(kernel::bindings::EOPNOTSUPP as isize),
        Err(e) => e.to_errno() as isize,
    }
}

/// Shows a file of `mrbond/ecn/`, `mrbond/pfc/` or `mrbond/counters/`.
pub(crate) fn bond_show(bond: &Bond, attr: u32, page: &mut [u8]) -> isize {
    if let Some(knob) = ecn_knob(attr) {
        let v = bond.knobs.settings.lock().value(knob);
        return emit(page, format_args!("{}\n", v));
    }
    if let Some(index) = counter_index(attr) {
        let sums =
            report::snapshot(bond).map(|info| report::counters(&info.counters, info.counters_mask));
        return show_counter(sums, index, page);
    }
    match attr {
        knob_attr::PFC_ENABLE => {
            let v = bond.knobs.settings.lock().pfc_bitmap();
            emit(page, format_args!("{}\n", BitmapText(v)))
        }
        _ => EINVAL.to_errno() as isize,
    }
}

/// Stores an ECN knob, or the PFC bitmap (then applies PFC).
pub(crate) fn bond_store(bond: &Bond, attr: u32, input: &[u8]) -> i32 {
    let opt = match attr {
        knob_attr::PFC_ENABLE => Some(BondOption::PfcEnable),
        _ => ecn_knob(attr).map(BondOption::Ecn),
    };
    options::store_bond(bond, opt, input)
}

/// Shows a member's `pfc_override`, `pfc_target`, or a file of its
/// `status/` or `counters/`.
pub(crate) fn member_show(bond: &Bond, slot: u32, attr: u32, page: &mut [u8]) -> isize {
    let Some(m) = usize::try_from(slot).ok().and_then(MemberIndex::new) else {
        return EINVAL.to_errno() as isize;
    };
    if let Some(index) = counter_index(attr) {
        return show_counter(report::member_counters(bond, m), index, page);
    }
    let st = bond.state.lock();
    let Some(Some(member)) = st.members.get(m.get()) else {
        return ENODEV.to_errno() as isize;
    };
    let settings = bond.knobs.settings.lock();
    let status_of = |knob| {
        let pfc = settings.pfc_status(m.get(), &member.name, member.netdev);
        member_knob_status(knob, pfc)
    };
    let status = match attr {
        knob_attr::PFC_OVERRIDE => {
            let v = settings.member(m.get(), &member.name).pfc_override;
            return emit(page, format_args!("{}\n", BitmapText(v)));
        }
        knob_attr::PFC_TARGET => {
            let v = settings.pfc_target(m.get(), &member.name);
            return emit(page, format_args!("{}\n", BitmapText(v)));
        }
        knob_attr::STATUS_ECN_ENABLE => status_of(Knob::EcnEnable),
        knob_attr::STATUS_TCLASS => status_of(Knob::Tclass),
        // Every DCQCN parameter has the status of np_enable.
        knob_attr::STATUS_DCQCN => status_of(Knob::NpEnable),
        knob_attr::STATUS_PFC => status_of(Knob::PfcEnable),
        _ => None,
    };
    match status {
        Some(s) => emit(page, format_args!("{}\n", s)),
        None => EINVAL.to_errno() as isize,
    }
}

/// Stores `members/<dev>/pfc_override` (`none` clears it), then applies PFC.
pub(crate) fn member_store(bond: &Bond, slot: u32, attr: u32, input: &[u8]) -> i32 {
    let opt = (attr == knob_attr::PFC_OVERRIDE).then_some(MemberOption::PfcOverride);
    options::store_member(bond, slot, opt, input)
}
