// SPDX-License-Identifier: GPL-2.0

//! `mrbond/ecn/`, `mrbond/pfc/` and `members/<dev>/pfc_override`
//! (`Documentation/ABI/testing/sysfs-class-infiniband-mrbond`). A refused
//! write returns `-EINVAL` and changes nothing; a PFC write that fails on a
//! member returns that member's error, every member's outcome being in
//! `pfc/status`.

use core::fmt::Write;

use kernel::prelude::*;

use crate::{
    ctl::bond::Bond,
    ctl::options,
    ctl::text::{emit, BufWriter},
    ffi::{KnobsInfo, KNOB_ECN_COUNT},
    policy::{
        congestion::{member_knob_status, Counters, COUNTERS, COUNTER_COUNT, PAUSE_COUNTERS},
        knobs::Knob,
        options::{BondOption, MemberOption},
        MemberIndex,
    },
};

use super::report;

/// The ids of the knob files besides the ECN knobs' (whose ids are their
/// knobs' ids).
pub(crate) mod knob_attr {
    pub(crate) const ECN_STATUS: u32 = 32;
    pub(crate) const ECN_COUNTERS: u32 = 33;
    pub(crate) const PFC_ENABLE: u32 = 34;
    pub(crate) const PFC_STATUS: u32 = 35;
    pub(crate) const PFC_COUNTERS: u32 = 36;
    /// In `members/<dev>/`.
    pub(crate) const PFC_OVERRIDE: u32 = 37;
}

fn ecn_knob(attr: u32) -> Option<Knob> {
    let id = u16::try_from(attr).ok()?;
    Knob::from_id(id).filter(|k| usize::from(k.id()) < KNOB_ECN_COUNT)
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

fn written(w: &BufWriter<'_>) -> isize {
    isize::try_from(w.len()).unwrap_or(0)
}

/// One line per knob (`dcqcn` for all of np_* and rp_*) per member.
fn ecn_status(bond: &Bond, page: &mut [u8]) -> isize {
    let mut w = BufWriter::new(page);
    let st = bond.state.lock();
    let settings = bond.knobs.settings.lock();
    for (slot, m) in st.members.iter().enumerate() {
        let Some(m) = m else { continue };
        let pfc = settings.pfc_status(slot, &m.name, m.netdev);
        for (label, knob) in [
            ("ecn_enable", Knob::EcnEnable),
            ("tclass", Knob::Tclass),
            // Every DCQCN parameter has the status of np_enable.
            ("dcqcn", Knob::NpEnable),
        ] {
            if let Some(s) = member_knob_status(knob, pfc) {
                let _ = writeln!(w, "{} {} {}", m.name.as_cstr(), label, s);
            }
        }
    }
    written(&w)
}

/// `<member> <target> <status>` per member.
fn pfc_status(bond: &Bond, page: &mut [u8]) -> isize {
    let mut w = BufWriter::new(page);
    let st = bond.state.lock();
    let settings = bond.knobs.settings.lock();
    for (slot, m) in st.members.iter().enumerate() {
        let Some(m) = m else { continue };
        let _ = writeln!(
            w,
            "{} {} {}",
            m.name.as_cstr(),
            BitmapText(settings.pfc_target(slot, &m.name)),
            settings.pfc_status(slot, &m.name, m.netdev)
        );
    }
    written(&w)
}

/// `[<member> ]<counter> <value>|unavailable` for the counters in `range`.
fn write_counters(
    w: &mut BufWriter<'_>,
    member: &str,
    c: &Counters,
    range: core::ops::Range<usize>,
) {
    let sep = if member.is_empty() { "" } else { " " };
    for i in range {
        let (Some(name), Some(v)) = (COUNTERS.get(i), c.0.get(i)) else {
            continue;
        };
        let _ = match v {
            Some(v) => writeln!(w, "{}{}{} {}", member, sep, name, v),
            None => writeln!(w, "{}{}{} unavailable", member, sep, name),
        };
    }
}

/// Bond sums first, then every member's counters.
fn counters(bond: &Bond, page: &mut [u8], range: core::ops::Range<usize>) -> isize {
    let info: KBox<KnobsInfo> = match report::snapshot(bond) {
        Ok(i) => i,
        Err(e) => return e.to_errno() as isize,
    };
    let mut w = BufWriter::new(page);
    let sum = report::counters(&info.counters, info.counters_mask);
    write_counters(&mut w, "", &sum, range.clone());
    let n = usize::try_from(info.nmembers).unwrap_or(0);
    for row in info.members.iter().take(n) {
        let end = row.ibdev.iter().position(|&b| b == 0).unwrap_or(0);
        let name = core::str::from_utf8(row.ibdev.get(..end).unwrap_or(&[])).unwrap_or("?");
        let c = report::counters(&row.counters, row.counters_mask);
        write_counters(&mut w, name, &c, range.clone());
    }
    written(&w)
}

/// Shows a file of `mrbond/ecn/` or `mrbond/pfc/`.
pub(crate) fn bond_show(bond: &Bond, attr: u32, page: &mut [u8]) -> isize {
    if let Some(knob) = ecn_knob(attr) {
        let v = bond.knobs.settings.lock().value(knob);
        return emit(page, format_args!("{}\n", v));
    }
    match attr {
        knob_attr::ECN_STATUS => ecn_status(bond, page),
        knob_attr::ECN_COUNTERS => counters(bond, page, 0..PAUSE_COUNTERS),
        knob_attr::PFC_ENABLE => {
            let v = bond.knobs.settings.lock().pfc_bitmap();
            emit(page, format_args!("{}\n", BitmapText(v)))
        }
        knob_attr::PFC_STATUS => pfc_status(bond, page),
        knob_attr::PFC_COUNTERS => counters(bond, page, PAUSE_COUNTERS..COUNTER_COUNT),
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

/// Shows `members/<dev>/pfc_override`.
pub(crate) fn member_show(bond: &Bond, slot: u32, attr: u32, page: &mut [u8]) -> isize {
    let Some(m) = usize::try_from(slot).ok().and_then(MemberIndex::new) else {
        return EINVAL.to_errno() as isize;
    };
    if attr != knob_attr::PFC_OVERRIDE {
        return EINVAL.to_errno() as isize;
    }
    let st = bond.state.lock();
    let Some(Some(member)) = st.members.get(m.get()) else {
        return ENODEV.to_errno() as isize;
    };
    let v = bond
        .knobs
        .settings
        .lock()
        .member(m.get(), &member.name)
        .pfc_override;
    emit(page, format_args!("{}\n", BitmapText(v)))
}

/// Stores `members/<dev>/pfc_override` (`none` clears it), then applies PFC.
pub(crate) fn member_store(bond: &Bond, slot: u32, attr: u32, input: &[u8]) -> i32 {
    let opt = (attr == knob_attr::PFC_OVERRIDE).then_some(MemberOption::PfcOverride);
    options::store_member(bond, slot, opt, input)
}
