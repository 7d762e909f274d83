// SPDX-License-Identifier: GPL-2.0

//! QP placement: which usable member hosts a new QP, under a policy that can
//! be switched at run time.
//!
//! | policy | picks |
//! |---|---|
//! | `wrr` | smooth weighted round robin over effective weights (see [`super::wrr`]) |
//! | `lqf` | fewest outstanding WQEs, then fewest QPs, then lowest index |
//! | `hash` | bonding's layer3+4 hash of the flow, modulo the usable count (see [`super::hash`]) |
//! | `rr` | the next usable member after the one picked last |
//! | `pinned` | the member named by the request's pin; a request without one is refused |
//!
//! A pin in the request wins under every policy (the module pins at PD level
//! when a ULP's memory keys must stay on one member), and a pin on a member that
//! is not usable is reported as [`PlaceError::PinnedUnusable`], distinct from
//! [`PlaceError::NoUsableMember`], so the module can say which one happened.
//!
//! The [`Placer`] only changes policy state (WRR counters, the RR cursor) when it
//! places; the caller accounts a QP to a member with [`Placer::qp_added`] once
//! the member QP really exists, so a failed create leaves no trace.

use super::hash::{self, FlowKey};
use super::knobs::{self, ConfigError};
use super::wrr::{self, SmoothWrr};
use super::{MemberIndex, MemberMask, MAX_MEMBERS};

/// Placement policy of a bond.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Policy {
    /// Smooth weighted round robin on admin weight x live headroom.
    #[default]
    Wrr,
    /// Least queued first: outstanding WQEs, then QP count, then index.
    Lqf,
    /// Static layer3+4 flow hash.
    Hash,
    /// Plain round robin over usable members.
    RoundRobin,
    /// Explicit member per QP or PD, given in the request.
    Pinned,
}

impl Policy {
    /// Every policy, in a fixed order (for tables and tests).
    pub const ALL: [Policy; 5] = [
        Policy::Wrr,
        Policy::Lqf,
        Policy::Hash,
        Policy::RoundRobin,
        Policy::Pinned,
    ];

    /// The user-visible name (`wrr`, `lqf`, `hash`, `rr`, `pinned`).
    pub const fn name(self) -> &'static str {
        match self {
            Policy::Wrr => "wrr",
            Policy::Lqf => "lqf",
            Policy::Hash => "hash",
            Policy::RoundRobin => "rr",
            Policy::Pinned => "pinned",
        }
    }

    /// Parses a user-supplied name, surrounding blanks ignored: the
    /// inverse of [`Policy::name`].
    pub fn from_name(name: &[u8]) -> Result<Policy, ConfigError> {
        let name = knobs::trim(name);
        Policy::ALL
            .into_iter()
            .find(|p| p.name().as_bytes() == name)
            .ok_or(ConfigError::UnknownPolicy)
    }
}

/// What a pin is attached to, kept so an error can name it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum PinScope {
    /// The QP itself was pinned.
    Qp,
    /// The QP's protection domain is pinned (all its QPs and MRs share a member).
    Pd,
}

/// An explicit member for a QP.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Pin {
    /// The member the QP must land on.
    pub member: MemberIndex,
    /// Where the pin came from.
    pub scope: PinScope,
}

/// Everything a placement decision may look at.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct PlaceRequest {
    /// The flow the QP will carry (used by `hash`).
    pub flow: FlowKey,
    /// An explicit member, which overrides the policy.
    pub pin: Option<Pin>,
}

impl PlaceRequest {
    /// A request for a flow, without pin.
    pub const fn new(flow: FlowKey) -> Self {
        PlaceRequest { flow, pin: None }
    }

    /// A request pinned to `member`.
    pub const fn pinned(member: MemberIndex, scope: PinScope) -> Self {
        PlaceRequest {
            flow: FlowKey {
                src: [0; 16],
                dst: [0; 16],
                udp_sport: 0,
            },
            pin: Some(Pin { member, scope }),
        }
    }
}

/// Why no member was returned.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum PlaceError {
    /// No member is usable.
    NoUsableMember,
    /// The request was pinned to a member that is absent or not usable.
    PinnedUnusable(Pin),
    /// The policy is `pinned` and the request carries no pin.
    PinRequired,
}

impl PlaceError {
    /// Static text for logs and extack.
    pub const fn message(&self) -> &'static str {
        self.texts().0
    }

    /// The same text with a trailing NUL, for C callers.
    pub const fn message_nul(&self) -> &'static [u8] {
        self.texts().1.as_bytes()
    }

    const fn texts(&self) -> (&'static str, &'static str) {
        macro_rules! t {
            ($s:literal) => {
                ($s, concat!($s, "\0"))
            };
        }
        match self {
            PlaceError::NoUsableMember => t!("mrbond: no usable member"),
            PlaceError::PinnedUnusable(_) => t!("mrbond: pinned member is not usable"),
            PlaceError::PinRequired => t!("mrbond: policy pinned needs a pinned QP or PD"),
        }
    }
}

/// Per-member inputs of the policies.
#[derive(Clone, Copy, Debug)]
struct Slot {
    admin_weight: u16,
    util_permille: u16,
    /// Whether `util_permille` came from a sample (the first sample is taken
    /// as is instead of being averaged with the initial zero).
    util_sampled: bool,
    outstanding_wqes: u32,
    qps: u32,
    /// LQF order as one number (see [`lqf_key`]), refreshed on every change
    /// of `outstanding_wqes` or `qps` so a decision only compares keys.
    lqf_key: u64,
}

impl Slot {
    const EMPTY: Slot = Slot {
        admin_weight: 0,
        util_permille: 0,
        util_sampled: false,
        outstanding_wqes: 0,
        qps: 0,
        lqf_key: 0,
    };
}

/// Largest WQE or QP count that LQF tells apart (2^30 - 2); larger counts
/// compare as equal, which no real queue reaches. One below the 30-bit
/// maximum so that no key equals `u64::MAX`, the "unusable" marker.
pub const LQF_COUNT_LIMIT: u32 = (1 << 30) - 2;

/// LQF order of a member as one `u64`: 30 bits of outstanding WQEs, 30 bits of
/// QP count, 4 bits of index, so the smallest key is the least queued member,
/// then the one with fewest QPs, then the lowest index.
pub const fn lqf_key(outstanding_wqes: u32, qps: u32, index: MemberIndex) -> u64 {
    let w = if outstanding_wqes > LQF_COUNT_LIMIT {
        LQF_COUNT_LIMIT
    } else {
        outstanding_wqes
    };
    let q = if qps > LQF_COUNT_LIMIT {
        LQF_COUNT_LIMIT
    } else {
        qps
    };
    ((w as u64) << 34) | ((q as u64) << 4) | (index.as_u8() as u64 & 0xf)
}

/// Placement state of one bond: the per-member inputs and the policy state.
#[derive(Clone, Copy, Debug)]
pub struct Placer {
    policy: Policy,
    present: MemberMask,
    usable: MemberMask,
    /// Usable members in ascending order, so `hash` maps in O(1).
    list: [u8; MAX_MEMBERS],
    count: u8,
    /// Member picked last by `rr`.
    rr_last: u8,
    wrr: SmoothWrr,
    slots: [Slot; MAX_MEMBERS],
}

impl Default for Placer {
    fn default() -> Self {
        Self::new(Policy::Wrr)
    }
}

impl Placer {
    /// A placer without members.
    pub const fn new(policy: Policy) -> Self {
        Placer {
            policy,
            present: MemberMask::EMPTY,
            usable: MemberMask::EMPTY,
            list: [0; MAX_MEMBERS],
            count: 0,
            // So the first `rr` pick is the lowest usable member.
            rr_last: (MAX_MEMBERS - 1) as u8,
            wrr: SmoothWrr::new(),
            slots: [Slot::EMPTY; MAX_MEMBERS],
        }
    }

    /// The current policy.
    pub const fn policy(&self) -> Policy {
        self.policy
    }

    /// Switches policy. WRR starts a fresh round; the RR cursor is kept.
    pub fn set_policy(&mut self, policy: Policy) {
        if policy != self.policy {
            self.policy = policy;
            self.wrr.reset();
        }
    }

    /// Adds a member (not usable until [`Placer::set_usable`]).
    pub fn add_member(&mut self, m: MemberIndex, admin_weight: u16) -> Result<(), ConfigError> {
        if self.present.contains(m) {
            return Err(ConfigError::MemberExists);
        }
        let w = knobs::validate_weight(u64::from(admin_weight))?;
        let slot = self
            .slots
            .get_mut(m.get())
            .ok_or(ConfigError::NoSuchMember)?;
        *slot = Slot {
            admin_weight: w,
            lqf_key: lqf_key(0, 0, m),
            ..Slot::EMPTY
        };
        self.present = self.present.with(m);
        self.refresh_weight(m);
        Ok(())
    }

    /// Removes a member and forgets its inputs.
    pub fn remove_member(&mut self, m: MemberIndex) -> Result<(), ConfigError> {
        if !self.present.contains(m) {
            return Err(ConfigError::NoSuchMember);
        }
        self.present = self.present.without(m);
        self.set_usable_mask(self.usable.without(m));
        if let Some(slot) = self.slots.get_mut(m.get()) {
            *slot = Slot::EMPTY;
        }
        self.wrr.set_weight(m, 0);
        Ok(())
    }

    /// Changes a member's admin weight.
    pub fn set_weight(&mut self, m: MemberIndex, admin_weight: u16) -> Result<(), ConfigError> {
        let w = knobs::validate_weight(u64::from(admin_weight))?;
        if !self.present.contains(m) {
            return Err(ConfigError::NoSuchMember);
        }
        if let Some(slot) = self.slots.get_mut(m.get()) {
            slot.admin_weight = w;
        }
        self.refresh_weight(m);
        Ok(())
    }

    /// Marks one member usable or not (absent members stay unusable).
    pub fn set_usable(&mut self, m: MemberIndex, usable: bool) {
        let mask = if usable {
            self.usable.with(m)
        } else {
            self.usable.without(m)
        };
        self.set_usable_mask(mask);
    }

    /// Sets the usable set at once (e.g. from
    /// [`super::eligibility::EligibilitySet::usable_mask`]); absent members are
    /// dropped from it.
    pub fn set_usable_mask(&mut self, mask: MemberMask) {
        let mask = mask.and(self.present);
        if mask == self.usable {
            return;
        }
        self.usable = mask;
        let mut n: u8 = 0;
        for m in mask.iter() {
            if let Some(e) = self.list.get_mut(usize::from(n)) {
                *e = m.as_u8();
                n = n.saturating_add(1);
            }
        }
        self.count = n;
        self.wrr.set_active(mask);
    }

    /// Sets a member's transmit utilisation directly (clamped to 1000).
    pub fn set_utilisation(&mut self, m: MemberIndex, util_permille: u16) {
        if !self.present.contains(m) {
            return;
        }
        if let Some(slot) = self.slots.get_mut(m.get()) {
            slot.util_permille = if util_permille > wrr::FULL_PERMILLE {
                wrr::FULL_PERMILLE
            } else {
                util_permille
            };
            slot.util_sampled = true;
        }
        self.refresh_weight(m);
    }

    /// Feeds a transmit counter sample: `tx_bytes_delta` bytes sent over
    /// `interval_ns` on a `link_speed_mbps` link. The running utilisation is
    /// an EWMA (alpha 1/2) of the samples. Returns the new value, or `None`
    /// when the sample is unusable (zero interval or speed, absent member).
    pub fn update_utilisation(
        &mut self,
        m: MemberIndex,
        tx_bytes_delta: u64,
        interval_ns: u64,
        link_speed_mbps: u32,
    ) -> Option<u16> {
        if !self.present.contains(m) {
            return None;
        }
        let sample = wrr::utilisation_permille(tx_bytes_delta, interval_ns, link_speed_mbps)?;
        let slot = self.slots.get_mut(m.get())?;
        slot.util_permille = if slot.util_sampled {
            wrr::smooth_utilisation(slot.util_permille, sample)
        } else {
            sample
        };
        slot.util_sampled = true;
        let util = slot.util_permille;
        self.refresh_weight(m);
        Some(util)
    }

    /// Forgets a member's utilisation (its capacity became unknown, or its
    /// counter restarted): it weighs as idle until the next sample, which
    /// then starts the average afresh.
    pub fn clear_utilisation(&mut self, m: MemberIndex) {
        if let Some(slot) = self.slots.get_mut(m.get()) {
            slot.util_permille = 0;
            slot.util_sampled = false;
        }
        if self.present.contains(m) {
            self.refresh_weight(m);
        }
    }

    /// Whether a sample has set the member's utilisation since it joined
    /// or was last cleared.
    pub fn utilisation_known(&self, m: MemberIndex) -> bool {
        self.slots.get(m.get()).is_some_and(|s| s.util_sampled)
    }

    fn refresh_weight(&mut self, m: MemberIndex) {
        let eff = match self.slots.get(m.get()) {
            Some(s) => wrr::effective_weight(s.admin_weight, s.util_permille),
            None => 0,
        };
        self.wrr.set_weight(m, eff);
    }

    /// Accounts a QP that now exists on `m`.
    pub fn qp_added(&mut self, m: MemberIndex) {
        if let Some(s) = self.slots.get_mut(m.get()) {
            s.qps = s.qps.saturating_add(1);
            s.lqf_key = lqf_key(s.outstanding_wqes, s.qps, m);
        }
    }

    /// Accounts a QP on `m` that was destroyed or errored.
    pub fn qp_removed(&mut self, m: MemberIndex) {
        if let Some(s) = self.slots.get_mut(m.get()) {
            s.qps = s.qps.saturating_sub(1);
            s.lqf_key = lqf_key(s.outstanding_wqes, s.qps, m);
        }
    }

    /// Sets `m`'s live load, QPs hosted and WQEs outstanding, as the data
    /// path counts them.
    pub fn set_load(&mut self, m: MemberIndex, qps: u32, wqes: u32) {
        if let Some(s) = self.slots.get_mut(m.get()) {
            s.qps = qps;
            s.outstanding_wqes = wqes;
            s.lqf_key = lqf_key(s.outstanding_wqes, s.qps, m);
        }
    }

    /// Sets the number of outstanding WQEs on `m` (from the module's counters).
    pub fn set_outstanding_wqes(&mut self, m: MemberIndex, wqes: u32) {
        if let Some(s) = self.slots.get_mut(m.get()) {
            s.outstanding_wqes = wqes;
            s.lqf_key = lqf_key(s.outstanding_wqes, s.qps, m);
        }
    }

    /// Adds posted WQEs to `m`'s outstanding count.
    pub fn wqes_posted(&mut self, m: MemberIndex, n: u32) {
        if let Some(s) = self.slots.get_mut(m.get()) {
            s.outstanding_wqes = s.outstanding_wqes.saturating_add(n);
            s.lqf_key = lqf_key(s.outstanding_wqes, s.qps, m);
        }
    }

    /// Removes completed WQEs from `m`'s outstanding count.
    pub fn wqes_completed(&mut self, m: MemberIndex, n: u32) {
        if let Some(s) = self.slots.get_mut(m.get()) {
            s.outstanding_wqes = s.outstanding_wqes.saturating_sub(n);
            s.lqf_key = lqf_key(s.outstanding_wqes, s.qps, m);
        }
    }

    /// Members that were added.
    pub const fn present(&self) -> MemberMask {
        self.present
    }

    /// Members that may receive new QPs.
    pub const fn usable(&self) -> MemberMask {
        self.usable
    }

    /// A member's admin weight (0 when absent).
    pub fn admin_weight(&self, m: MemberIndex) -> u16 {
        self.slots.get(m.get()).map_or(0, |s| s.admin_weight)
    }

    /// All admin weights (0 for absent members), e.g. for
    /// [`super::failover::MemberView`].
    pub fn admin_weights(&self) -> [u32; MAX_MEMBERS] {
        let mut out = [0u32; MAX_MEMBERS];
        for (o, s) in out.iter_mut().zip(self.slots.iter()) {
            *o = u32::from(s.admin_weight);
        }
        out
    }

    /// A member's effective WRR weight (admin weight x headroom).
    pub fn effective_weight(&self, m: MemberIndex) -> u32 {
        self.wrr.weight(m)
    }

    /// A member's utilisation in permille of its link rate.
    pub fn utilisation(&self, m: MemberIndex) -> u16 {
        self.slots.get(m.get()).map_or(0, |s| s.util_permille)
    }

    /// QPs accounted to a member.
    pub fn qps(&self, m: MemberIndex) -> u32 {
        self.slots.get(m.get()).map_or(0, |s| s.qps)
    }

    /// Outstanding WQEs accounted to a member.
    pub fn outstanding_wqes(&self, m: MemberIndex) -> u32 {
        self.slots.get(m.get()).map_or(0, |s| s.outstanding_wqes)
    }

    /// Chooses the member for a new QP.
    #[inline]
    pub fn place(&mut self, req: &PlaceRequest) -> Result<MemberIndex, PlaceError> {
        if let Some(pin) = req.pin {
            return if self.usable.contains(pin.member) {
                Ok(pin.member)
            } else {
                Err(PlaceError::PinnedUnusable(pin))
            };
        }
        let picked = match self.policy {
            Policy::Wrr => self.wrr.pick(),
            Policy::Lqf => self.pick_lqf(),
            Policy::Hash => self.pick_hash(&req.flow),
            Policy::RoundRobin => self.pick_rr(),
            Policy::Pinned => {
                return Err(if self.usable.is_empty() {
                    PlaceError::NoUsableMember
                } else {
                    PlaceError::PinRequired
                })
            }
        };
        picked.ok_or(PlaceError::NoUsableMember)
    }

    #[inline]
    fn pick_lqf(&self) -> Option<MemberIndex> {
        if self.usable.is_empty() {
            return None;
        }
        // Straight-line scan of the first 8 or all 16 slots, as in
        // `SmoothWrr::pick`; unusable slots read as u64::MAX, which no real
        // key reaches (LQF_COUNT_LIMIT).
        let best = if self.usable.bits() <= 0xff {
            super::min_of_8(self.lqf_keys::<8>())
        } else {
            super::min_of_all(self.lqf_keys::<MAX_MEMBERS>())
        };
        MemberIndex::new((best & 0xf) as usize)
    }

    /// LQF keys of the first `N` slots, `u64::MAX` for unusable members.
    #[inline(always)]
    fn lqf_keys<const N: usize>(&self) -> [u64; N] {
        let usable = u64::from(self.usable.bits());
        let mut keys = [u64::MAX; N];
        if let Some(slots) = self.slots.get(..N) {
            for i in 0..N {
                if let (Some(k), Some(s)) = (keys.get_mut(i), slots.get(i)) {
                    // All ones for an unusable member, without a branch.
                    let unusable = (usable.wrapping_shr(i as u32) & 1).wrapping_sub(1);
                    *k = s.lqf_key | unusable;
                }
            }
        }
        keys
    }

    #[inline]
    fn pick_hash(&self, flow: &FlowKey) -> Option<MemberIndex> {
        let slot = hash::slot_for(hash::l34_hash(flow), u32::from(self.count))?;
        let m = self.list.get(slot as usize)?;
        MemberIndex::new(usize::from(*m))
    }

    #[inline]
    fn pick_rr(&mut self) -> Option<MemberIndex> {
        let usable = self.usable.bits();
        // Members above the last pick; none when the last pick was member 15.
        let above: u16 = u16::MAX
            .checked_shl(u32::from(self.rr_last).wrapping_add(1))
            .unwrap_or_default();
        let after = usable & above;
        let from = if after != 0 { after } else { usable };
        if from == 0 {
            return None;
        }
        let i = from.trailing_zeros();
        self.rr_last = i as u8;
        MemberIndex::new(i as usize)
    }
}
