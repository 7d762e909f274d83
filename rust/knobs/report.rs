// SPDX-License-Identifier: GPL-2.0

//! A bond's knob snapshot: settings, the status of every knob on every
//! member, and congestion counters (member hw counters with mlx5's names,
//! ethtool 802.3x pause frames, dcbnl PFC frames per priority), summed
//! where available. Unavailable counters stay unavailable rather than zero.

use kernel::prelude::*;

use crate::{
    ctl::bond::Bond,
    ffi::{self, KnobGroup, KnobsInfo, HW_COUNTER_MAX, KNOB_ECN_COUNT},
    policy::{
        congestion::{
            status_groups, Counters, KnobStatus, COUNTER_COUNT, COUNTER_NAMES, PAUSE_COUNTERS,
            PFC_COUNTERS, PFC_PRIOS,
        },
        knobs::Knob,
        MemberIndex,
    },
};

/// The hw counters come first in `policy::congestion::COUNTER_NAMES`.
const HW_NAMES: [&core::ffi::CStr; HW_COUNTER_MAX] = {
    let mut names = [c""; HW_COUNTER_MAX];
    let mut i = 0;
    while i < HW_COUNTER_MAX {
        names[i] = COUNTER_NAMES[i];
        i += 1;
    }
    names
};

// The ethtool pause counters follow the hw counters.
const _: () = assert!(PAUSE_COUNTERS == HW_COUNTER_MAX);

fn group_of(status: KnobStatus, knobs: u32) -> KnobGroup {
    let (reason, err) = match status {
        KnobStatus::Unsupported(r) => (r.id(), 0),
        KnobStatus::Failed(e) => (0, u32::from(e.0)),
        _ => (0, 0),
    };
    KnobGroup {
        knobs,
        state: status.id(),
        reason,
        err,
    }
}

fn counters_of(values: &[u64; COUNTER_COUNT], mask: u32) -> Counters {
    let mut c = Counters::default();
    for (i, (dst, v)) in c.0.iter_mut().zip(values.iter()).enumerate() {
        if mask & 1u32.checked_shl(i as u32).unwrap_or(0) != 0 {
            *dst = Some(*v);
        }
    }
    c
}

/// What a snapshot reads from the members.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reads {
    /// Settings and statuses only.
    Status,
    /// Counters too: member hw counters, ethtool pause statistics and a
    /// dcbnl `ieee_getpfc` of every member netdev.
    Counters,
}

/// Fills `info` (zeroed) for the bond, with member counters if `reads`
/// says so: hw counters may sleep, pause and PFC statistics take RTNL, so
/// no lock of ours may be held by the caller.
pub(crate) fn fill(bond: &Bond, info: &mut KnobsInfo, reads: Reads) {
    let mut netdevs = [0u32; ffi::MAX_MEMBERS];
    {
        let st = bond.state.lock();
        let present = || {
            st.members
                .iter()
                .enumerate()
                .filter_map(|(s, m)| Some((s, m.as_ref()?)))
        };
        {
            let settings = bond.knobs.settings.lock();
            for (dst, knob) in info
                .ecn
                .iter_mut()
                .zip(Knob::ALL.iter().take(KNOB_ECN_COUNT))
            {
                *dst = settings.value(*knob);
            }
            info.pfc_set = u8::from(settings.pfc_bitmap().is_some());
            info.pfc_bitmap = settings.pfc_bitmap().unwrap_or(0);
            for (row, (slot, member)) in info.members.iter_mut().zip(present()) {
                member.name.copy_to(&mut row.ibdev);
                let mk = settings.member(slot, &member.name);
                row.has_override = u8::from(mk.pfc_override.is_some());
                row.pfc_override = mk.pfc_override.unwrap_or(0);
                let pfc = settings.pfc_status(slot, &member.name, member.netdev);
                for (dst, g) in row
                    .groups
                    .iter_mut()
                    .zip(status_groups(pfc).iter().flatten())
                {
                    *dst = group_of(g.status, g.knobs);
                    row.ngroups = row.ngroups.saturating_add(1);
                }
                info.nmembers = info.nmembers.saturating_add(1);
            }
        }
        if reads == Reads::Status {
            return;
        }
        // Member handles are valid under the state lock; the settings lock
        // is not held while a driver reads its counters.
        for ((row, netdev), (_, member)) in info
            .members
            .iter_mut()
            .zip(netdevs.iter_mut())
            .zip(present())
        {
            if let Some(dev) = member.dev.as_ref() {
                let mut hw = [0u64; HW_COUNTER_MAX];
                row.counters_mask = dev.hw_counters(&HW_NAMES, &mut hw);
                for (dst, v) in row.counters.iter_mut().zip(hw) {
                    *dst = v;
                }
                *netdev = member.netdev;
            }
        }
    }
    // Pause and PFC statistics take RTNL: with no lock of ours held.
    let mut sum = Counters::default();
    for (row, &netdev) in info.members.iter_mut().zip(netdevs.iter()) {
        if netdev != 0 {
            read_netdev_counters(netdev, &mut row.counters, &mut row.counters_mask);
        }
        sum.add(&counters_of(&row.counters, row.counters_mask));
    }
    info.counters_mask = sum.available_mask();
    for (dst, v) in info.counters.iter_mut().zip(sum.0.iter()) {
        *dst = v.unwrap_or(0);
    }
}

/// Reads a member netdev's 802.3x PAUSE and per-priority PFC counters into
/// `values`, marking in `mask` those it has. Takes RTNL.
fn read_netdev_counters(netdev: u32, values: &mut [u64; COUNTER_COUNT], mask: &mut u32) {
    if let Some((tx, rx)) = ffi::pause_stats(netdev) {
        for (dst, v) in values.iter_mut().skip(PAUSE_COUNTERS).zip([tx, rx]) {
            *dst = v;
        }
        *mask |= 0b11 << PAUSE_COUNTERS;
    }
    // A member without dcbnl PFC has no per-priority counters.
    if let Ok(pfc) = ffi::Rtnl::lock().get_pfc(netdev) {
        let per_prio = Iterator::chain(pfc.requests.iter(), pfc.indications.iter());
        for (dst, v) in values.iter_mut().skip(PFC_COUNTERS).zip(per_prio) {
            *dst = *v;
        }
        *mask |= ((1u32 << (2 * PFC_PRIOS)) - 1) << PFC_COUNTERS;
    }
}

/// The congestion counters of the member in `slot` alone (what
/// `members/<dev>/counters/` shows); `ENODEV` if the slot is empty. No lock
/// of ours may be held by the caller.
pub(crate) fn member_counters(bond: &Bond, slot: MemberIndex) -> Result<Counters> {
    let mut values = [0u64; COUNTER_COUNT];
    let mut mask = 0u32;
    let netdev = {
        let st = bond.state.lock();
        let Some(Some(member)) = st.members.get(slot.get()) else {
            return Err(ENODEV);
        };
        // Member handles are valid under the state lock.
        if let Some(dev) = member.dev.as_ref() {
            let mut hw = [0u64; HW_COUNTER_MAX];
            mask = dev.hw_counters(&HW_NAMES, &mut hw);
            for (dst, v) in values.iter_mut().zip(hw) {
                *dst = v;
            }
        }
        member.dev.as_ref().map_or(0, |_| member.netdev)
    };
    if netdev != 0 {
        read_netdev_counters(netdev, &mut values, &mut mask);
    }
    Ok(counters_of(&values, mask))
}

/// A filled snapshot on the heap.
pub(crate) fn snapshot(bond: &Bond) -> Result<KBox<KnobsInfo>> {
    let mut info = KnobsInfo::new_boxed()?;
    fill(bond, &mut info, Reads::Counters);
    Ok(info)
}

/// The counters of a snapshot row (or of the bond), with availability.
pub(crate) fn counters(values: &[u64; COUNTER_COUNT], mask: u32) -> Counters {
    counters_of(values, mask)
}
