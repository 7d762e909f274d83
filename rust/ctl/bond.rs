// SPDX-License-Identifier: GPL-2.0

//! One bond: its members, their eligibility, the placement state, and the
//! snapshots that netlink, sysfs and `rdma statistic` report.

#![deny(unsafe_code)]

use kernel::{
    c_str, new_mutex,
    prelude::*,
    static_lock_class,
    sync::{Arc, Mutex},
};

use crate::{
    ctl::text::Name,
    ffi::{self, BondInfo, MemberInfo, NetdevState, MAX_MEMBERS, NAME_MAX},
    knobs::state::Knobs,
    policy::{
        caps::{self, DeviceCaps},
        eligibility::{AdminState, Debounce, EligibilitySet, Inputs, LacpState, Reason, Usability},
        hash::FlowKey,
        knobs::BondMode,
        options,
        placement::{PinScope, PlaceError, PlaceRequest, Placer, Policy},
        port::PortCounter,
        ulp, MemberIndex, MemberMask,
    },
    rdma::member_device::IbDevice,
    rdma::{
        cq::CqSet,
        gsi::GsiPorts,
        gsi_member::GsiMembers,
        mr::MrTable,
        pd::PdSet,
        qp_path::{MemberLoad, PathCounters, QpIds},
        qp_set::QpPaths,
    },
    vdev::handle::{Vdev, VdevRef},
    vdev::{pd::VdevPd, qpns::QpnTable},
};

pub(crate) mod utilisation;

use utilisation::TxSample;

/// One member slot of a bond.
pub(crate) struct Member {
    /// The RDMA device it stands for; kept when the device goes away, so
    /// that a device of the same name rejoins the slot.
    pub(crate) name: Name,
    /// The device while it is registered (see [`IbDevice`]'s invariant).
    pub(crate) dev: Option<IbDevice>,
    /// Ifindex of the device's port netdev, 0 if unknown.
    pub(crate) netdev: u32,
    /// Operator's intent.
    pub(crate) admin: AdminState,
    /// Usability changes since it joined.
    pub(crate) transitions: u64,
    /// Netdev state seen at the last evaluation.
    pub(crate) seen: NetdevState,
    /// Operator's capacity for utilisation, Mb/s; 0: the link speed.
    pub(crate) capacity_mbps: u32,
    /// The transmit counter at the last sample (`crate::utilisation`).
    pub(crate) tx_last: Option<TxSample>,
}

impl Member {
    /// A new member slot for `dev`, admin `admin`.
    pub(crate) fn new(name: Name, dev: &IbDevice, admin: AdminState) -> Self {
        Self {
            name,
            dev: Some(dev.duplicate()),
            netdev: dev.netdev_ifindex(),
            admin,
            transitions: 0,
            seen: NetdevState::default(),
            capacity_mbps: 0,
            tx_last: None,
        }
    }
}

/// What a bond's state lock protects.
pub(crate) struct BondState {
    /// Member slots; slot `i` is vdev port `i + 1` in rail mode.
    pub(crate) members: [Option<Member>; MAX_MEMBERS],
    /// Usability of every member, debounced.
    pub(crate) elig: EligibilitySet,
    /// Placement policy and its live inputs.
    pub(crate) placer: Placer,
    /// QPs placed since creation.
    pub(crate) placements: u64,
    /// Placements refused for lack of a usable member.
    pub(crate) placement_failures: u64,
    /// QPs placed on each member slot.
    pub(crate) placed: [u64; MAX_MEMBERS],
    /// Slots whose device the verbs proxy may create objects on.
    pub(crate) attached: [bool; MAX_MEMBERS],
    /// Slots whose device the verbs proxy refused: not tried again (nor
    /// logged again) until the slot gets a device anew.
    pub(crate) attach_refused: [bool; MAX_MEMBERS],
    /// QPs created, the flow key of the `hash` policy: no address is known
    /// when a QP is created, so the creation sequence stands in for the
    /// UDP source port (which rxe, too, derives from the QP).
    pub(crate) created: u64,
    /// Vdev port count (fixed at creation).
    pub(crate) ports: u32,
    /// The netdev each vdev port is bound to (index: port - 1), 0 if none.
    /// Rail ports follow their member's netdev (a member may come back on a
    /// new netdev); an active-backup bond's port 1 follows the active
    /// member, since roce_gid_mgmt gives the bond's IP GIDs only to the
    /// active slave's port.
    pub(crate) port_netdev: [u32; MAX_MEMBERS],
}

/// A bond of member RDMA devices behind one virtual ib_device.
///
/// Lock order: the registry's lock, then `state`, then `vdev`.
#[pin_data]
pub(crate) struct Bond {
    /// Deployment mode, fixed at creation.
    pub(crate) mode: BondMode,
    /// Lock "mrbond:membership": held by whoever changes which member has
    /// which slot (MEMBER_ADD, MEMBER_DEL, following a rename) from the
    /// change in the state to the slot's sysfs directory, which comes and
    /// goes with no other lock held. Without it a slot freed and taken
    /// again in between lost its new member's directory, or got a departed
    /// member's. Outermost: taken before the registry's lock; sysfs stores
    /// never take it.
    #[pin]
    pub(crate) membership: Mutex<()>,
    /// Bond netdev whose slaves' LACP state gates members, 0 for none.
    pub(crate) lacp_source: u32,
    /// The device attributes, frozen at creation (`crate::vdev::attrs`).
    pub(crate) caps: DeviceCaps,
    /// Members, eligibility and placement; never held while calling into C
    /// that takes RTNL or removes sysfs files.
    #[pin]
    pub(crate) state: Mutex<BondState>,
    /// The bond's vdev; `None` before registration and after teardown.
    #[pin]
    pub(crate) vdev: Mutex<Option<Vdev>>,
    /// ECN/DCQCN/PFC settings and per-member status (`crate::knobs`).
    #[pin]
    pub(crate) knobs: Knobs,
    /// The vdev's live PDs (`crate::vdev::pd`), kept by the PD verbs; lock
    /// "mrbond:pds", inside the vdev's objects lock.
    #[pin]
    pub(crate) pds: PdSet<VdevPd>,
    /// The vdev's MRs by key, kept by the MR verbs (`crate::rdma::mr`).
    #[pin]
    pub(crate) mrs: MrTable,
    /// The vdev's live CQs, kept by the CQ verbs (`crate::rdma::cq`); lock
    /// "mrbond:cqs", inside the vdev's objects lock.
    #[pin]
    pub(crate) cqs: CqSet,
    /// The vdev's QPNs, live and in quarantine (`crate::vdev::qpns`).
    #[pin]
    pub(crate) qpns: QpnTable,
    /// The data paths of the vdev's RC QPs by id (`crate::rdma::qp`).
    #[pin]
    pub(crate) qp_ids: QpIds,
    /// The data paths of the vdev's RC QPs, for a member's failure and
    /// detach to walk (`crate::rdma::qp_set`); lock "mrbond:qps", inside
    /// the vdev's objects lock.
    #[pin]
    pub(crate) qp_paths: QpPaths,
    /// The data path's counters of each member slot: QPs, outstanding,
    /// flushed and wrong-key WRs.
    pub(crate) counters: PathCounters,
    /// The vdev's QP1 of each port (`crate::rdma::gsi`); lock "mrbond:gsi".
    #[pin]
    pub(crate) gsi_ports: GsiPorts,
    /// The vdev's MAD agents and REQ listeners on each member
    /// (`crate::rdma::gsi_member`); lock "mrbond:gsi-members".
    #[pin]
    pub(crate) gsi_members: GsiMembers,
}

fn slot_index(slot: usize) -> Option<MemberIndex> {
    MemberIndex::new(slot)
}

impl BondState {
    /// Puts `member` in `slot` and starts tracking its eligibility from its
    /// current inputs.
    pub(crate) fn insert_member(&mut self, slot: usize, mut member: Member, now: u64) -> Result {
        let m = slot_index(slot).ok_or(EINVAL)?;
        let inputs = member_inputs(&mut member);
        let dst = self.members.get_mut(slot).ok_or(EINVAL)?;
        *dst = Some(member);
        if let Some(r) = self.attach_refused.get_mut(slot) {
            *r = false;
        }
        let _ = self.elig.add_member(m, inputs, now);
        self.sync_placer();
        Ok(())
    }

    /// The members placement may choose: usable, and attached to the
    /// verbs proxy. A usable member whose device the proxy has not taken
    /// (yet, or at all) would fail every QP placed on it.
    pub(crate) fn placeable_mask(&self) -> MemberMask {
        let attached = self
            .attached
            .iter()
            .enumerate()
            .filter(|(_, a)| **a)
            .filter_map(|(slot, _)| slot_index(slot))
            .fold(MemberMask::EMPTY, MemberMask::with);
        self.elig.usable_mask().and(attached)
    }

    /// Gives the placer the members it may choose now.
    pub(crate) fn sync_placer(&mut self) {
        let mask = self.placeable_mask();
        self.placer.set_usable_mask(mask);
    }

    /// Sets a member's capacity for utilisation (validated); the average
    /// restarts against it.
    pub(crate) fn set_capacity(&mut self, m: MemberIndex, mbps: u32) {
        if let Some(Some(member)) = self.members.get_mut(m.get()) {
            member.capacity_mbps = mbps;
        }
        self.placer.clear_utilisation(m);
    }

    /// The slot's device is new (a member that came back): a refused
    /// attach is tried again.
    pub(crate) fn device_renewed(&mut self, slot: usize) {
        if let Some(r) = self.attach_refused.get_mut(slot) {
            *r = false;
        }
    }
}

impl Bond {
    /// A bond with no members yet.
    pub(crate) fn new(
        mode: BondMode,
        policy: Policy,
        lacp_source: u32,
        ports: u32,
        caps: DeviceCaps,
    ) -> Result<Arc<Self>> {
        Arc::pin_init(
            pin_init!(Self {
                mode,
                lacp_source,
                caps,
                membership <- new_mutex!((), "mrbond:membership"),
                state <- new_mutex!(
                    BondState {
                        members: [const { None }; MAX_MEMBERS],
                        // The bond applies its own updelay/downdelay to
                        // `link_up`; member events need no second debounce.
                        elig: EligibilitySet::new(Debounce {
                            updelay_ns: 0,
                            downdelay_ns: 0,
                        }),
                        placer: Placer::new(policy),
                        placements: 0,
                        placement_failures: 0,
                        placed: [0; MAX_MEMBERS],
                        attached: [false; MAX_MEMBERS],
                        attach_refused: [false; MAX_MEMBERS],
                        created: 0,
                        ports,
                        port_netdev: [0; MAX_MEMBERS],
                    },
                    "mrbond:bond"
                ),
                vdev <- new_mutex!(None, "mrbond:vdev"),
                knobs <- Knobs::new(),
                pds <- PdSet::new(c_str!("mrbond:pds"), static_lock_class!()),
                mrs <- MrTable::new(),
                cqs <- CqSet::new(c_str!("mrbond:cqs"), static_lock_class!()),
                qpns <- QpnTable::new(),
                qp_ids <- QpIds::new(),
                qp_paths <- QpPaths::new(c_str!("mrbond:qps"), static_lock_class!()),
                counters: PathCounters::default(),
                gsi_ports <- GsiPorts::new(),
                gsi_members <- GsiMembers::new(),
            }),
            GFP_KERNEL,
        )
    }

    /// `None` if `member` is at least as capable as the frozen attributes,
    /// else the name of the first weaker attribute.
    pub(crate) fn weaker_attribute(&self, member: &IbDevice) -> Option<&'static str> {
        caps::weaker(&member.caps(), &self.caps)
    }

    /// Tells the netlink monitors what changed (a bond-change-ntf with the
    /// [`ffi::bond_change`] bits `changes`). No lock of the bond may be held.
    pub(crate) fn announce_change(&self, changes: u32) {
        if changes == 0 {
            return;
        }
        let mut name = [0u8; NAME_MAX];
        self.name(&mut name);
        let index = self.vdev.lock().as_ref().map_or(0, |v| v.index());
        ffi::notify_bond(&name, index, changes);
    }

    /// Writes the bond's device name into `out`; empty while unregistered.
    pub(crate) fn name(&self, out: &mut [u8; NAME_MAX]) {
        *out = [0; NAME_MAX];
        if let Some(v) = self.vdev.lock().as_ref() {
            if let Some(n) = Name::new(v.name().as_bytes()) {
                n.copy_to(out);
            }
        }
    }

    /// Whether the bond's device is called `name`.
    pub(crate) fn is_named(&self, name: &[u8]) -> bool {
        let mut own = [0u8; NAME_MAX];
        self.name(&mut own);
        Name::new(&own).is_some_and(|n| n.as_bytes() == name)
    }

    /// Whether vdev `port` (1-based) should report ACTIVE.
    pub(crate) fn port_active(&self, port: u32) -> bool {
        let st = self.state.lock();
        let usable = st.elig.usable_mask();
        match self.mode {
            BondMode::ActiveBackup => !usable.is_empty(),
            BondMode::Rail => usize::try_from(port)
                .ok()
                .and_then(|p| p.checked_sub(1))
                .and_then(slot_index)
                .is_some_and(|m| usable.contains(m)),
        }
    }

    /// `rdma statistic` counters of `port`, or of all members for port 0:
    /// `values[c.index()]` is counter `c` (`PortCounter::ALL`), as far as
    /// `values` reaches.
    pub(crate) fn stats(&self, port: u32, values: &mut [u64]) {
        values.fill(0);
        let st = self.state.lock();
        let only = usize::try_from(port).ok().and_then(|p| p.checked_sub(1));
        for (slot, member) in st.members.iter().enumerate() {
            let Some(member) = member else {
                continue;
            };
            if only.is_some_and(|o| o != slot) {
                continue;
            }
            let load = self
                .counters
                .get(slot)
                .map(|c| c.load())
                .unwrap_or_default();
            let row = PortCounter::ALL.map(|counter| match counter {
                PortCounter::Transitions => member.transitions,
                PortCounter::Placements => st.placed.get(slot).copied().unwrap_or(0),
                PortCounter::WrongMemberKey => load.wrong_key,
                PortCounter::FlushedWr => load.flushed,
                // Device-wide only.
                PortCounter::QpnCollisions
                | PortCounter::TfoHelloSent
                | PortCounter::TfoHelloHeard
                | PortCounter::TfoCapable
                | PortCounter::TfoMoves
                | PortCounter::TfoMoveFallbacks => 0,
            });
            for (v, r) in values.iter_mut().zip(row) {
                *v = v.saturating_add(r);
            }
        }
        if only.is_none() {
            if let Some(total) = values.get_mut(PortCounter::Placements.index()) {
                *total = st.placements;
            }
            if let Some(c) = values.get_mut(PortCounter::QpnCollisions.index()) {
                *c = self.qpns.collisions();
            }
            let channel = self.gsi_members.channel_counters();
            for (counter, value) in [
                (PortCounter::TfoHelloSent, channel.hello_sent()),
                (PortCounter::TfoHelloHeard, channel.hello_heard()),
                (PortCounter::TfoCapable, channel.capable()),
                (PortCounter::TfoMoves, channel.moves()),
                (PortCounter::TfoMoveFallbacks, channel.move_fallbacks()),
            ] {
                if let Some(c) = values.get_mut(counter.index()) {
                    *c = value;
                }
            }
        }
    }

    /// Copies the data path's live counters (QPs, outstanding WRs) into the
    /// placer, which reports and weighs them. Takes no lock.
    pub(crate) fn refresh_loads(&self, st: &mut BondState) {
        for slot in 0..MAX_MEMBERS {
            let (Some(m), Some(c)) = (slot_index(slot), self.counters.get(slot)) else {
                continue;
            };
            if st.members.get(slot).is_some_and(Option::is_some) {
                let load = c.load();
                st.placer.set_load(m, load.qps, load.outstanding);
            }
        }
    }

    /// The member whose QP1 carries the MADs of vdev `port`: a rail port's
    /// own member while it is usable, else (and in active-backup) the first
    /// usable member.
    pub(crate) fn gsi_member(&self, port: u32) -> Option<usize> {
        let st = self.state.lock();
        let usable = st.elig.usable_mask();
        let own = match self.mode {
            BondMode::Rail => usize::try_from(port).ok().and_then(|p| p.checked_sub(1)),
            BondMode::ActiveBackup => None,
        };
        if let Some(slot) = own.filter(|&s| slot_index(s).is_some_and(|m| usable.contains(m))) {
            return Some(slot);
        }
        (0..MAX_MEMBERS).find(|&s| slot_index(s).is_some_and(|m| usable.contains(m)))
    }

    /// The member slot for a new QP of a PD of the ULP `ulp`, whose first
    /// QP is on `pd_home`, created for vdev `port` (0: unknown). Process
    /// context; takes the state lock, then the vdev's, as everywhere.
    pub(crate) fn place_qp(&self, ulp: &[u8], pd_home: Option<usize>, port: u32) -> Result<usize> {
        let mut guard = self.state.lock();
        let st = &mut *guard;
        // LQF and WRR weigh the data path's live counters.
        self.refresh_loads(st);
        let home = pd_home.and_then(slot_index);
        // A target's QP answers a request that came in on the port's rail.
        let rail = match self.mode {
            BondMode::Rail if ulp::is_passive(ulp) => usize::try_from(port)
                .ok()
                .and_then(|p| p.checked_sub(1))
                .and_then(slot_index),
            _ => None,
        };
        let req = match (rail, ulp::key_rule(ulp), home) {
            (Some(rail), _, _) => PlaceRequest::pinned(rail, PinScope::Qp),
            (None, ulp::KeyRule::PinPd, Some(home)) => PlaceRequest::pinned(home, PinScope::Pd),
            _ => {
                let seq = u16::try_from(st.created & 0xffff).unwrap_or(0);
                PlaceRequest::new(FlowKey::ipv4([0; 4], [0; 4], seq))
            }
        };
        st.created = st.created.wrapping_add(1);
        match st.placer.place(&req) {
            Ok(m) => {
                st.placements = st.placements.saturating_add(1);
                if let Some(p) = st.placed.get_mut(m.get()) {
                    *p = p.saturating_add(1);
                }
                Ok(m.get())
            }
            Err(e) => {
                st.placement_failures = st.placement_failures.saturating_add(1);
                let errno = match e {
                    PlaceError::PinRequired => kernel::bindings::EOPNOTSUPP,
                    _ => kernel::bindings::ENETDOWN,
                };
                Err(Error::from_errno(-(errno as i32)))
            }
        }
    }

    /// Fills a snapshot of the bond for netlink.
    pub(crate) fn info(&self, out: &mut BondInfo) {
        let mut name = [0u8; NAME_MAX];
        self.name(&mut name);
        out.name = name;
        out.ibdev_index = self.vdev.lock().as_ref().map_or(0, |v| v.index());
        out.mode = match self.mode {
            BondMode::Rail => 0,
            BondMode::ActiveBackup => 1,
        };
        out.lacp_source = self.lacp_source;
        let mut st = self.state.lock();
        self.refresh_loads(&mut st);
        out.policy = policy_id(st.placer.policy());
        out.usable = u32::try_from(st.elig.usable_mask().count()).unwrap_or(0);
        out.placements = st.placements;
        out.placement_failures = st.placement_failures;
        out.nmembers = 0;
        for (slot, member) in st.members.iter().enumerate() {
            let (Some(member), Some(m)) = (member, slot_index(slot)) else {
                continue;
            };
            let Some(dst) = usize::try_from(out.nmembers)
                .ok()
                .and_then(|i| out.members.get_mut(i))
            else {
                break;
            };
            let load = self
                .counters
                .get(slot)
                .map(|c| c.load())
                .unwrap_or_default();
            *dst = member_info(&st, member, m, &load);
            out.nmembers = out.nmembers.saturating_add(1);
        }
    }

    /// Re-reads every member's inputs and applies the changes; returns the
    /// next debounce deadline. `event_ns` is when the triggering notifier
    /// ran (0 if none), to report our reaction time.
    pub(crate) fn evaluate(&self, now: u64, event_ns: u64) -> Option<u64> {
        let mut events: [Option<(usize, bool)>; MAX_MEMBERS] = [None; MAX_MEMBERS];
        let mut failed: [Option<Name>; MAX_MEMBERS] = [None; MAX_MEMBERS];
        let deadline = {
            let mut guard = self.state.lock();
            let st = &mut *guard;
            for slot in 0..MAX_MEMBERS {
                let Some(m) = slot_index(slot) else { continue };
                let Some(Some(member)) = st.members.get_mut(slot) else {
                    continue;
                };
                let inputs = member_inputs(member);
                let tr = st.elig.update(m, inputs, now);
                for t in tr.iter() {
                    if !t.usability_changed() && t.from.reason == t.to.reason {
                        continue;
                    }
                    // The ABI counts usability changes, not new reasons.
                    if t.usability_changed() {
                        member.transitions = member.transitions.saturating_add(1);
                    }
                    let after_us = if event_ns != 0 {
                        now.saturating_sub(event_ns) / 1000
                    } else {
                        0
                    };
                    pr_info!(
                        "member {}: {} -> {} ({}), {} us after the netdev event\n",
                        member.name.as_cstr(),
                        usability_name(t.from.usability),
                        usability_name(t.to.usability),
                        t.to.reason.name(),
                        after_us
                    );
                    if let Some(e) = events.get_mut(slot) {
                        *e = Some((slot, t.to.usability == Usability::Usable));
                    }
                    if t.usability_changed() && t.to.usability == Usability::Unusable {
                        if let Some(f) = failed.get_mut(slot) {
                            *f = Some(member.name);
                        }
                    }
                }
            }
            let _ = st.elig.poll(now);
            let rebind = self.rebinds(st);
            self.attach_members(st);
            // Usability or attachment may have changed.
            st.sync_placer();
            (st.elig.next_deadline(), rebind)
        };
        let (deadline, rebind) = deadline;
        if let Some(v) = self.vdev.lock().as_ref() {
            // QPs of a member that turned unusable go to ERR now: the ULP
            // reconnects over a usable one instead of waiting out retries.
            for (slot, name) in failed.iter().enumerate() {
                if let Some(name) = name {
                    v.member_fail(slot, name.as_cstr());
                }
            }
            for &(port, netdev, name) in rebind.iter().flatten() {
                match v.set_port_netdev(port, netdev) {
                    Ok(()) => pr_info!(
                        "{}: port {} follows member {}\n",
                        v.name(),
                        port,
                        name.as_cstr()
                    ),
                    Err(e) => pr_warn!(
                        "{}: port {} cannot follow {}: {:?}\n",
                        v.name(),
                        port,
                        name.as_cstr(),
                        e
                    ),
                }
            }
        }
        self.announce(&events);
        deadline
    }

    /// Hands the verbs proxy the devices of members it does not have yet
    /// (a new member, or a device that came back).
    fn attach_members(&self, st: &mut BondState) {
        let vdev = self.vdev.lock();
        let Some(v) = vdev.as_ref() else { return };
        for (slot, member) in st.members.iter().enumerate() {
            let Some((name, dev)) = member
                .as_ref()
                .and_then(|m| m.dev.as_ref().map(|d| (m.name, d)))
            else {
                continue;
            };
            let (Some(attached), Some(refused)) =
                (st.attached.get_mut(slot), st.attach_refused.get_mut(slot))
            else {
                continue;
            };
            if *attached || *refused {
                continue;
            }
            match v.member_attach(slot, dev) {
                Ok(()) => *attached = true,
                Err(e) => {
                    *refused = true;
                    pr_warn!(
                        "member {}: the verbs proxy refused its device ({:?}): no QPs on it until it comes back\n",
                        name.as_cstr(),
                        e
                    );
                }
            }
        }
    }

    /// The member in `slot`, named `name`, is going away: the vdev destroys
    /// its objects and flushes their WRs before this returns. Not under the
    /// state lock.
    pub(crate) fn detach_member(&self, slot: usize, name: &CStr) {
        {
            let mut st = self.state.lock();
            if let Some(a) = st.attached.get_mut(slot) {
                *a = false;
            }
            st.sync_placer();
        }
        if let Some(v) = self.vdev.lock().as_ref() {
            v.member_detach(slot, name);
        }
    }

    /// The (port, netdev, member) bindings that must change, recorded as
    /// done. Rail: each present member's port follows its netdev.
    /// Active-backup: port 1 follows the first usable member; with a bond as
    /// source only the bond's active slave is usable (`tx_enabled`).
    fn rebinds(&self, st: &mut BondState) -> [Option<(u32, u32, Name)>; MAX_MEMBERS] {
        let mut out = [None; MAX_MEMBERS];
        let usable = st.elig.usable_mask();
        let wanted = |slot: usize, m: &Member| match self.mode {
            BondMode::Rail => m.dev.is_some().then_some((slot, m.netdev)),
            BondMode::ActiveBackup => slot_index(slot)
                .is_some_and(|i| usable.contains(i))
                .then_some((0, m.netdev)),
        };
        let mut found = [None; MAX_MEMBERS];
        for (slot, m) in st.members.iter().enumerate() {
            let Some(m) = m else { continue };
            if let Some((port_slot, netdev)) = wanted(slot, m) {
                if let Some(f @ None) = found.get_mut(port_slot) {
                    *f = Some((netdev, m.name));
                }
            }
        }
        for (port_slot, (dst, f)) in out.iter_mut().zip(found.iter()).enumerate() {
            let Some((netdev, name)) = *f else { continue };
            let Some(bound) = st.port_netdev.get_mut(port_slot) else {
                continue;
            };
            if netdev != 0 && netdev != *bound {
                *bound = netdev;
                let port = u32::try_from(port_slot).unwrap_or(0).saturating_add(1);
                *dst = Some((port, netdev, name));
            }
        }
        out
    }

    /// The vdev, counted, with the vdev lock released again: for calls
    /// that wait for sysfs callbacks, which may take that lock.
    pub(crate) fn vdev_ref(&self) -> Option<VdevRef> {
        self.vdev.lock().as_ref().map(Vdev::hold)
    }

    /// Port events and netlink notifications for changed members; with no
    /// state lock held, since building the snapshot takes it.
    pub(crate) fn announce(&self, events: &[Option<(usize, bool)>; MAX_MEMBERS]) {
        if events.iter().all(Option::is_none) {
            return;
        }
        // Port states first: the state lock is never taken under the vdev's.
        let mut ports: [Option<(u32, bool)>; MAX_MEMBERS] = [None; MAX_MEMBERS];
        for (dst, &(slot, _)) in ports.iter_mut().zip(events.iter().flatten()) {
            let port = match self.mode {
                BondMode::Rail => u32::try_from(slot).unwrap_or(0).saturating_add(1),
                BondMode::ActiveBackup => 1,
            };
            *dst = Some((port, self.port_active(port)));
        }
        if let Some(v) = self.vdev_ref() {
            for &(port, active) in ports.iter().flatten() {
                v.port_event(port, active);
            }
        }
        let Ok(mut info) = KBox::new(zeroed_info(), GFP_KERNEL) else {
            return;
        };
        self.info(&mut info);
        for &(slot, _) in events.iter().flatten() {
            // Snapshot rows are in slot order, skipping empty slots.
            let row = self.row_of(slot);
            if let Some(row) = row {
                ffi::notify_member(&info, row);
            }
        }
    }

    fn row_of(&self, slot: usize) -> Option<u32> {
        let st = self.state.lock();
        let before = st.members.get(..slot)?.iter().flatten().count();
        u32::try_from(before).ok()
    }
}

/// A zeroed snapshot, to fill.
pub(crate) fn zeroed_info() -> BondInfo {
    BondInfo {
        ibdev_index: 0,
        name: [0; NAME_MAX],
        mode: 0,
        policy: 0,
        lacp_source: 0,
        usable: 0,
        placements: 0,
        placement_failures: 0,
        nmembers: 0,
        members: [MemberInfo {
            ibdev: [0; NAME_MAX],
            netdev_ifindex: 0,
            weight: 0,
            admin: 0,
            usability: 0,
            reason: 0,
            qps: 0,
            outstanding: 0,
            transitions: 0,
            lacp_slave: 0,
            link_up: 0,
            tx_enabled: 0,
            utilisation_known: 0,
            utilisation: 0,
            capacity_mbps: 0,
            placements: 0,
            flushed_wr: 0,
            wrong_member_key: 0,
        }; MAX_MEMBERS],
    }
}

/// The inputs of one member, read fresh: events may arrive out of order, so
/// the evaluation is level-triggered.
pub(crate) fn member_inputs(member: &mut Member) -> Inputs {
    let Some(dev) = member.dev.as_ref() else {
        return Inputs {
            admin: member.admin,
            ..Inputs::ABSENT
        };
    };
    let port_active = dev.port_active();
    member.netdev = dev.netdev_ifindex();
    let st = ffi::netdev_state(member.netdev);
    member.seen = st;
    // A slave's `link_up` already carries the bond's updelay/downdelay.
    let lacp = if st.bond_slave != 0 {
        LacpState::Slave {
            link_up: st.link_up != 0,
            tx_enabled: st.tx_enabled != 0,
        }
    } else {
        LacpState::NotSlave
    };
    Inputs {
        admin: member.admin,
        device_present: true,
        port_active,
        link_up: st.exists != 0 && st.running != 0 && st.carrier != 0,
        lacp,
    }
}

/// Member `m`'s snapshot; `load`: its QPs' counters.
fn member_info(st: &BondState, member: &Member, m: MemberIndex, load: &MemberLoad) -> MemberInfo {
    let status = st.elig.status(m);
    let util = utilisation::utilisation_of(st, m);
    let mut ibdev = [0u8; NAME_MAX];
    member.name.copy_to(&mut ibdev);
    MemberInfo {
        ibdev,
        netdev_ifindex: member.netdev,
        weight: u32::from(st.placer.admin_weight(m)),
        admin: options::admin_id(member.admin),
        usability: usability_id(status.usability),
        reason: reason_id(status.reason),
        qps: st.placer.qps(m),
        outstanding: u64::from(st.placer.outstanding_wqes(m)),
        transitions: member.transitions,
        lacp_slave: member.seen.bond_slave,
        link_up: member.seen.link_up,
        tx_enabled: member.seen.tx_enabled,
        utilisation_known: u8::from(util.is_some()),
        utilisation: u32::from(util.unwrap_or(0)),
        capacity_mbps: member.capacity_mbps,
        placements: st.placed.get(m.get()).copied().unwrap_or(0),
        flushed_wr: load.flushed,
        wrong_member_key: load.wrong_key,
    }
}

/// UAPI number of a policy (`enum rdma_mrbond_policy`).
pub(crate) fn policy_id(p: Policy) -> u32 {
    match p {
        Policy::Wrr => 0,
        Policy::Lqf => 1,
        Policy::Hash => 2,
        Policy::RoundRobin => 3,
        Policy::Pinned => 4,
    }
}

fn usability_id(u: Usability) -> u32 {
    match u {
        Usability::Usable => 0,
        Usability::Draining => 1,
        Usability::Unusable => 2,
    }
}

/// The sysfs word of a usability.
pub(crate) fn usability_name(u: Usability) -> &'static str {
    match u {
        Usability::Usable => "usable",
        Usability::Draining => "draining",
        Usability::Unusable => "unusable",
    }
}

fn reason_id(r: Reason) -> u32 {
    match r {
        Reason::Ready => 0,
        Reason::NotMember => 1,
        Reason::AdminDrain => 2,
        Reason::AdminDown => 3,
        Reason::DeviceAbsent => 4,
        Reason::PortDown => 5,
        Reason::LinkDown => 6,
        Reason::LacpNotDistributing => 7,
        Reason::UpDelay => 8,
        Reason::DownDelay => 9,
        Reason::Quiesced => 10,
    }
}
