// SPDX-License-Identifier: GPL-2.0

//! Deterministic scenarios that `cargo test` and KUnit both run, so the host
//! and the kernel builds are shown to decide identically.
//!
//! Each case builds its own state on the stack, allocates nothing, uses no
//! floats and returns `Err` with a static description of the first mismatch.
//! [`CASES`] lists them all for the two runners.

use super::caps::{self, DeviceCaps, Limit, LIMIT_COUNT};
use super::eligibility::{
    AdminState, Debounce, EligibilitySet, Inputs, LacpState, Reason, Status, Usability,
};
use super::failover::{
    plan_failover, Action, ActionKind, MemberView, Planner, PlannerConfig, QpEntry, RebalanceConfig,
};
use super::hash::{l34_hash, FlowKey};
use super::knobs::{self, BondMode, ConfigError, Knob, KnobValues};
use super::placement::{Pin, PinScope, PlaceError, PlaceRequest, Placer, Policy};
use super::probe::{Direction, Health, ProbeConfig, RailProbe};
use super::resume::{plan_resume, Fate, ResumeError, SendOp};
use super::rkey::{KeyError, RemoteKeys};
use super::tfo_session::{self as tfo, Endpoint, Half, Msg, Role, Session, SessionConfig, State};
use super::wrr;
use super::{MemberIndex, MemberMask, MAX_MEMBERS};

/// Outcome of one case: `Err` names the first failed expectation.
pub type CaseResult = Result<(), &'static str>;

/// One case.
pub type Case = fn() -> CaseResult;

/// Every case with its name, for `cargo test` and the KUnit wrapper.
pub const CASES: &[(&str, Case)] = &[
    ("wrr_seed_share", wrr_seed_share),
    ("wrr_weights_respected", wrr_weights_respected),
    ("wrr_utilisation_update", wrr_utilisation_update),
    ("lqf_minimum", lqf_minimum),
    ("hash_stable", hash_stable),
    ("rr_cycles", rr_cycles),
    ("pinned_unusable", pinned_unusable),
    ("no_usable_member", no_usable_member),
    ("eligibility_lacp_downdelay", eligibility_lacp_downdelay),
    ("eligibility_flap_cancels", eligibility_flap_cancels),
    ("eligibility_late_timer", eligibility_late_timer),
    ("eligibility_immediate_faults", eligibility_immediate_faults),
    ("failover_spreads", failover_spreads),
    ("failover_no_survivor", failover_no_survivor),
    ("failover_draining_keeps", failover_draining_keeps),
    ("rebalance_hysteresis", rebalance_hysteresis),
    ("knobs_reject_out_of_range", knobs_reject_out_of_range),
    ("knobs_messages", knobs_messages),
    ("knobs_parse_names", knobs_parse_names),
    ("knobs_traffic_class", knobs_traffic_class),
    ("eligibility_quiesce", eligibility_quiesce),
    ("pfc_decisions", pfc_decisions),
    ("ulp_key_rules", ulp_key_rules),
    ("caps_intersection", caps_intersection),
    ("resume_exactly_once", resume_exactly_once),
    ("probe_one_way_loss", probe_one_way_loss),
    ("rkey_translation", rkey_translation),
    ("tfo_move_with_lost_go", tfo_move_with_lost_go),
];

/// Runs every case; returns the number that passed and the first failure.
pub fn run_all() -> (usize, Option<(&'static str, &'static str)>) {
    let mut passed = 0usize;
    let mut first_failure = None;
    for (name, case) in CASES {
        match case() {
            Ok(()) => passed = passed.saturating_add(1),
            Err(e) => {
                if first_failure.is_none() {
                    first_failure = Some((*name, e));
                }
            }
        }
    }
    (passed, first_failure)
}

fn ensure(ok: bool, what: &'static str) -> CaseResult {
    if ok {
        Ok(())
    } else {
        Err(what)
    }
}

fn m(i: usize) -> Result<MemberIndex, &'static str> {
    MemberIndex::new(i).ok_or("member index out of range")
}

const MS: u64 = 1_000_000;

/// Milliseconds in the caller's nanosecond clock.
const fn ms(n: u64) -> u64 {
    n.saturating_mul(MS)
}

fn placer_with(policy: Policy, n: usize, weight: u16) -> Result<Placer, &'static str> {
    let mut p = Placer::new(policy);
    for i in 0..n {
        p.add_member(m(i)?, weight).map_err(|e| e.message())?;
    }
    p.set_usable_mask(MemberMask::first_n(n));
    Ok(p)
}

fn place_n(
    p: &mut Placer,
    req: &PlaceRequest,
    n: usize,
    counts: &mut [u32; MAX_MEMBERS],
) -> CaseResult {
    for _ in 0..n {
        let got = p.place(req).map_err(|e| e.message())?;
        let c = counts.get_mut(got.get()).ok_or("placed out of range")?;
        *c = c.saturating_add(1);
    }
    Ok(())
}

/// Seed scenario: equal weights, member 0 at 80 %, member 1 at 50 %: member 1
/// gets exactly 60 % (effective weights 60000 : 90000).
pub fn wrr_seed_share() -> CaseResult {
    let mut p = placer_with(Policy::Wrr, 2, wrr::DEFAULT_WEIGHT)?;
    p.set_utilisation(m(0)?, 800);
    p.set_utilisation(m(1)?, 500);
    ensure(
        p.effective_weight(m(0)?) == 60_000,
        "member 0 effective weight",
    )?;
    ensure(
        p.effective_weight(m(1)?) == 90_000,
        "member 1 effective weight",
    )?;
    let mut counts = [0u32; MAX_MEMBERS];
    place_n(&mut p, &PlaceRequest::default(), 1000, &mut counts)?;
    ensure(
        counts.get(..2) == Some(&[400, 600][..]),
        "seed share is not 40/60",
    )
}

/// Weights 1:2:3:5 give exactly those counts per round, and every prefix of
/// the round stays within one placement of its ideal share.
pub fn wrr_weights_respected() -> CaseResult {
    let mut p = Placer::new(Policy::Wrr);
    let weights: [u16; 4] = [1, 2, 3, 5];
    for i in 0..weights.len() {
        let w = weights.get(i).copied().ok_or("weight")?;
        p.add_member(m(i)?, w).map_err(|e| e.message())?;
    }
    p.set_usable_mask(MemberMask::first_n(4));
    let round: u64 = 11;
    let mut counts = [0u64; 4];
    for k in 1..=round {
        let got = p.place(&PlaceRequest::default()).map_err(|e| e.message())?;
        let c = counts.get_mut(got.get()).ok_or("placed out of range")?;
        *c = c.saturating_add(1);
        for (c, w) in counts.iter().zip(weights.iter()) {
            // |count - k * w / round| <= 1, scaled by `round`.
            let ideal = k.saturating_mul(u64::from(*w));
            ensure(
                c.saturating_mul(round).abs_diff(ideal) <= round,
                "prefix off by more than one",
            )?;
        }
    }
    ensure(counts == [1, 2, 3, 5], "round counts differ from weights")
}

/// Counter samples become utilisation (EWMA) and move the effective weight.
pub fn wrr_utilisation_update() -> CaseResult {
    let mut p = placer_with(Policy::Wrr, 1, 100)?;
    let a = m(0)?;
    // 625 MB in 1 s on 10 Gb/s = 50 %.
    let u = p.update_utilisation(a, 625_000_000, 1_000_000_000, 10_000);
    ensure(u == Some(500), "first sample taken as is")?;
    // Above line rate clamps to 1000, averaged with 500.
    let u = p.update_utilisation(a, 2_000_000_000, 1_000_000_000, 10_000);
    ensure(u == Some(750), "ewma of 500 and 1000")?;
    ensure(p.effective_weight(a) == 65_000, "weight after update")?;
    ensure(
        p.update_utilisation(a, 1, 0, 10_000).is_none(),
        "zero interval is no sample",
    )?;
    ensure(
        wrr::utilisation_permille(u64::MAX, u64::MAX, u32::MAX) == Some(0),
        "huge values do not overflow",
    )?;
    ensure(
        wrr::utilisation_permille(u64::MAX, 1, 1) == Some(1000),
        "huge delta saturates",
    )
}

/// LQF picks the fewest outstanding WQEs, then fewest QPs, then lowest index.
pub fn lqf_minimum() -> CaseResult {
    let mut p = placer_with(Policy::Lqf, 4, 100)?;
    let wqes = [5u32, 3, 3, 7];
    for i in 0..wqes.len() {
        p.set_outstanding_wqes(m(i)?, wqes.get(i).copied().ok_or("wqes")?);
    }
    p.qp_added(m(1)?);
    p.qp_added(m(1)?);
    p.qp_added(m(2)?);
    let req = PlaceRequest::default();
    ensure(p.place(&req) == Ok(m(2)?), "fewest qps among least wqes")?;
    p.qp_added(m(2)?);
    ensure(p.place(&req) == Ok(m(1)?), "tie goes to lowest index")?;
    p.set_usable(m(1)?, false);
    ensure(p.place(&req) == Ok(m(2)?), "unusable member skipped")?;
    p.wqes_completed(m(3)?, 7);
    ensure(p.place(&req) == Ok(m(3)?), "drained queue wins")
}

/// The layer3+4 hash matches bonding's value and maps a flow to one member
/// until the usable set changes.
pub fn hash_stable() -> CaseResult {
    let flow = FlowKey::ipv4([10, 0, 0, 1], [10, 0, 0, 2], 49152);
    // Value computed with bonding's own C code on a little-endian host.
    ensure(
        l34_hash(&flow) == 0x5a53_5333,
        "ipv4 hash differs from bonding",
    )?;
    let src = [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4];
    let dst = [
        0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42,
    ];
    ensure(
        l34_hash(&FlowKey::from_gids(src, dst, 1234)) == 0x25aa_02ef,
        "ipv6 hash differs from bonding",
    )?;
    let mut p = placer_with(Policy::Hash, 4, 100)?;
    let req = PlaceRequest::new(flow);
    // 0x5a535333 % 4 == 3.
    for _ in 0..8 {
        ensure(p.place(&req) == Ok(m(3)?), "flow moved while set unchanged")?;
    }
    p.set_usable(m(1)?, false);
    // Usable [0, 2, 3]; 0x5a535333 % 3 == 1 -> member 2.
    ensure(p.place(&req) == Ok(m(2)?), "remap over usable set")?;
    p.set_usable(m(2)?, false);
    // Usable [0, 3]; odd hash -> position 1 -> member 3.
    ensure(p.place(&req) == Ok(m(3)?), "remap after second loss")?;
    let mut counts = [0u32; MAX_MEMBERS];
    p.set_usable_mask(MemberMask::first_n(4));
    for sport in 0..1024u16 {
        let r = PlaceRequest::new(FlowKey::ipv4(
            [10, 0, 0, 1],
            [10, 0, 0, 2],
            sport.wrapping_add(49152),
        ));
        place_n(&mut p, &r, 1, &mut counts)?;
    }
    ensure(
        counts.get(..4).is_some_and(|c| c.iter().all(|&n| n >= 128)),
        "source ports do not spread",
    )
}

/// RR visits usable members in index order and follows usability changes.
pub fn rr_cycles() -> CaseResult {
    let mut p = placer_with(Policy::RoundRobin, 4, 100)?;
    p.set_usable(m(2)?, false);
    let req = PlaceRequest::default();
    for want in [0usize, 1, 3, 0, 1] {
        ensure(p.place(&req) == Ok(m(want)?), "rr order")?;
    }
    p.set_usable(m(2)?, true);
    ensure(
        p.place(&req) == Ok(m(2)?),
        "returning member is next in order",
    )?;
    ensure(p.place(&req) == Ok(m(3)?), "then the one after")?;
    ensure(p.place(&req) == Ok(m(0)?), "wraps")
}

/// A pin wins under every policy; a pin on an unusable member is its own
/// error, distinct from "no usable member".
pub fn pinned_unusable() -> CaseResult {
    let mut p = placer_with(Policy::Pinned, 3, 100)?;
    p.set_usable(m(2)?, false);
    let pin1 = PlaceRequest::pinned(m(1)?, PinScope::Qp);
    let pin2 = PlaceRequest::pinned(m(2)?, PinScope::Pd);
    ensure(p.place(&pin1) == Ok(m(1)?), "pinned to usable")?;
    match p.place(&pin2) {
        Err(PlaceError::PinnedUnusable(pin)) => ensure(
            pin.member == m(2)? && pin.scope == PinScope::Pd,
            "pin echoed",
        )?,
        _ => return Err("pin to unusable must be PinnedUnusable"),
    }
    ensure(
        p.place(&PlaceRequest::default()) == Err(PlaceError::PinRequired),
        "pinned policy without pin",
    )?;
    p.set_policy(Policy::Wrr);
    ensure(p.place(&pin1) == Ok(m(1)?), "pin wins over wrr")?;
    p.set_usable_mask(MemberMask::EMPTY);
    ensure(
        matches!(p.place(&pin1), Err(PlaceError::PinnedUnusable(_))),
        "pin error even with no member",
    )?;
    let pin = Pin {
        member: m(0)?,
        scope: PinScope::Qp,
    };
    ensure(
        PlaceError::NoUsableMember.message() != PlaceError::PinnedUnusable(pin).message(),
        "distinct texts",
    )
}

/// Every policy reports "no usable member" on an empty usable set.
pub fn no_usable_member() -> CaseResult {
    for policy in Policy::ALL {
        let mut p = placer_with(policy, 3, 100)?;
        p.set_usable_mask(MemberMask::EMPTY);
        ensure(
            p.place(&PlaceRequest::default()) == Err(PlaceError::NoUsableMember),
            "empty set must give NoUsableMember",
        )?;
    }
    let mut p = Placer::new(Policy::Wrr);
    ensure(
        p.place(&PlaceRequest::default()) == Err(PlaceError::NoUsableMember),
        "no members at all",
    )
}

const DEB: Debounce = Debounce {
    updelay_ns: ms(100),
    downdelay_ns: ms(200),
};

fn st(usability: Usability, reason: Reason) -> Status {
    Status { usability, reason }
}

/// LACP stops distributing on a bond slave: drain for downdelay, then
/// unusable; recovery waits updelay. Deadlines are exposed for the timer.
pub fn eligibility_lacp_downdelay() -> CaseResult {
    let mut e = EligibilitySet::new(DEB);
    let a = m(0)?;
    let slave_ok = LacpState::Slave {
        link_up: true,
        tx_enabled: true,
    };
    let slave_off = LacpState::Slave {
        link_up: true,
        tx_enabled: false,
    };
    let t = e.add_member(
        a,
        Inputs {
            lacp: slave_ok,
            ..Inputs::HEALTHY
        },
        0,
    );
    ensure(t.len() == 1 && e.status(a) == Status::READY, "added usable")?;
    let t = e.set_lacp(a, slave_off, ms(1000));
    ensure(t.len() == 1, "one transition on fault")?;
    ensure(
        e.status(a) == st(Usability::Draining, Reason::DownDelay),
        "draining in downdelay",
    )?;
    ensure(e.next_deadline() == Some(ms(1200)), "downdelay deadline")?;
    ensure(e.poll(ms(1199)).is_empty(), "not before deadline")?;
    let t = e.poll(ms(1200));
    let tr = t.get(0).ok_or("expiry transition")?;
    ensure(
        tr.to == st(Usability::Unusable, Reason::LacpNotDistributing)
            && tr.at_ns == ms(1200)
            && tr.usability_changed(),
        "unusable after downdelay",
    )?;
    ensure(e.usable_mask().is_empty(), "not usable")?;
    ensure(e.unusable_mask() == MemberMask::first_n(1), "unusable mask")?;
    e.set_lacp(a, slave_ok, ms(2000));
    ensure(
        e.status(a) == st(Usability::Unusable, Reason::UpDelay),
        "updelay",
    )?;
    ensure(e.next_deadline() == Some(ms(2100)), "updelay deadline")?;
    let t = e.poll(ms(2100));
    ensure(t.len() == 1 && e.status(a) == Status::READY, "usable again")?;
    ensure(e.next_deadline().is_none(), "no deadline left")
}

/// A link bounce shorter than downdelay never makes the member unusable.
pub fn eligibility_flap_cancels() -> CaseResult {
    let mut e = EligibilitySet::new(DEB);
    let a = m(3)?;
    e.add_member(a, Inputs::HEALTHY, 0);
    for k in 0..10u64 {
        let base = k.saturating_mul(ms(100)).saturating_add(ms(1000));
        let t = e.set_link_up(a, false, base);
        ensure(
            t.len() == 1 && e.status(a).usability == Usability::Draining,
            "drains on flap",
        )?;
        let t = e.set_link_up(a, true, base.saturating_add(ms(50)));
        ensure(
            t.len() == 1 && e.status(a) == Status::READY,
            "flap cancelled",
        )?;
        ensure(e.next_deadline().is_none(), "deadline cancelled")?;
    }
    Ok(())
}

/// An input arriving after an unpolled deadline reports the expiry first, at
/// the deadline's time.
pub fn eligibility_late_timer() -> CaseResult {
    let mut e = EligibilitySet::new(DEB);
    let a = m(1)?;
    e.add_member(a, Inputs::HEALTHY, 0);
    e.set_port_active(a, false, 0);
    let t = e.set_port_active(a, true, ms(500));
    ensure(t.len() == 2, "expiry and recovery")?;
    let first = t.get(0).ok_or("first")?;
    let second = t.get(1).ok_or("second")?;
    ensure(
        first.to == st(Usability::Unusable, Reason::PortDown) && first.at_ns == ms(200),
        "expiry at its deadline",
    )?;
    ensure(
        second.to == st(Usability::Unusable, Reason::UpDelay) && second.at_ns == ms(500),
        "then updelay",
    )?;
    ensure(!second.usability_changed(), "reason-only change")
}

/// Device loss and admin down act at once; drain keeps QPs.
pub fn eligibility_immediate_faults() -> CaseResult {
    let mut e = EligibilitySet::new(DEB);
    let a = m(0)?;
    let b = m(1)?;
    e.add_member(a, Inputs::HEALTHY, 0);
    e.add_member(b, Inputs::HEALTHY, 0);
    e.set_device_present(a, false, 10);
    ensure(
        e.status(a) == st(Usability::Unusable, Reason::DeviceAbsent),
        "device loss is immediate",
    )?;
    e.set_admin(b, AdminState::Drain, 10);
    ensure(
        e.status(b) == st(Usability::Draining, Reason::AdminDrain),
        "admin drain",
    )?;
    ensure(e.draining_mask() == MemberMask::EMPTY.with(b), "drain mask")?;
    e.set_admin(b, AdminState::Down, 20);
    ensure(
        e.status(b) == st(Usability::Unusable, Reason::AdminDown),
        "admin down",
    )?;
    e.set_admin(b, AdminState::Up, 30);
    ensure(e.status(b) == Status::READY, "admin up needs no updelay")?;
    let t = e.remove_member(b, 40);
    ensure(t.len() == 1 && e.status(b) == Status::NOT_MEMBER, "removed")?;
    ensure(
        e.set_link_up(b, false, 50).is_empty(),
        "absent slot ignores input",
    )
}

fn rr_table<const N: usize>(members: usize) -> Result<[QpEntry; N], &'static str> {
    let mut t = [QpEntry {
        id: 0,
        member: m(0)?,
        load: 1,
    }; N];
    for i in 0..N {
        let q = t.get_mut(i).ok_or("table")?;
        q.id = 1000u32.saturating_add(i as u32);
        q.member = m(i.checked_rem(members).ok_or("members")?)?;
    }
    Ok(t)
}

const NO_ACTION: Action = Action {
    qp_index: 0,
    qp_id: 0,
    from: MemberIndex::FIRST,
    to: None,
    kind: ActionKind::Failover,
};

/// A failed member's QPs are errored once each and spread over survivors.
pub fn failover_spreads() -> CaseResult {
    let qps: [QpEntry; 40] = rr_table(4)?;
    let view = MemberView::new(
        MemberMask::from_bits(0b1011),
        MemberMask::EMPTY,
        [100; MAX_MEMBERS],
    );
    let mut out = [NO_ACTION; 40];
    let sum = plan_failover(&view, &qps, &mut out);
    ensure(
        sum.errored == 10 && sum.replaced == 10 && sum.written == 10 && !sum.truncated,
        "ten errored and replaced",
    )?;
    let mut got = [0u32; MAX_MEMBERS];
    let mut seen = [false; 40];
    for a in out.get(..sum.written).ok_or("written")? {
        ensure(a.from == m(2)?, "only failed member's QPs")?;
        let s = seen.get_mut(a.qp_index).ok_or("index")?;
        ensure(!*s, "QP errored twice")?;
        *s = true;
        let to = a.to.ok_or("no target")?;
        ensure(to != m(2)?, "target is the failed member")?;
        let g = got.get_mut(to.get()).ok_or("target range")?;
        *g = g.saturating_add(1);
    }
    ensure(got.get(..4) == Some(&[4, 3, 0, 3][..]), "spread 4/3/3")
}

/// With no survivor every QP is errored without a target.
pub fn failover_no_survivor() -> CaseResult {
    let qps: [QpEntry; 6] = rr_table(2)?;
    let view = MemberView::new(MemberMask::EMPTY, MemberMask::EMPTY, [100; MAX_MEMBERS]);
    let mut out = [NO_ACTION; 6];
    let sum = plan_failover(&view, &qps, &mut out);
    ensure(
        sum.errored == 6 && sum.replaced == 0 && sum.written == 6,
        "all errored",
    )?;
    ensure(out.iter().all(|a| a.to.is_none()), "no targets")?;
    let mut short = [NO_ACTION; 2];
    let sum = plan_failover(&view, &qps, &mut short);
    ensure(
        sum.truncated && sum.written == 2 && sum.errored == 6,
        "truncation reported",
    )
}

/// Draining members keep their QPs and receive no replacements.
pub fn failover_draining_keeps() -> CaseResult {
    let qps: [QpEntry; 12] = rr_table(3)?;
    let view = MemberView::new(
        MemberMask::from_bits(0b001),
        MemberMask::from_bits(0b010),
        [100; MAX_MEMBERS],
    );
    let mut out = [NO_ACTION; 12];
    let sum = plan_failover(&view, &qps, &mut out);
    ensure(sum.errored == 4, "only member 2's QPs")?;
    let (m0, m2) = (m(0)?, m(2)?);
    ensure(
        out.get(..4)
            .ok_or("written")?
            .iter()
            .all(|a| a.from == m2 && a.to == Some(m0)),
        "all to the one usable member",
    )
}

/// Rebalance is off by default, waits for the settle time, moves at most
/// `max_moves` per tick and stops inside the hysteresis band.
pub fn rebalance_hysteresis() -> CaseResult {
    let mut qps: [QpEntry; 40] = rr_table(3)?;
    let view = MemberView::new(
        MemberMask::first_n(4),
        MemberMask::EMPTY,
        [100; MAX_MEMBERS],
    );
    let mut out = [NO_ACTION; 40];
    let mut off = Planner::new(PlannerConfig::default());
    ensure(
        off.on_tick(&view, &qps, &mut out, ms(100_000)).written == 0,
        "rebalance off by default",
    )?;
    let cfg = RebalanceConfig::DEFAULT;
    let mut p = Planner::new(PlannerConfig {
        rebalance: Some(cfg),
    });
    // Member 3 recovered at t=0 with no QPs: loads 14/13/13/0.
    p.on_member_change(&view, &qps, &mut out, 0);
    ensure(
        p.on_tick(&view, &qps, &mut out, ms(5_000)).written == 0,
        "settle time respected",
    )?;
    let mut expect = [8usize, 1, 0];
    let mut now = ms(10_000);
    for want in expect.iter_mut() {
        let sum = p.on_tick(&view, &qps, &mut out, now);
        ensure(sum.rebalanced == *want, "moves per tick")?;
        for a in out.get(..sum.written).ok_or("written")? {
            ensure(a.kind == ActionKind::Rebalance, "kind")?;
            let q = qps.get_mut(a.qp_index).ok_or("index")?;
            q.member = a.to.ok_or("target")?;
        }
        ensure(
            p.on_tick(&view, &qps, &mut out, now.saturating_add(MS))
                .written
                == 0,
            "min interval respected",
        )?;
        now = now.saturating_add(ms(5_000));
    }
    let mut loads = [0u32; 4];
    for q in &qps {
        let l = loads.get_mut(q.member.get()).ok_or("member")?;
        *l = l.saturating_add(1);
    }
    ensure(loads == [10, 10, 11, 9], "final loads inside the band")
}

/// Out-of-range values are refused, wide values are not truncated.
pub fn knobs_reject_out_of_range() -> CaseResult {
    let bad: [(Knob, u64); 13] = [
        (Knob::RpRpgThreshold, 0),
        (Knob::RpRpgThreshold, 32),
        (Knob::RpRpgGd, 16),
        (Knob::RpRpgMinDecFac, 0),
        (Knob::RpRpgMinDecFac, 101),
        (Knob::RpInitialAlphaValue, 1024),
        (Knob::RpDceTcpG, 1024),
        (Knob::NpCnpDscp, 64),
        (Knob::NpCnp802pPrio, 8),
        (Knob::NpEnable, 2),
        (Knob::RpRateReduceMonitorPeriod, 1 << 31),
        (Knob::Weight, 0),
        (Knob::NpCnpDscp, (1 << 32) | 5),
    ];
    for (k, v) in bad {
        ensure(
            k.validate(v) == Err(ConfigError::OutOfRange(k)),
            "out-of-range value accepted",
        )?;
    }
    let good: [(Knob, u64); 6] = [
        (Knob::RpRpgThreshold, 31),
        (Knob::RpRpgGd, 1),
        (Knob::NpCnpDscp, 63),
        (Knob::NpCnp802pPrio, 7),
        (Knob::RpInitialAlphaValue, 0),
        (Knob::PfcEnable, 0xff),
    ];
    for (k, v) in good {
        ensure(k.validate(v) == Ok(v as u32), "in-range value refused")?;
    }
    ensure(
        knobs::validate_pfc_bitmap(0x100).is_err(),
        "pfc wider than u8",
    )?;
    ensure(knobs::validate_pfc_bitmap(0x08) == Ok(0x08), "pfc prio 3")?;
    ensure(knobs::validate_weight(1001).is_err(), "weight above max")?;
    ensure(
        knobs::validate_member_count(17) == Err(ConfigError::TooManyMembers),
        "17 members",
    )?;
    ensure(
        knobs::validate_member_count(0) == Err(ConfigError::NoMembers),
        "0 members",
    )?;
    ensure(
        knobs::check_rate_for_link(Knob::RpRpgAiRate, 25_000, 10_000)
            == Err(ConfigError::RateAboveLink(Knob::RpRpgAiRate)),
        "rate above link",
    )?;
    let mut kv = KnobValues::DEFAULTS;
    ensure(kv.set(Knob::RpRpgThreshold, 40).is_err(), "store refuses")?;
    ensure(
        kv.get(Knob::RpRpgThreshold) == 1,
        "store unchanged on error",
    )?;
    ensure(kv.set(Knob::RpRpgThreshold, 5) == Ok(5), "store accepts")?;
    ensure(kv.get(Knob::RpRpgThreshold) == 5, "store keeps value")?;
    for k in Knob::ALL {
        ensure(
            k.validate(u64::from(k.default_value())).is_ok(),
            "default out of its own range",
        )?;
    }
    Ok(())
}

/// Every error text is non-empty and its NUL form is the same text plus NUL.
pub fn knobs_messages() -> CaseResult {
    let mut errors = [ConfigError::UnknownKnob; 14 + 24];
    let fixed = [
        ConfigError::UnknownKnob,
        ConfigError::UnknownPolicy,
        ConfigError::UnknownMode,
        ConfigError::Mode8023adRefused,
        ConfigError::TooManyMembers,
        ConfigError::NoMembers,
        ConfigError::MemberExists,
        ConfigError::NoSuchMember,
        ConfigError::RateAboveLink(Knob::RpRpgAiRate),
        ConfigError::CongestionControlUnsupported,
        ConfigError::OutOfRange(Knob::Weight),
        ConfigError::NothingToSet,
        ConfigError::ConflictingOverride,
        ConfigError::NotANumber,
    ];
    let mut n = 0usize;
    for e in fixed
        .iter()
        .copied()
        .chain(Knob::ALL.iter().map(|k| ConfigError::OutOfRange(*k)))
    {
        if let Some(slot) = errors.get_mut(n) {
            *slot = e;
            n = n.saturating_add(1);
        }
    }
    for e in errors.get(..n).ok_or("count")? {
        let msg = e.message().as_bytes();
        let nul = e.message_nul();
        ensure(!msg.is_empty(), "empty message")?;
        ensure(nul.split_last() == Some((&0, msg)), "nul form differs")?;
        ensure(!msg.contains(&0), "interior NUL")?;
    }
    ensure(
        ConfigError::OutOfRange(Knob::RpRpgThreshold).message()
            == "mrbond: rp_rpg_threshold out of range (1..31)",
        "range text",
    )?;
    for e in [
        PlaceError::NoUsableMember,
        PlaceError::PinRequired,
        PlaceError::PinnedUnusable(Pin {
            member: m(0)?,
            scope: PinScope::Pd,
        }),
    ] {
        ensure(
            e.message_nul().split_last() == Some((&0, e.message().as_bytes())),
            "place error nul form",
        )?;
    }
    Ok(())
}

/// Names parse (with sysfs' newline), ids and names round-trip.
pub fn knobs_parse_names() -> CaseResult {
    for policy in Policy::ALL {
        ensure(
            Policy::from_name(policy.name().as_bytes()) == Ok(policy),
            "policy name round trip",
        )?;
    }
    ensure(
        Policy::from_name(b"rr\n") == Ok(Policy::RoundRobin),
        "newline",
    )?;
    ensure(Policy::from_name(b"lqf\0") == Ok(Policy::Lqf), "nul")?;
    ensure(
        Policy::from_name(b"WRR") == Err(ConfigError::UnknownPolicy),
        "case sensitive",
    )?;
    ensure(
        Policy::from_name(b"") == Err(ConfigError::UnknownPolicy),
        "empty",
    )?;
    ensure(knobs::parse_mode(b"rail") == Ok(BondMode::Rail), "rail")?;
    ensure(
        knobs::parse_mode(b"active-backup\n") == Ok(BondMode::ActiveBackup),
        "active-backup",
    )?;
    ensure(
        knobs::parse_mode(b"802.3ad") == Err(ConfigError::Mode8023adRefused),
        "802.3ad refused with reason",
    )?;
    ensure(
        knobs::parse_mode(b"balance-rr") == Err(ConfigError::UnknownMode),
        "unknown mode",
    )?;
    for k in Knob::ALL {
        ensure(
            Knob::from_name(k.name().as_bytes()) == Some(*k),
            "knob name",
        )?;
        ensure(Knob::from_id(k.id()) == Some(*k), "knob id")?;
    }
    ensure(Knob::from_name(b"rp_rpg_nope").is_none(), "unknown knob")
}

/// Traffic class of bond QPs: default for 0, DSCP kept, ECN bits ECT(0) or
/// cleared.
pub fn knobs_traffic_class() -> CaseResult {
    use super::congestion::qp_traffic_class;
    ensure(qp_traffic_class(0x68, 0, true) == 0x6a, "dscp 26 + ect0")?;
    ensure(qp_traffic_class(0x6b, 0, false) == 0x68, "ecn bits cleared")?;
    ensure(qp_traffic_class(0x03, 0, true) == 0x02, "CE becomes ECT(0)")?;
    ensure(qp_traffic_class(0, 0x60, true) == 0x62, "default for 0")?;
    ensure(qp_traffic_class(0x20, 0x60, false) == 0x20, "request wins")?;
    ensure(qp_traffic_class(0, 0, false) == 0, "nothing configured")?;
    ensure(
        KnobValues::DEFAULTS.qp_traffic_class(0) == 0x02,
        "default: ECT(0) only",
    )?;
    ensure(knobs::validate_tclass(256).is_err(), "tclass 256")
}

/// A quiesced member drains, keeps its QPs, and comes back on release;
/// admin drain and link faults keep their own reasons.
pub fn eligibility_quiesce() -> CaseResult {
    let mut e = EligibilitySet::new(Debounce::default());
    let (a, b) = (m(0)?, m(1)?);
    let _ = e.add_member(a, Inputs::HEALTHY, 0);
    let _ = e.add_member(b, Inputs::HEALTHY, 0);
    let t = e.set_quiesced(a, true, 5);
    ensure(t.len() == 1, "one transition")?;
    ensure(
        e.status(a) == st(Usability::Draining, Reason::Quiesced),
        "quiesced drains",
    )?;
    ensure(e.usable_mask() == MemberMask::from_bits(0b10), "b alone")?;
    ensure(e.quiesced(a) && !e.quiesced(b), "flag")?;
    let _ = e.update(a, Inputs::HEALTHY, 6);
    ensure(e.quiesced(a), "inputs leave the flag alone")?;
    let _ = e.set_admin(a, AdminState::Drain, 7);
    ensure(e.status(a).reason == Reason::AdminDrain, "admin first")?;
    let _ = e.set_admin(a, AdminState::Up, 8);
    let _ = e.set_quiesced(a, false, 9);
    ensure(e.status(a) == Status::READY, "released")?;
    ensure(e.set_quiesced(m(5)?, true, 9).is_empty(), "absent slot")
}

/// PFC fan-out decisions: skip a member that has the value, report one
/// without dcbnl as unsupported, roll back a failed or unkept change.
pub fn pfc_decisions() -> CaseResult {
    use super::congestion::{
        pfc_outcome, pfc_plan, pfc_target, Errno, KnobStatus, PfcOutcome, PfcPlan, Unsupported,
    };
    ensure(pfc_target(Some(0x08), None) == Some(0x08), "bond value")?;
    ensure(pfc_target(Some(0x08), Some(0x0c)) == Some(0x0c), "override")?;
    ensure(pfc_target(None, None).is_none(), "unset")?;
    ensure(pfc_plan(None, Ok(0)) == PfcPlan::Leave, "leave")?;
    ensure(pfc_plan(Some(8), Ok(0)) == PfcPlan::Apply(8), "apply")?;
    ensure(
        pfc_plan(Some(8), Ok(8)) == PfcPlan::Report(KnobStatus::Applied),
        "already there",
    )?;
    ensure(
        pfc_plan(Some(8), Err(Errno::EOPNOTSUPP))
            == PfcPlan::Report(KnobStatus::Unsupported(Unsupported::NoDcbnlSetpfc)),
        "no dcbnl",
    )?;
    ensure(
        pfc_outcome(8, Ok(()), Ok(8)) == PfcOutcome::Applied,
        "read back",
    )?;
    ensure(
        pfc_outcome(8, Err(Errno::EIO), Ok(0)) == PfcOutcome::RollBack(Errno::EIO),
        "set failed",
    )?;
    ensure(
        pfc_outcome(8, Ok(()), Ok(9)) == PfcOutcome::RollBack(Errno::EPROTO),
        "mismatch",
    )
}

/// Which ULPs may spread a PD's QPs, which answer requests, and where an MR
/// binds (see `ulp.rs`).
pub fn ulp_key_rules() -> CaseResult {
    use super::ulp::{is_passive, key_rule, mr_member, KeyRule};
    ensure(
        key_rule(b"nvme_rdma") == KeyRule::Spread,
        "nvme_rdma spreads",
    )?;
    ensure(
        key_rule(b"nvmet_rdma") == KeyRule::Spread,
        "nvmet_rdma spreads",
    )?;
    ensure(
        key_rule(b"ib_iser") == KeyRule::PinPd,
        "ib_iser pins its PD",
    )?;
    ensure(key_rule(b"rds_rdma") == KeyRule::PinPd, "rds pins its PD")?;
    ensure(key_rule(b"") == KeyRule::PinPd, "unknown ULPs pin their PD")?;
    ensure(is_passive(b"nvmet_rdma"), "nvmet is a target")?;
    ensure(!is_passive(b"nvme_rdma"), "nvme is an initiator")?;
    ensure(is_passive(b"mrbond_xperf_srv"), "the bench server answers")?;
    ensure(!is_passive(b"mrbond_xperf"), "the bench client connects")?;
    let (a, b, c) = (m(0)?, m(1)?, m(2)?);
    ensure(
        mr_member(Some(c), Some(b), Some(a)) == Some(c),
        "task hint first",
    )?;
    ensure(
        mr_member(None, Some(b), Some(a)) == Some(b),
        "then the last QP",
    )?;
    ensure(
        mr_member(None, None, Some(a)) == Some(a),
        "then the PD home",
    )?;
    ensure(mr_member(None, None, None).is_none(), "no QP: no member")
}

/// The vdev reports what every member can do: limits are minima, page sizes
/// and inherited flags intersect, the ACK delay is the slowest member's; a
/// member that falls short of frozen attributes is named by its field.
pub fn caps_intersection() -> CaseResult {
    let member = |limit: u64, pages: u64, flags: u64, delay: u8| DeviceCaps {
        limits: [limit; LIMIT_COUNT],
        page_size_cap: pages,
        cap_flags: flags,
        local_ca_ack_delay: delay,
    };
    let a = member(4096, 0xf000, 0b111, 10);
    let b = member(1024, 0x3000, 0b011, 15);
    let mut v = caps::intersect(&[a, b], 0b110);
    ensure(v.get(Limit::MaxQp) == 1024, "limits are minima")?;
    ensure(v.page_size_cap == 0x3000, "page sizes intersect")?;
    ensure(
        v.cap_flags == 0b010,
        "only inherited flags, of every member",
    )?;
    ensure(v.local_ca_ack_delay == 15, "the slowest ACK delay")?;
    ensure(
        caps::intersect(&[], 0b110) == DeviceCaps::NONE,
        "no member: nothing",
    )?;
    v.clamp(Limit::MaxSendSge, 16);
    ensure(v.get(Limit::MaxSendSge) == 16, "clamped")?;
    ensure(caps::weaker(&b, &v).is_none(), "a member covers its bond")?;
    ensure(
        caps::weaker(&member(512, 0x3000, 0b010, 15), &v) == Some("max_mr_size"),
        "the first short limit is named",
    )?;
    ensure(
        caps::weaker(&member(4096, 0x3000, 0b010, 16), &v) == Some("local_ca_ack_delay"),
        "a slower member is refused",
    )
}

/// A QP resumed on another rail: of the WRs without a completion, those the
/// peer's receive count shows executed succeed, the rest are posted again;
/// a count the ring rules out, or an atomic, takes the flush path.
pub fn resume_exactly_once() -> CaseResult {
    use SendOp::{Consuming, Read, Unresumable, Write};
    let ops = [Write, Consuming, Read, Consuming, Write, Consuming];
    let mut fates = [Fate::Repost; 6];
    // 3 consuming WRs completed here before; the peer consumed 5 receives:
    // the first two consuming WRs of the ring.
    let plan = plan_resume(&ops, 3, 5, &mut fates).map_err(|_| "a consistent count resumes")?;
    ensure(
        fates
            == [
                Fate::Succeed,
                Fate::Succeed,
                Fate::Repost,
                Fate::Succeed,
                Fate::Repost,
                Fate::Repost,
            ],
        "executed WRs succeed, a READ and what follows the last executed are posted again",
    )?;
    ensure(
        plan.succeed == 3 && plan.repost == 3 && plan.writes_maybe_twice == 1,
        "the plan's counts",
    )?;
    ensure(
        plan_resume(&ops, 3, 2, &mut fates) == Err(ResumeError::PeerBehind),
        "a peer behind what completed here",
    )?;
    ensure(
        plan_resume(&ops, 3, 7, &mut fates) == Err(ResumeError::PeerAhead),
        "a peer ahead of what was posted",
    )?;
    ensure(
        plan_resume(&[Consuming, Unresumable], 0, 1, &mut fates) == Err(ResumeError::Unresumable),
        "an atomic is not resumed",
    )
}

/// Two rail probes exchanging heartbeats: when one direction drops them,
/// the end that stops hearing says "receive" and the other "transmit".
pub fn probe_one_way_loss() -> CaseResult {
    let cfg = ProbeConfig::DEFAULT;
    let mut a = RailProbe::new(cfg, 0);
    let mut b = RailProbe::new(cfg, 0);
    let lost_from = cfg.interval_ns.saturating_mul(20);
    let mut now = 0u64;
    let (mut a_down, mut b_down) = (None, None);
    while now < cfg.interval_ns.saturating_mul(40) {
        let (seq, echo) = a.heartbeat();
        if now < lost_from {
            b.heard(seq, echo, now);
        }
        let (seq, echo) = b.heartbeat();
        a.heard(seq, echo, now);
        if let Some(h) = a.tick(now) {
            a_down = a_down.or(Some(h));
        }
        if let Some(h) = b.tick(now) {
            b_down = b_down.or(Some(h));
        }
        now = now.saturating_add(cfg.interval_ns);
    }
    ensure(
        matches!(a_down, Some(Health::Down(Direction::Transmit, _))),
        "the unheard end says transmit",
    )?;
    ensure(
        matches!(b_down, Some(Health::Down(Direction::Receive, _))),
        "the deaf end says receive",
    )
}

/// A peer's bond rkey becomes its member rkey on the current rail with the
/// ULP's key byte; a rail change forgets every key.
pub fn rkey_translation() -> CaseResult {
    let mut store = [None; 4];
    let mut keys = RemoteKeys::new(&mut store);
    ensure(keys.update(&[(0x201, 0x0055_6601)]).is_ok(), "in range")?;
    ensure(
        keys.translate(0x2a7) == Ok(0x0055_66a7),
        "base and key byte",
    )?;
    ensure(
        keys.update(&[(0x001, 1), (0x401, 2)]) == Err(KeyError::OutOfRange)
            && keys.translate(0x001) == Err(KeyError::Unknown),
        "a batch out of range changes nothing",
    )?;
    keys.clear();
    ensure(
        keys.translate(0x2a7) == Err(KeyError::Unknown),
        "a rail change forgets",
    )
}

/// Whether a session call made exactly `want`, in order.
fn made(actions: tfo::Actions, want: &[tfo::Action]) -> bool {
    actions.len() == want.len() && actions.iter().zip(want).all(|(a, b)| a == *b)
}

/// Both ends of a connection move off rail 0 to rail 1; the active end's
/// Go is lost, the passive end's retransmitted answer brings it again.
/// Each end replays once, with the other's final count, after the other's
/// new QP is connected.
pub fn tfo_move_with_lost_go() -> CaseResult {
    use tfo::Action::{Connect, Drain, Hold, Prepare, Replay, Send};
    let cfg = SessionConfig::DEFAULT;
    let ms = 1_000_000u64;
    let (mut a, mut p) = (
        Session::new(Role::Active, cfg),
        Session::new(Role::Passive, cfg),
    );
    a.capable(0);
    p.capable(0);
    let ep_a = Endpoint { qpn: 0x11, psn: 1 };
    let ep_p = Endpoint { qpn: 0x22, psn: 2 };
    ensure(
        made(
            a.rail_failed(0, 0b11, 0),
            &[Hold, Drain, Prepare { rail: 1 }],
        ),
        "the active end holds, drains and readies rail 1",
    )?;
    ensure(made(a.prepared(ep_a, ms), &[]), "no offer before the drain")?;
    let offer = Msg::Offer {
        epoch: 1,
        half: Half {
            rx_consumed: 10,
            endpoint: ep_a,
            rail: 1,
        },
    };
    ensure(made(a.drained(10, 2 * ms), &[Send(offer)]), "the offer")?;
    ensure(
        made(
            p.receive(offer, 0b11, 3 * ms),
            &[Hold, Drain, Prepare { rail: 1 }],
        ),
        "the offer starts the move at the passive end",
    )?;
    ensure(made(p.drained(7, 4 * ms), &[]), "no answer before the QP")?;
    let answer = Msg::Answer {
        epoch: 1,
        half: Half {
            rx_consumed: 7,
            endpoint: ep_p,
            rail: 1,
        },
    };
    ensure(
        made(p.prepared(ep_p, 5 * ms), &[Connect(ep_a), Send(answer)]),
        "the passive end connects, then answers",
    )?;
    let go = Msg::Go { epoch: 1 };
    ensure(
        made(
            a.receive(answer, 0b11, 6 * ms),
            &[
                Connect(ep_p),
                Replay {
                    peer_rx_consumed: 7,
                },
                Send(go),
            ],
        ),
        "the active end connects, replays, says go",
    )?;
    // The Go is lost.
    ensure(
        made(
            p.tick(cfg.retransmit_ns.saturating_add(5 * ms)),
            &[Send(answer)],
        ),
        "the answer again",
    )?;
    ensure(
        made(a.receive(answer, 0b11, 30 * ms), &[Send(go)]),
        "go again",
    )?;
    ensure(
        made(
            p.receive(go, 0b11, 31 * ms),
            &[Replay {
                peer_rx_consumed: 10,
            }],
        ),
        "the passive end replays on go",
    )?;
    ensure(
        matches!(
            (a.state(), p.state()),
            (
                State::Running {
                    rail: 1,
                    epoch: 1,
                    ..
                },
                State::Running {
                    rail: 1,
                    epoch: 1,
                    ..
                }
            )
        ),
        "both ends carry on over rail 1",
    )
}
