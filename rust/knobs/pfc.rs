// SPDX-License-Identifier: GPL-2.0

//! The PFC fan-out: one member at a time, in slot order. For each member the
//! current `pfc_en` is probed; a member without dcbnl is `unsupported`, one
//! that already has the value is left alone (on mlx5 every change bounces
//! the link). Otherwise the member is quiesced (it takes no new QPs), and
//! under one RTNL hold its `struct ieee_pfc` is read and saved, `pfc_en`
//! set, and read back; a failed set or a read-back that differs restores
//! the saved value on that member and records `failed(errno)`. The member
//! is then released, and the fan-out goes on with the next one
//! (`policy::congestion::CONTINUE_AFTER_FAILURE`). A member that had no
//! device at the write, or joins later, is `pending` and gets the value
//! from the evaluation pass as soon as its device is there.

use kernel::prelude::*;

use crate::{
    ctl::bond::{usability_name, Bond},
    ctl::text::Name,
    ffi::{self, Rtnl, MAX_MEMBERS},
    policy::{
        congestion::{
            outcome_status, pfc_outcome, pfc_plan, Errno, KnobStatus, PfcOutcome, PfcPlan,
            CONTINUE_AFTER_FAILURE,
        },
        eligibility::Usability,
        MemberIndex,
    },
};

/// Members to visit: slot, name, netdev ifindex (0 while the device is away).
type MemberList = [Option<(usize, Name, u32)>; MAX_MEMBERS];

fn members(bond: &Bond) -> MemberList {
    let mut out: MemberList = [None; MAX_MEMBERS];
    let st = bond.state.lock();
    for (slot, (dst, m)) in out.iter_mut().zip(st.members.iter()).enumerate() {
        if let Some(m) = m {
            let ifindex = if m.dev.is_some() { m.netdev } else { 0 };
            *dst = Some((slot, m.name, ifindex));
        }
    }
    out
}

/// Applies the bond's PFC settings to every member; returns the first
/// member's failure (every member's outcome is in its status).
pub(crate) fn apply(bond: &Bond) -> Result<(), Errno> {
    let _serial = bond.knobs.apply.lock();
    let mut first = None;
    for &(slot, name, ifindex) in members(bond).iter().flatten() {
        let target = bond.knobs.settings.lock().pfc_target(slot, &name);
        let status = apply_member(bond, slot, &name, ifindex, target);
        bond.knobs
            .settings
            .lock()
            .set_pfc_status(slot, &name, ifindex, status);
        if let KnobStatus::Failed(e) = status {
            first.get_or_insert(e);
            if !CONTINUE_AFTER_FAILURE {
                break;
            }
        }
    }
    first.map_or(Ok(()), Err)
}

/// Applies the bond's PFC to each member whose status is `pending` and whose
/// device is present: one that joined after the last write, or came back on
/// another netdev. Every evaluation pass calls it, outside the bond's state
/// lock. A member that failed stays failed until the next write: retrying
/// would bounce an mlx5 link again and again.
pub(crate) fn apply_pending(bond: &Bond) {
    let is_pending = |&(slot, name, ifindex): &(usize, Name, u32)| {
        ifindex != 0
            && bond.knobs.settings.lock().pfc_status(slot, &name, ifindex) == KnobStatus::Pending
    };
    if !members(bond).iter().flatten().any(is_pending) {
        return;
    }
    let _serial = bond.knobs.apply.lock();
    // Read again under the serialising lock: a write may have run meanwhile.
    for member in members(bond).iter().flatten().filter(|m| is_pending(m)) {
        let &(slot, name, ifindex) = member;
        let target = bond.knobs.settings.lock().pfc_target(slot, &name);
        let status = apply_member(bond, slot, &name, ifindex, target);
        bond.knobs
            .settings
            .lock()
            .set_pfc_status(slot, &name, ifindex, status);
    }
}

fn apply_member(
    bond: &Bond,
    slot: usize,
    name: &Name,
    ifindex: u32,
    target: Option<u8>,
) -> KnobStatus {
    if target.is_none() {
        return KnobStatus::Unset;
    }
    if ifindex == 0 {
        // Applied by `apply_pending` once the device is back.
        return KnobStatus::Pending;
    }
    let probe = Rtnl::lock().get_pfc(ifindex).map(|p| p.pfc_en);
    match pfc_plan(target, probe) {
        PfcPlan::Leave => KnobStatus::Unset,
        PfcPlan::Report(status) => status,
        PfcPlan::Apply(wanted) => {
            bond.knobs
                .settings
                .lock()
                .set_pfc_status(slot, name, ifindex, KnobStatus::Pending);
            quiesce(bond, slot, true);
            let status = change(ifindex, wanted, name);
            quiesce(bond, slot, false);
            status
        }
    }
}

/// Save, set, read back, and roll back on failure, under one RTNL hold.
fn change(ifindex: u32, wanted: u8, name: &Name) -> KnobStatus {
    let rtnl = Rtnl::lock();
    let saved = match rtnl.get_pfc(ifindex) {
        Ok(p) => p,
        Err(e) => return KnobStatus::Failed(e),
    };
    let next = saved.with_enabled(wanted);
    let set = rtnl.set_pfc(ifindex, &next);
    let readback = rtnl.get_pfc(ifindex).map(|p| p.pfc_en);
    let outcome = pfc_outcome(wanted, set, readback);
    match outcome {
        PfcOutcome::Applied => {
            rtnl.notify_dcb(ifindex);
            pr_info!("member {}: PFC 0x{:02x} applied\n", name.as_cstr(), wanted);
        }
        PfcOutcome::RollBack(e) => {
            let restored = rtnl
                .set_pfc(ifindex, &saved)
                .and_then(|()| rtnl.get_pfc(ifindex));
            match restored {
                Ok(p) if p.pfc_en == saved.pfc_en => pr_warn!(
                    "member {}: PFC 0x{:02x} failed ({}), 0x{:02x} restored\n",
                    name.as_cstr(),
                    wanted,
                    e,
                    saved.pfc_en
                ),
                _ => pr_err!(
                    "member {}: PFC 0x{:02x} failed ({}) and 0x{:02x} could not be restored\n",
                    name.as_cstr(),
                    wanted,
                    e,
                    saved.pfc_en
                ),
            }
        }
    }
    drop(rtnl);
    outcome_status(outcome)
}

/// Stops (or resumes) placing QPs on the member in `slot`, and tells the
/// RDMA core and netlink listeners as for any usability change.
fn quiesce(bond: &Bond, slot: usize, on: bool) {
    let Some(m) = MemberIndex::new(slot) else {
        return;
    };
    let mut events: [Option<(usize, bool)>; MAX_MEMBERS] = [None; MAX_MEMBERS];
    {
        let mut guard = bond.state.lock();
        let st = &mut *guard;
        let transitions = st.elig.set_quiesced(m, on, ffi::now_ns());
        if transitions.is_empty() {
            return;
        }
        st.sync_placer();
        if let Some(Some(member)) = st.members.get_mut(slot) {
            for t in transitions.iter() {
                member.transitions = member.transitions.saturating_add(1);
                pr_info!(
                    "member {}: {} -> {} ({})\n",
                    member.name.as_cstr(),
                    usability_name(t.from.usability),
                    usability_name(t.to.usability),
                    t.to.reason.name()
                );
                if let Some(e) = events.get_mut(slot) {
                    *e = Some((slot, t.to.usability == Usability::Usable));
                }
            }
        }
    }
    bond.announce(&events);
}
