// SPDX-License-Identifier: GPL-2.0

//! Member eligibility: whether each member may host QPs, and why not.
//!
//! Inputs per member (the module feeds them from netdev/ib events):
//! admin state, device present, port ACTIVE, netdev carrier (`link_up`) and,
//! when the member's netdev is a bond slave, the bond's lower state
//! (`link_up && tx_enabled` from `NETDEV_CHANGELOWERSTATE`, mlx5 LAG's rule).
//!
//! Output per member: [`Usability`] plus a [`Reason`].
//! - **usable**: takes new QPs.
//! - **draining**: keeps its QPs, takes no new ones (admin `drain`, or a link
//!   fault waiting out `downdelay`).
//! - **unusable**: its QPs must be failed over (see [`super::failover`]).
//!
//! Debounce follows bonding: the link-class inputs (port, carrier, LACP)
//! collapse into one "link ok" bit. When it drops, the member drains for
//! `downdelay` and becomes unusable only if the fault outlives it; when it
//! returns, the member stays unusable (`UpDelay`) for `updelay`. A fault that
//! clears during `downdelay`, or returns during `updelay`, cancels the pending
//! change at once, as bonding's `BOND_LINK_FAIL`/`BOND_LINK_BACK` do. Admin
//! state and device presence are deliberate or final and act at once.
//!
//! A member can also be *quiesced* for a moment: the module applies a knob
//! that may bounce the member's link (PFC through dcbnl) and stops placing
//! QPs on it meanwhile. A quiesced member with a good link drains
//! ([`Reason::Quiesced`]); the flag is the module's, not an input, so input
//! updates leave it alone.
//!
//! Time is whatever monotonic nanoseconds the caller passes in; the core reads
//! no clock. Deadlines that passed before an input arrives are applied first, at
//! their own time, so a late timer cannot hide a transition. The module arms a
//! timer for [`EligibilitySet::next_deadline`] and calls
//! [`EligibilitySet::poll`] when it fires; every status change is returned
//! once as a [`Transition`] for counting and logging.

use super::{MemberIndex, MemberMask, MAX_MEMBERS};

/// Operator's intent for a member.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum AdminState {
    /// In service.
    #[default]
    Up,
    /// Keep existing QPs, place no new ones.
    Drain,
    /// Out of service: existing QPs are failed over.
    Down,
}

/// The bond's view of a member netdev that is a bond slave.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum LacpState {
    /// The member netdev is not a bond slave: LACP does not apply.
    #[default]
    NotSlave,
    /// Lower state of a bond slave (`struct netdev_lag_lower_state_info`).
    Slave {
        /// The bond considers the slave's link up.
        link_up: bool,
        /// The bond distributes (LACP collecting+distributing) on it.
        tx_enabled: bool,
    },
}

impl LacpState {
    /// Whether traffic may be distributed on the member.
    pub const fn distributing(self) -> bool {
        match self {
            LacpState::NotSlave => true,
            LacpState::Slave {
                link_up,
                tx_enabled,
            } => link_up && tx_enabled,
        }
    }
}

/// Raw inputs of one member.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Inputs {
    /// Operator's intent.
    pub admin: AdminState,
    /// The member ib_device exists (not removed or unregistering).
    pub device_present: bool,
    /// The member port is `IB_PORT_ACTIVE`.
    pub port_active: bool,
    /// The member netdev has carrier.
    pub link_up: bool,
    /// Bond lower state when the netdev is a bond slave.
    pub lacp: LacpState,
}

impl Inputs {
    /// Everything up, not a bond slave.
    pub const HEALTHY: Inputs = Inputs {
        admin: AdminState::Up,
        device_present: true,
        port_active: true,
        link_up: true,
        lacp: LacpState::NotSlave,
    };

    /// Device gone, everything down.
    pub const ABSENT: Inputs = Inputs {
        admin: AdminState::Up,
        device_present: false,
        port_active: false,
        link_up: false,
        lacp: LacpState::NotSlave,
    };

    /// The first link-class fault, in root-cause order, or `None` when the
    /// link is ok.
    pub const fn link_fault(&self) -> Option<Reason> {
        if !self.link_up {
            Some(Reason::LinkDown)
        } else if !self.port_active {
            Some(Reason::PortDown)
        } else if !self.lacp.distributing() {
            Some(Reason::LacpNotDistributing)
        } else {
            None
        }
    }
}

/// Whether a member may take QPs.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Usability {
    /// Takes new QPs.
    Usable,
    /// Keeps its QPs, takes no new ones.
    Draining,
    /// Its QPs must be failed over.
    Unusable,
}

/// Why a member has its usability.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Reason {
    /// All inputs good.
    Ready,
    /// The slot holds no member.
    NotMember,
    /// Admin state `drain`.
    AdminDrain,
    /// Admin state `down`.
    AdminDown,
    /// The member ib_device is gone.
    DeviceAbsent,
    /// The member port is not ACTIVE.
    PortDown,
    /// The member netdev has no carrier.
    LinkDown,
    /// The bond does not distribute on the member (LACP or bond link state).
    LacpNotDistributing,
    /// The link is back and `updelay` has not elapsed.
    UpDelay,
    /// The link failed and `downdelay` has not elapsed.
    DownDelay,
    /// A knob change (PFC) is being applied to the member.
    Quiesced,
}

impl Reason {
    /// Short name for logs and netlink dumps.
    pub const fn name(self) -> &'static str {
        match self {
            Reason::Ready => "ready",
            Reason::NotMember => "not-member",
            Reason::AdminDrain => "admin-drain",
            Reason::AdminDown => "admin-down",
            Reason::DeviceAbsent => "device-absent",
            Reason::PortDown => "port-down",
            Reason::LinkDown => "link-down",
            Reason::LacpNotDistributing => "lacp-not-distributing",
            Reason::UpDelay => "updelay",
            Reason::DownDelay => "downdelay",
            Reason::Quiesced => "quiesced",
        }
    }
}

/// Usability with its reason.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Status {
    /// Whether the member may take QPs.
    pub usability: Usability,
    /// Why.
    pub reason: Reason,
}

impl Status {
    /// Status of an empty slot.
    pub const NOT_MEMBER: Status = Status {
        usability: Usability::Unusable,
        reason: Reason::NotMember,
    };
    /// Status of a healthy member.
    pub const READY: Status = Status {
        usability: Usability::Usable,
        reason: Reason::Ready,
    };
}

/// One status change of one member.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Transition {
    /// The member.
    pub member: MemberIndex,
    /// Status before.
    pub from: Status,
    /// Status after.
    pub to: Status,
    /// When it took effect (caller's monotonic ns; a debounce expiry carries
    /// its deadline even if processed later).
    pub at_ns: u64,
}

impl Transition {
    /// Whether usability changed (not only the reason).
    pub const fn usability_changed(&self) -> bool {
        !matches!(
            (self.from.usability, self.to.usability),
            (Usability::Usable, Usability::Usable)
                | (Usability::Draining, Usability::Draining)
                | (Usability::Unusable, Usability::Unusable)
        )
    }
}

/// Transitions from one call, in order. A call yields at most one per member
/// from [`EligibilitySet::poll`] and at most two (a due expiry, then the
/// input's effect) from an input update.
#[derive(Clone, Copy, Debug)]
pub struct Transitions {
    len: u8,
    items: [Option<Transition>; MAX_MEMBERS],
}

impl Transitions {
    const fn new() -> Self {
        Transitions {
            len: 0,
            items: [None; MAX_MEMBERS],
        }
    }

    fn push(&mut self, t: Transition) {
        if let Some(slot) = self.items.get_mut(usize::from(self.len)) {
            *slot = Some(t);
            self.len = self.len.saturating_add(1);
        }
    }

    /// Number of transitions.
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there are none.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The i-th transition.
    pub fn get(&self, i: usize) -> Option<Transition> {
        self.items.get(i).copied().flatten()
    }

    /// The transitions in order.
    pub fn iter(&self) -> impl Iterator<Item = Transition> + '_ {
        self.items.iter().filter_map(|t| *t)
    }
}

/// updelay/downdelay in nanoseconds (bonding's knobs, in the caller's clock).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Debounce {
    /// How long a recovered link must stay ok before the member is usable.
    pub updelay_ns: u64,
    /// How long a link fault must last before the member is unusable.
    pub downdelay_ns: u64,
}

/// Debounced link-class state.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Link {
    Up,
    GoingDown { deadline: u64 },
    Down,
    GoingUp { deadline: u64 },
}

/// One member's eligibility state.
#[derive(Clone, Copy, Debug)]
struct Member {
    inputs: Inputs,
    link: Link,
    status: Status,
    quiesced: bool,
}

impl Member {
    const EMPTY: Member = Member {
        inputs: Inputs::ABSENT,
        link: Link::Down,
        status: Status::NOT_MEMBER,
        quiesced: false,
    };

    const fn deadline(&self) -> Option<u64> {
        match self.link {
            Link::GoingDown { deadline } | Link::GoingUp { deadline } => Some(deadline),
            Link::Up | Link::Down => None,
        }
    }

    const fn compose(&self) -> Status {
        const fn st(usability: Usability, reason: Reason) -> Status {
            Status { usability, reason }
        }
        if !self.inputs.device_present {
            return st(Usability::Unusable, Reason::DeviceAbsent);
        }
        if matches!(self.inputs.admin, AdminState::Down) {
            return st(Usability::Unusable, Reason::AdminDown);
        }
        match self.link {
            Link::Down => {
                let reason = match self.inputs.link_fault() {
                    Some(r) => r,
                    // Cannot stay Down with a good link (it would be GoingUp);
                    // name the nearest truth rather than panic.
                    None => Reason::UpDelay,
                };
                st(Usability::Unusable, reason)
            }
            Link::GoingUp { .. } => st(Usability::Unusable, Reason::UpDelay),
            Link::GoingDown { .. } => st(Usability::Draining, Reason::DownDelay),
            Link::Up => {
                if matches!(self.inputs.admin, AdminState::Drain) {
                    st(Usability::Draining, Reason::AdminDrain)
                } else if self.quiesced {
                    st(Usability::Draining, Reason::Quiesced)
                } else {
                    Status::READY
                }
            }
        }
    }

    /// Applies a deadline that is due at `now`; returns when it took effect.
    fn expire(&mut self, now: u64) -> Option<u64> {
        match self.link {
            Link::GoingDown { deadline } if deadline <= now => {
                self.link = Link::Down;
                Some(deadline)
            }
            Link::GoingUp { deadline } if deadline <= now => {
                self.link = Link::Up;
                Some(deadline)
            }
            _ => None,
        }
    }

    /// Moves the link state for the current inputs at `now`.
    fn follow_inputs(&mut self, now: u64, d: Debounce) {
        let ok = self.inputs.link_fault().is_none();
        self.link = match (self.link, ok) {
            (Link::Up, true) => Link::Up,
            (Link::Up, false) => {
                if d.downdelay_ns == 0 {
                    Link::Down
                } else {
                    Link::GoingDown {
                        deadline: now.saturating_add(d.downdelay_ns),
                    }
                }
            }
            (Link::GoingDown { .. }, true) => Link::Up,
            (Link::GoingDown { deadline }, false) => Link::GoingDown { deadline },
            (Link::Down, false) => Link::Down,
            (Link::Down, true) => {
                if d.updelay_ns == 0 {
                    Link::Up
                } else {
                    Link::GoingUp {
                        deadline: now.saturating_add(d.updelay_ns),
                    }
                }
            }
            (Link::GoingUp { .. }, false) => Link::Down,
            (Link::GoingUp { deadline }, true) => Link::GoingUp { deadline },
        };
    }
}

/// Eligibility of all members of one bond.
#[derive(Clone, Copy, Debug)]
pub struct EligibilitySet {
    debounce: Debounce,
    present: MemberMask,
    members: [Member; MAX_MEMBERS],
}

impl EligibilitySet {
    /// An empty set with the given debounce.
    pub const fn new(debounce: Debounce) -> Self {
        EligibilitySet {
            debounce,
            present: MemberMask::EMPTY,
            members: [Member::EMPTY; MAX_MEMBERS],
        }
    }

    /// The debounce in force.
    pub const fn debounce(&self) -> Debounce {
        self.debounce
    }

    /// Changes updelay/downdelay. Pending deadlines keep the delay they were
    /// armed with (as bonding does); new ones use the new values.
    pub fn set_debounce(&mut self, debounce: Debounce) {
        self.debounce = debounce;
    }

    /// Adds a member with its current inputs. No delay is applied: the
    /// operator's add is deliberate and its inputs are read, not events.
    pub fn add_member(&mut self, m: MemberIndex, inputs: Inputs, now: u64) -> Transitions {
        let mut out = Transitions::new();
        if let Some(mem) = self.members.get_mut(m.get()) {
            let from = mem.status;
            mem.inputs = inputs;
            mem.link = if inputs.link_fault().is_none() {
                Link::Up
            } else {
                Link::Down
            };
            mem.status = mem.compose();
            self.present = self.present.with(m);
            if mem.status != from {
                out.push(Transition {
                    member: m,
                    from,
                    to: mem.status,
                    at_ns: now,
                });
            }
        }
        out
    }

    /// Removes a member; its slot reports [`Reason::NotMember`].
    pub fn remove_member(&mut self, m: MemberIndex, now: u64) -> Transitions {
        let mut out = Transitions::new();
        if let Some(mem) = self.members.get_mut(m.get()) {
            let from = mem.status;
            *mem = Member::EMPTY;
            self.present = self.present.without(m);
            if from != Status::NOT_MEMBER {
                out.push(Transition {
                    member: m,
                    from,
                    to: Status::NOT_MEMBER,
                    at_ns: now,
                });
            }
        }
        out
    }

    /// Replaces a member's inputs at time `now`. Ignored for absent slots.
    pub fn update(&mut self, m: MemberIndex, inputs: Inputs, now: u64) -> Transitions {
        let mut out = Transitions::new();
        if !self.present.contains(m) {
            return out;
        }
        let d = self.debounce;
        if let Some(mem) = self.members.get_mut(m.get()) {
            // A deadline that fell due before this input is applied first.
            let before = mem.status;
            if let Some(at) = mem.expire(now) {
                mem.status = mem.compose();
                if mem.status != before {
                    out.push(Transition {
                        member: m,
                        from: before,
                        to: mem.status,
                        at_ns: at,
                    });
                }
            }
            let before = mem.status;
            mem.inputs = inputs;
            mem.follow_inputs(now, d);
            mem.status = mem.compose();
            if mem.status != before {
                out.push(Transition {
                    member: m,
                    from: before,
                    to: mem.status,
                    at_ns: now,
                });
            }
        }
        out
    }

    /// Current inputs of a member (`None` for an empty slot).
    pub fn inputs(&self, m: MemberIndex) -> Option<Inputs> {
        if !self.present.contains(m) {
            return None;
        }
        self.members.get(m.get()).map(|mem| mem.inputs)
    }

    fn modify(&mut self, m: MemberIndex, now: u64, f: impl FnOnce(&mut Inputs)) -> Transitions {
        match self.inputs(m) {
            Some(mut i) => {
                f(&mut i);
                self.update(m, i, now)
            }
            None => Transitions::new(),
        }
    }

    /// Sets the admin state.
    pub fn set_admin(&mut self, m: MemberIndex, admin: AdminState, now: u64) -> Transitions {
        self.modify(m, now, |i| i.admin = admin)
    }

    /// Sets whether the member ib_device exists.
    pub fn set_device_present(&mut self, m: MemberIndex, present: bool, now: u64) -> Transitions {
        self.modify(m, now, |i| i.device_present = present)
    }

    /// Sets whether the member port is ACTIVE.
    pub fn set_port_active(&mut self, m: MemberIndex, active: bool, now: u64) -> Transitions {
        self.modify(m, now, |i| i.port_active = active)
    }

    /// Sets the member netdev's carrier.
    pub fn set_link_up(&mut self, m: MemberIndex, up: bool, now: u64) -> Transitions {
        self.modify(m, now, |i| i.link_up = up)
    }

    /// Sets the bond lower state (or `NotSlave`).
    pub fn set_lacp(&mut self, m: MemberIndex, lacp: LacpState, now: u64) -> Transitions {
        self.modify(m, now, |i| i.lacp = lacp)
    }

    /// Quiesces a member (no new QPs while a knob is applied to it) or lets
    /// it go. Ignored for absent slots.
    pub fn set_quiesced(&mut self, m: MemberIndex, quiesced: bool, now: u64) -> Transitions {
        let mut out = Transitions::new();
        if !self.present.contains(m) {
            return out;
        }
        if let Some(mem) = self.members.get_mut(m.get()) {
            let before = mem.status;
            mem.quiesced = quiesced;
            mem.status = mem.compose();
            if mem.status != before {
                out.push(Transition {
                    member: m,
                    from: before,
                    to: mem.status,
                    at_ns: now,
                });
            }
        }
        out
    }

    /// Whether a member is quiesced.
    pub fn quiesced(&self, m: MemberIndex) -> bool {
        self.present.contains(m) && self.members.get(m.get()).is_some_and(|mem| mem.quiesced)
    }

    /// Applies every deadline due at `now`.
    pub fn poll(&mut self, now: u64) -> Transitions {
        let mut out = Transitions::new();
        for m in self.present.iter() {
            if let Some(mem) = self.members.get_mut(m.get()) {
                let before = mem.status;
                if let Some(at) = mem.expire(now) {
                    mem.status = mem.compose();
                    if mem.status != before {
                        out.push(Transition {
                            member: m,
                            from: before,
                            to: mem.status,
                            at_ns: at,
                        });
                    }
                }
            }
        }
        out
    }

    /// Earliest pending debounce deadline, for the module's timer.
    pub fn next_deadline(&self) -> Option<u64> {
        let mut next: Option<u64> = None;
        for m in self.present.iter() {
            if let Some(d) = self.members.get(m.get()).and_then(|mem| mem.deadline()) {
                next = Some(match next {
                    Some(n) if n <= d => n,
                    _ => d,
                });
            }
        }
        next
    }

    /// A member's status ([`Status::NOT_MEMBER`] for an empty slot).
    pub fn status(&self, m: MemberIndex) -> Status {
        self.members
            .get(m.get())
            .map_or(Status::NOT_MEMBER, |mem| mem.status)
    }

    /// Members that were added.
    pub const fn present(&self) -> MemberMask {
        self.present
    }

    fn mask_of(&self, usability: Usability) -> MemberMask {
        let mut mask = MemberMask::EMPTY;
        for m in self.present.iter() {
            if self.status(m).usability == usability {
                mask = mask.with(m);
            }
        }
        mask
    }

    /// Members that take new QPs (feed to [`super::placement::Placer::set_usable_mask`]).
    pub fn usable_mask(&self) -> MemberMask {
        self.mask_of(Usability::Usable)
    }

    /// Members that keep their QPs but take no new ones.
    pub fn draining_mask(&self) -> MemberMask {
        self.mask_of(Usability::Draining)
    }

    /// Present members whose QPs must be failed over.
    pub fn unusable_mask(&self) -> MemberMask {
        self.mask_of(Usability::Unusable)
    }
}
