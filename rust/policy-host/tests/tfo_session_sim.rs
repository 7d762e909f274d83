// SPDX-License-Identifier: GPL-2.0
//! Both ends of a connection moving off a failed rail, over a channel that
//! loses, duplicates and reorders MADs until it heals, with drains and QP
//! preparation taking random times and each end noticing the failure on its
//! own, sometimes with the new rail failing too. Every action is checked as
//! it happens:
//! - an end replays at most once per move, with the peer's final count of
//!   consumed receives, and only once the peer's new QP is connected to its
//!   own (so nothing it sends meets a QP that cannot receive);
//! - an end connects to the QP the peer prepared for the same move;
//! - the flush path is taken at most once, never after a replay of the same
//!   move, and nothing is replayed after it;
//!
//! and at the end: both ends carry on over the same healthy rail and move,
//! or both are on the flush path; with a channel that loses nothing and a
//! healthy rail to go to, both carry on.

use std::collections::BTreeMap;

use mrbond_policy::policy::tfo_session::{
    Action, Endpoint, Handshake, Msg, RailSet, Role, Session, SessionConfig, State, MAX_ACTIONS,
};
use proptest::prelude::*;

const MS: u64 = 1_000_000;
const CFG: SessionConfig = SessionConfig::DEFAULT;

/// A xorshift generator: the schedule's randomness, from proptest's seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Uniform in `lo..hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

#[derive(Clone, Copy, Debug)]
enum Event {
    Deliver { to: usize, msg: Msg },
    Drained { end: usize, epoch: u16 },
    Prepared { end: usize, epoch: u16, qpn: u32 },
    Detect { end: usize, rail: u8 },
}

/// One end: its session and what its driver did, per move.
struct End {
    session: Session,
    /// Rails this end knows failed.
    failed: RailSet,
    /// Receives consumed (grows while the connection carries data).
    rx: u64,
    held: bool,
    flushed: bool,
    /// Per epoch: the final count, the prepared QP, the QP connected to,
    /// whether replayed.
    finals: BTreeMap<u16, u64>,
    prepared: BTreeMap<u16, u32>,
    connected: BTreeMap<u16, u32>,
    replayed: BTreeMap<u16, bool>,
    /// A detection the traffic of a dead peer will cause is scheduled.
    doomed: bool,
}

#[derive(Clone, Debug)]
struct Schedule {
    rails: u8,
    /// Percent of MADs lost and duplicated before `heal`.
    loss: u64,
    dup: u64,
    heal: u64,
    /// When each end notices rail 0 failed.
    detect: [u64; 2],
    /// The rail that fails during the move, and when.
    second: Option<(u8, u64)>,
    seed: u64,
}

struct World {
    now: u64,
    seq: u64,
    events: BTreeMap<(u64, u64), Event>,
    ends: [End; 2],
    rng: Rng,
    next_qpn: u32,
    loss: u64,
    dup: u64,
    heal: u64,
    all: RailSet,
}

fn epoch_of(state: State, before: u16) -> u16 {
    match state {
        State::Moving(m) => m.epoch,
        State::Running { epoch, .. } => epoch,
        State::Plain | State::Fallback => before,
    }
}

impl World {
    fn at(&mut self, t: u64, ev: Event) {
        self.seq += 1;
        self.events.insert((t, self.seq), ev);
    }

    fn usable(&self, end: usize) -> RailSet {
        self.all & !self.ends[end].failed
    }

    /// Runs what a session call returned, checking each action.
    fn run(&mut self, end: usize, epoch_before: u16, actions: &[Action], made: usize) {
        assert!(made <= MAX_ACTIONS, "a call made {made} actions");
        let peer = 1 - end;
        let epoch = epoch_of(self.ends[end].session.state(), epoch_before);
        for &action in actions {
            match action {
                Action::Hold => self.ends[end].held = true,
                Action::Drain => {
                    let t = self.now + self.rng.range(MS, 50 * MS);
                    self.at(t, Event::Drained { end, epoch });
                }
                Action::Prepare { .. } => {
                    self.next_qpn += 1;
                    let qpn = self.next_qpn;
                    let t = self.now + self.rng.range(MS, 50 * MS);
                    self.at(t, Event::Prepared { end, epoch, qpn });
                }
                Action::Send(msg) => {
                    let lossy = self.now < self.heal;
                    if lossy && self.rng.chance(self.loss) {
                        continue;
                    }
                    let copies = if lossy && self.rng.chance(self.dup) {
                        2
                    } else {
                        1
                    };
                    for _ in 0..copies {
                        let t = self.now + self.rng.range(MS / 10, 5 * MS);
                        self.at(t, Event::Deliver { to: peer, msg });
                    }
                }
                Action::Connect(ep) => {
                    assert_eq!(
                        Some(&ep.qpn),
                        self.ends[peer].prepared.get(&epoch),
                        "end {end} connects move {epoch} to a QP the peer did not prepare for it"
                    );
                    assert!(
                        self.ends[end].prepared.contains_key(&epoch),
                        "connect before prepare"
                    );
                    self.ends[end].connected.insert(epoch, ep.qpn);
                }
                Action::Replay { peer_rx_consumed } => {
                    let me = &self.ends[end];
                    assert!(!me.flushed, "end {end} replays after the flush path");
                    assert!(
                        !me.replayed.contains_key(&epoch),
                        "end {end} replays move {epoch} twice"
                    );
                    assert_eq!(
                        Some(&peer_rx_consumed),
                        self.ends[peer].finals.get(&epoch),
                        "end {end} replays move {epoch} with a count that is not the peer's final one"
                    );
                    assert_eq!(
                        self.ends[peer].connected.get(&epoch),
                        me.prepared.get(&epoch),
                        "end {end} replays move {epoch} before the peer's QP is connected to its own"
                    );
                    assert!(me.connected.contains_key(&epoch), "replay before connect");
                    let me = &mut self.ends[end];
                    me.replayed.insert(epoch, true);
                    me.held = false;
                }
                Action::Flush => {
                    let me = &mut self.ends[end];
                    assert!(!me.flushed, "end {end} takes the flush path twice");
                    me.flushed = true;
                    me.held = false;
                }
            }
        }
    }

    fn call(&mut self, end: usize, f: impl FnOnce(&mut Session, RailSet, u64) -> Vec<Action>) {
        let before = epoch_of(self.ends[end].session.state(), 0);
        let usable = self.usable(end);
        let now = self.now;
        let mut session = self.ends[end].session;
        let actions = f(&mut session, usable, now);
        self.ends[end].session = session;
        let made = actions.len();
        self.run(end, before, &actions, made);
    }

    fn step(&mut self) {
        while let Some((&(t, s), &ev)) = self.events.iter().next() {
            if t > self.now {
                break;
            }
            self.events.remove(&(t, s));
            match ev {
                Event::Deliver { to, msg } => {
                    self.call(to, |s, u, now| collect(s.receive(msg, u, now)))
                }
                Event::Drained { end, epoch } => {
                    let rx = self.ends[end].rx;
                    if let State::Moving(m) = self.ends[end].session.state() {
                        if m.epoch == epoch {
                            self.ends[end].finals.entry(epoch).or_insert(rx);
                            self.call(end, |s, _, now| collect(s.drained(rx, now)));
                        }
                    }
                }
                Event::Prepared { end, epoch, qpn } => {
                    if let State::Moving(m) = self.ends[end].session.state() {
                        if m.epoch == epoch && m.endpoint.is_none() {
                            self.ends[end].prepared.insert(epoch, qpn);
                            let ep = Endpoint {
                                qpn,
                                psn: qpn.wrapping_mul(7) & 0xff_ffff,
                            };
                            self.call(end, |s, _, now| collect(s.prepared(ep, now)));
                        }
                    }
                }
                Event::Detect { end, rail } => {
                    self.ends[end].failed |= 1 << rail;
                    self.call(end, |s, u, now| collect(s.rail_failed(rail, u, now)));
                }
            }
        }
        for end in 0..2 {
            // Traffic flows while the connection runs: receives consumed.
            if matches!(self.ends[end].session.state(), State::Running { .. })
                && !self.ends[end].held
            {
                self.ends[end].rx += self.rng.range(0, 3);
            }
            // A running end whose peer gave up fails on its next WRs
            // (retries exhausted against a QP in ERR).
            let peer_gone = self.ends[1 - end].session.state() == State::Fallback;
            if let State::Running { rail, .. } = self.ends[end].session.state() {
                if peer_gone && !self.ends[end].doomed {
                    self.ends[end].doomed = true;
                    let t = self.now + 150 * MS;
                    self.at(t, Event::Detect { end, rail });
                }
            }
            self.call(end, |s, _, now| collect(s.tick(now)));
        }
    }
}

fn collect(actions: mrbond_policy::policy::tfo_session::Actions) -> Vec<Action> {
    let mut v: Vec<Action> = actions.iter().collect();
    // Keep the count of made actions visible to the caller's check.
    assert!(
        actions.len() <= MAX_ACTIONS,
        "a call made {} actions",
        actions.len()
    );
    v.truncate(MAX_ACTIONS);
    v
}

fn end(role: Role) -> End {
    let mut session = Session::new(role, CFG);
    session.capable(0);
    End {
        session,
        failed: 0,
        rx: 0,
        held: false,
        flushed: false,
        finals: BTreeMap::new(),
        prepared: BTreeMap::new(),
        connected: BTreeMap::new(),
        replayed: BTreeMap::new(),
        doomed: false,
    }
}

/// Runs the schedule to quiescence; the two ends' final states.
fn simulate(s: &Schedule) -> [State; 2] {
    let mut w = World {
        now: 0,
        seq: 0,
        events: BTreeMap::new(),
        ends: [end(Role::Active), end(Role::Passive)],
        rng: Rng(s.seed | 1),
        next_qpn: 0x100,
        loss: s.loss,
        dup: s.dup,
        heal: s.heal,
        all: (1 << s.rails) - 1,
    };
    // Some traffic before the failure.
    let t0 = 100 * MS;
    for e in 0..2 {
        w.at(t0 + s.detect[e], Event::Detect { end: e, rail: 0 });
        if let Some((rail, t)) = s.second {
            w.at(t0 + t + s.detect[1 - e] / 2, Event::Detect { end: e, rail });
        }
    }
    let until = t0 + s.heal + 6 * CFG.deadline_ns;
    while w.now < until {
        w.step();
        w.now += MS;
    }
    // Every failed rail is known at both ends by now.
    let failed = w.ends[0].failed | w.ends[1].failed;
    let states = [w.ends[0].session.state(), w.ends[1].session.state()];
    match states {
        [State::Running {
            rail: a, epoch: ea, ..
        }, State::Running {
            rail: b, epoch: eb, ..
        }] => {
            assert_eq!((a, ea), (b, eb), "the ends carry on apart");
            assert_eq!(
                failed & (1 << a),
                0,
                "the ends carry on over failed rail {a}"
            );
            assert!(ea >= 1, "rail 0 failed and no move was made");
            assert!(w.ends[0].replayed.contains_key(&ea) && w.ends[1].replayed.contains_key(&ea));
            assert!(!w.ends[0].held && !w.ends[1].held, "posts still held");
        }
        [State::Fallback, State::Fallback] => {
            assert!(w.ends[0].flushed && w.ends[1].flushed);
        }
        other => panic!("the ends disagree: {other:?}"),
    }
    states
}

fn schedule() -> impl Strategy<Value = Schedule> {
    (
        2u8..=3,
        0u64..=60,
        0u64..=30,
        0u64..=1500,
        (0u64..=600, 0u64..=600),
        prop::option::weighted(0.25, (1u8..=2, 0u64..=300)),
        any::<u64>(),
    )
        .prop_map(
            |(rails, loss, dup, heal, (da, dp), second, seed)| Schedule {
                rails,
                loss,
                dup,
                heal: heal * MS,
                detect: [da * MS, dp * MS],
                second: second.filter(|&(r, _)| r < rails).map(|(r, t)| (r, t * MS)),
                seed,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn both_ends_agree_and_replay_once(s in schedule()) {
        simulate(&s);
    }

    #[test]
    fn a_clean_channel_with_a_rail_to_go_to_always_moves(
        rails in 2u8..=3,
        da in 0u64..=600,
        dp in 0u64..=600,
        dup in 0u64..=30,
        seed in any::<u64>(),
    ) {
        let s = Schedule {
            rails,
            loss: 0,
            dup,
            heal: 2_000 * MS,
            detect: [da * MS, dp * MS],
            second: None,
            seed,
        };
        let states = simulate(&s);
        prop_assert!(
            matches!(states, [State::Running { rail, epoch: 1, .. }, _] if rail == 1),
            "{:?}",
            states
        );
    }
}

#[test]
fn no_rail_to_go_to_takes_the_flush_path_at_both_ends() {
    let mut a = Session::new(Role::Active, CFG);
    a.capable(0);
    let out: Vec<Action> = a.rail_failed(0, 0b01, 0).iter().collect();
    assert_eq!(out, [Action::Send(Msg::Abort { epoch: 0 }), Action::Flush]);
    assert_eq!(a.state(), State::Fallback);
    let mut p = Session::new(Role::Passive, CFG);
    p.capable(0);
    // The passive end asks; the active answers its request with the abort.
    let out: Vec<Action> = p.rail_failed(0, 0b11, 0).iter().collect();
    assert_eq!(
        out,
        [
            Action::Hold,
            Action::Drain,
            Action::Send(Msg::Request { epoch: 1 })
        ]
    );
    let out: Vec<Action> = a
        .receive(Msg::Request { epoch: 1 }, 0b01, MS)
        .iter()
        .collect();
    assert_eq!(out, [Action::Send(Msg::Abort { epoch: 1 })]);
    let out: Vec<Action> = p
        .receive(Msg::Abort { epoch: 1 }, 0b11, 2 * MS)
        .iter()
        .collect();
    assert_eq!(out, [Action::Send(Msg::Abort { epoch: 1 }), Action::Flush]);
}

#[test]
fn a_peer_without_the_capability_gets_the_flush_path() {
    let mut s = Session::new(Role::Active, CFG);
    let out: Vec<Action> = s.rail_failed(0, 0b11, 0).iter().collect();
    assert_eq!(out, [Action::Flush]);
    assert_eq!(s.state(), State::Fallback);
    // A capable peer's move meets an end that cannot move: it aborts it.
    let mut plain = Session::new(Role::Passive, CFG);
    let out: Vec<Action> = plain
        .receive(Msg::Request { epoch: 1 }, 0b11, 0)
        .iter()
        .collect();
    assert_eq!(out, [Action::Send(Msg::Abort { epoch: 1 })]);
    assert_eq!(plain.state(), State::Plain);
}

/// HELLOs between two ends whose QPs become ready to send at `ready_a`
/// and `ready_b`, each HELLO lost if `lost(k)` for the k-th sent, delivered
/// `delay` later: (capable a, capable b, HELLOs sent).
fn handshake(ready: [u64; 2], delay: u64, lost: impl Fn(usize) -> bool) -> (bool, bool, usize) {
    let mut ends = [Handshake::new(), Handshake::new()];
    // In flight: (arrival, to, heard flag).
    let mut wire: Vec<(u64, usize, bool)> = Vec::new();
    let mut sent = 0usize;
    let mut send = |wire: &mut Vec<(u64, usize, bool)>, now: u64, to: usize, heard: bool| {
        if !lost(sent) {
            wire.push((now + delay, to, heard));
        }
        sent += 1;
    };
    for now in 0..1000u64 {
        for e in 0..2 {
            if ready[e] == now {
                if let Some(heard) = ends[e].ready() {
                    send(&mut wire, now, 1 - e, heard);
                }
            }
        }
        let due: Vec<_> = wire.iter().copied().filter(|w| w.0 == now).collect();
        wire.retain(|w| w.0 != now);
        for (_, to, heard) in due {
            if let (Some(answer), _) = ends[to].hello(heard) {
                send(&mut wire, now, 1 - to, answer);
            }
        }
    }
    (ends[0].capable(), ends[1].capable(), sent)
}

proptest! {
    #[test]
    fn hellos_end_and_make_both_capable_unless_lost(
        ra in 0u64..100, rb in 0u64..100, delay in 1u64..50,
        lose in prop::collection::vec(any::<bool>(), 4),
    ) {
        let (a, b, sent) = handshake([ra, rb], delay, |_| false);
        prop_assert!(a && b, "no loss: both capable");
        prop_assert!(sent <= 4, "{} HELLOs", sent);
        // With losses the exchange still ends.
        let (_, _, sent) = handshake([ra, rb], delay, |k| lose.get(k).copied().unwrap_or(false));
        prop_assert!(sent <= 4, "{} HELLOs", sent);
    }
}

#[test]
fn a_lost_first_hello_costs_one_more() {
    // A's HELLO is lost; B's, sent later, says "not heard": A answers
    // "heard", and B, hearing A for the first time, answers too.
    let (a, b, sent) = handshake([0, 10], 5, |k| k == 0);
    assert!(a && b);
    assert_eq!(sent, 4);
}

#[test]
fn a_move_past_its_deadline_is_given_up() {
    let mut s = Session::new(Role::Active, CFG);
    s.capable(0);
    let out: Vec<Action> = s.rail_failed(0, 0b11, 0).iter().collect();
    assert_eq!(
        out,
        [Action::Hold, Action::Drain, Action::Prepare { rail: 1 }]
    );
    assert!(s.tick(CFG.deadline_ns - 1).is_empty());
    let out: Vec<Action> = s.tick(CFG.deadline_ns).iter().collect();
    assert_eq!(out, [Action::Send(Msg::Abort { epoch: 1 }), Action::Flush]);
}

#[test]
fn the_two_ends_of_a_connection_take_opposite_roles() {
    // Two bonds, and a loopback connection (one GUID).
    for (a, b) in [
        ((1u64, 9u32), (2u64, 3u32)),
        ((7, 12), (7, 40)),
        ((u64::MAX, 0), (0, 1)),
    ] {
        let (ra, rb) = (Role::of(a, b), Role::of(b, a));
        assert!(ra.is_some() && rb.is_some() && ra != rb, "{a:?} and {b:?}");
    }
    assert_eq!(
        Role::of((1, 100), (2, 1)),
        Some(Role::Active),
        "the GUID first"
    );
    assert_eq!(Role::of((5, 1), (5, 2)), Some(Role::Active), "then the QPN");
    assert_eq!(Role::of((5, 1), (5, 1)), None, "no end leads a tie");
}
