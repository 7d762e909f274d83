// SPDX-License-Identifier: GPL-2.0

//! Transparent failover (issue 17): one end's state of a connection's move
//! to another rail, and the messages the two ends exchange for it.
//!
//! The connection's *active* end ([`Role::of`]: the lower node GUID, then
//! bond QPN) decides; the *passive* end follows. A move of epoch `e` (the
//! connection's `e`-th) goes:
//!
//! 1. Either end notices the rail failed (its member QP failed, the member
//!    left the bond, the probe found the rail down) or the peer's message
//!    tells it. It holds the ULP's new posts, moves the old member QP to
//!    ERR and drains it: from then on its count of consumed receives is
//!    final. A passive end that noticed first asks for the move
//!    ([`Msg::Request`]).
//! 2. The active end picks the new rail among those usable at both ends,
//!    readies a member QP on it (its receives posted again) and, once
//!    drained, sends [`Msg::Offer`]: its count, the new QP and its first
//!    PSN, the rail.
//! 3. The passive end readies its QP on that rail, connects it to the
//!    active's (RTR, RTS: nothing is sent yet) and, once drained, answers
//!    [`Msg::Answer`] with the same of its own.
//! 4. The active end connects its QP, replays (its QP's peer is ready to
//!    receive) and sends [`Msg::Go`]: the move is done at its end.
//! 5. The passive end replays on Go: the active's QP was ready before Go.
//!
//! Each end replays once, with the peer's final count
//! ([`crate::policy::resume::plan_resume`]), and only once the peer's new
//! QP can receive, so nothing it sends is lost to a QP not yet in RTR. MADs
//! may be lost, duplicated or reordered: the last message of a stage is
//! sent again every `retransmit_ns` until the next stage's arrives; a
//! duplicate of the peer's is answered with the same message; a message of
//! another epoch changes nothing. A move not done within `deadline_ns`, a
//! rail that fails during its move, no rail usable at both ends, a failed
//! replay or the peer's [`Msg::Abort`] end it on today's flush path, for
//! good ([`State::Fallback`]); the end that gives up tells the peer.
//!
//! Everything here is a decision: the caller does the [`Action`]s, in
//! order, and feeds back what became of them. Times are the caller's
//! monotonic nanoseconds.

/// Which end of the connection this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Picks the rail, starts the exchange.
    Active,
    /// Follows.
    Passive,
}

impl Role {
    /// The role of the end that is `ours` on a connection to `theirs`,
    /// each a (node GUID, bond QPN) pair from the HELLOs: the lower pair
    /// is active (a loopback connection's two ends share the GUID). Both
    /// ends reckon the same, whoever sent the CM REQ, or without one (a
    /// ULP that connects its QPs itself). `None` for equal pairs (two
    /// bonds with one GUID): neither end could lead, so the connection
    /// does not move.
    pub fn of(ours: (u64, u32), theirs: (u64, u32)) -> Option<Self> {
        match ours.cmp(&theirs) {
            core::cmp::Ordering::Less => Some(Role::Active),
            core::cmp::Ordering::Greater => Some(Role::Passive),
            core::cmp::Ordering::Equal => None,
        }
    }
}

/// A move's timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionConfig {
    /// Between two sends of a stage's message while its answer is due.
    pub retransmit_ns: u64,
    /// The longest a move may take before the flush path.
    pub deadline_ns: u64,
}

impl SessionConfig {
    /// A retransmission every 20 ms (a MAD's round trip is well under it
    /// even under TCG); the flush path after 1 s (the bound on a
    /// move without a usable rail).
    pub const DEFAULT: Self = Self {
        retransmit_ns: 20_000_000,
        deadline_ns: 1_000_000_000,
    };
}

/// A ready member QP: the peer connects its own to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Endpoint {
    /// The member QP's number (24 bits).
    pub qpn: u32,
    /// Its first PSN (24 bits).
    pub psn: u32,
}

/// One end's half of a move: its count of consumed receives, once final,
/// and its ready QP on the new rail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Half {
    /// Receives consumed on the connection, every rail's.
    pub rx_consumed: u64,
    /// The member QP on the new rail.
    pub endpoint: Endpoint,
    /// The new rail.
    pub rail: u8,
}

/// A message of a move (the channel's RESUME family).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Msg {
    /// Passive to active: this end found the rail failed; move.
    Request {
        /// The move.
        epoch: u16,
    },
    /// Active to passive: the active's half; the rail is the move's.
    Offer {
        /// The move.
        epoch: u16,
        /// The active end's half.
        half: Half,
    },
    /// Passive to active: the passive's half, its QP connected already.
    Answer {
        /// The move.
        epoch: u16,
        /// The passive end's half.
        half: Half,
    },
    /// Active to passive: connected and replayed; replay.
    Go {
        /// The move.
        epoch: u16,
    },
    /// Either: this end took the flush path; so must the peer.
    Abort {
        /// The move given up (or the last one done).
        epoch: u16,
    },
}

impl Msg {
    /// The move the message is about.
    pub fn epoch(&self) -> u16 {
        match *self {
            Msg::Request { epoch }
            | Msg::Offer { epoch, .. }
            | Msg::Answer { epoch, .. }
            | Msg::Go { epoch }
            | Msg::Abort { epoch } => epoch,
        }
    }
}

/// What the caller must do, in the order given.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// Queue the ULP's new posts instead of posting them.
    Hold,
    /// Move the old member QP to ERR and drain its CQ; call
    /// [`Session::drained`] once every WR it held has completed.
    Drain,
    /// Ready a member QP on `rail` (taken to INIT, the receive ring posted
    /// again); call [`Session::prepared`] with it.
    Prepare {
        /// The new rail.
        rail: u8,
    },
    /// Send the message to the peer.
    Send(Msg),
    /// Take the new member QP to RTR and RTS towards the peer's.
    Connect(Endpoint),
    /// Resume the send ring with the peer's count of consumed receives,
    /// then post the held posts; the connection goes on on the new rail.
    /// If it fails, skip the actions after it and call
    /// [`Session::replay_failed`].
    Replay {
        /// The peer's final count.
        peer_rx_consumed: u64,
    },
    /// Today's flush path: every unresolved and held WR completes with a
    /// flush error, the ULP sees the QP fail.
    Flush,
}

/// The most actions one call returns.
pub const MAX_ACTIONS: usize = 4;

/// The actions of one call, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Actions {
    list: [Option<Action>; MAX_ACTIONS],
    len: usize,
}

impl Actions {
    const NONE: Self = Self {
        list: [None; MAX_ACTIONS],
        len: 0,
    };

    fn push(&mut self, action: Action) {
        if let Some(slot) = self.list.get_mut(self.len) {
            *slot = Some(action);
        }
        // Counted even past the room, so that the tests see an overflow.
        self.len = self.len.saturating_add(1);
    }

    /// The actions, in order.
    pub fn iter(&self) -> impl Iterator<Item = Action> + '_ {
        self.list.iter().flatten().copied()
    }

    /// How many were made: more than [`MAX_ACTIONS`] would be a bug (the
    /// simulator checks every call).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Where a move stands at one end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Move {
    /// The connection's how-manieth move.
    pub epoch: u16,
    /// The failed rail.
    pub from: u8,
    /// The new rail: the active end's pick; the passive end's from the
    /// offer.
    pub to: Option<u8>,
    /// This end's final count, once drained.
    pub rx_consumed: Option<u64>,
    /// This end's QP on `to`, once ready.
    pub endpoint: Option<Endpoint>,
    /// The peer's half (the passive end's: from the offer).
    pub peer: Option<Half>,
    /// The stage message this end sent last, sent again until answered.
    pub sent: Option<Msg>,
    /// When the move started.
    pub started_ns: u64,
    /// When `sent` last went out.
    pub sent_ns: u64,
}

/// Whether both ends of a connection can move it. Each end sends HELLO
/// once its QP is ready to send, saying whether it has heard the peer's; an
/// end is capable once the peer says it heard ours. Once ours is out, a
/// HELLO is answered with one saying "heard" when it says "not heard"
/// (ours was lost, or crossed it) or is the first this end hears (the peer
/// cannot know we heard it). Each end thus sends at most two HELLOs per
/// connection unless MADs are duplicated, and the exchange always ends.
/// An end whose handshake never finishes stays [`State::Plain`] and answers
/// any move with [`Msg::Abort`], so a capable peer falls back at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Handshake {
    sent: bool,
    heard: bool,
    capable: bool,
}

impl Handshake {
    /// Nothing sent or heard.
    pub const fn new() -> Self {
        Self {
            sent: false,
            heard: false,
            capable: false,
        }
    }

    /// The QP is ready to send: this end's HELLO, once: its "heard" flag.
    pub fn ready(&mut self) -> Option<bool> {
        if self.sent {
            return None;
        }
        self.sent = true;
        Some(self.heard)
    }

    /// The peer's HELLO, saying whether it heard ours. Returns the HELLO
    /// to answer with, if any (its "heard" flag), and whether this end
    /// became capable with it.
    pub fn hello(&mut self, peer_heard: bool) -> (Option<bool>, bool) {
        let first = !self.heard;
        self.heard = true;
        let answer = (self.sent && (!peer_heard || first)).then_some(true);
        let now = self.sent && peer_heard && !self.capable;
        self.capable |= now;
        (answer, now)
    }

    /// Whether the peer heard this end's HELLO (and so can move).
    pub fn capable(&self) -> bool {
        self.capable
    }
}

/// One end's state of a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// The peer has not said it can move (no HELLO): a failure takes the
    /// flush path.
    Plain,
    /// Carrying on `rail`; `epoch` moves done.
    Running {
        /// The connection's rail.
        rail: u8,
        /// Moves done.
        epoch: u16,
        /// The last message of the last move, for a peer that missed it
        /// (the active end's Go).
        last: Option<Msg>,
    },
    /// A move in progress.
    Moving(Move),
    /// On the flush path, for good.
    Fallback,
}

/// One end of a connection, as far as moving it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Session {
    role: Role,
    config: SessionConfig,
    state: State,
}

/// The rails usable at both ends, as a bit per rail index.
pub type RailSet = u32;

/// The lowest rail of `usable` other than `failed`.
fn pick_rail(usable: RailSet, failed: u8) -> Option<u8> {
    let others = usable & !1u32.checked_shl(u32::from(failed)).unwrap_or(0);
    (others != 0).then(|| others.trailing_zeros() as u8)
}

impl Session {
    /// A connection that cannot move yet.
    pub const fn new(role: Role, config: SessionConfig) -> Self {
        Self {
            role,
            config,
            state: State::Plain,
        }
    }

    /// Where it stands.
    pub fn state(&self) -> State {
        self.state
    }

    /// This end's role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Both HELLOs are in: the connection, on `rail`, can move. A no-op
    /// unless [`State::Plain`].
    pub fn capable(&mut self, rail: u8) {
        if self.state == State::Plain {
            self.state = State::Running {
                rail,
                epoch: 0,
                last: None,
            };
        }
    }

    /// Gives up: the flush path, and the peer told if a move was on.
    fn fallback(&mut self, out: &mut Actions) {
        let epoch = match self.state {
            State::Moving(m) => Some(m.epoch),
            State::Running { epoch, .. } => Some(epoch),
            State::Plain | State::Fallback => None,
        };
        if self.state != State::Fallback {
            if let Some(epoch) = epoch {
                out.push(Action::Send(Msg::Abort { epoch }));
            }
            out.push(Action::Flush);
        }
        self.state = State::Fallback;
    }

    /// Move `epoch` away from `from` begins here: the ULP's posts are
    /// held and the old member QP drained.
    fn begin(&mut self, epoch: u16, from: u8, now: u64, out: &mut Actions) -> Move {
        out.push(Action::Hold);
        out.push(Action::Drain);
        Move {
            epoch,
            from,
            to: None,
            rx_consumed: None,
            endpoint: None,
            peer: None,
            sent: None,
            started_ns: now,
            sent_ns: now,
        }
    }

    /// This end starts move `epoch` away from `from`: the active end picks
    /// the new rail and readies its QP, the passive end asks for the move.
    fn start(&mut self, epoch: u16, from: u8, usable: RailSet, now: u64, out: &mut Actions) {
        let to = pick_rail(usable, from);
        if self.role == Role::Active && to.is_none() {
            return self.fallback(out);
        }
        let mut m = self.begin(epoch, from, now, out);
        match self.role {
            Role::Active => {
                m.to = to;
                if let Some(rail) = to {
                    out.push(Action::Prepare { rail });
                }
            }
            Role::Passive => {
                let request = Msg::Request { epoch };
                m.sent = Some(request);
                out.push(Action::Send(request));
            }
        }
        self.state = State::Moving(m);
    }

    /// This end found `rail` failed. `usable`: the rails usable at both
    /// ends now.
    pub fn rail_failed(&mut self, rail: u8, usable: RailSet, now: u64) -> Actions {
        let mut out = Actions::NONE;
        match self.state {
            State::Plain => self.fallback(&mut out),
            State::Running { rail: r, epoch, .. } if r == rail => match epoch.checked_add(1) {
                Some(next) => self.start(next, rail, usable, now, &mut out),
                None => self.fallback(&mut out),
            },
            // The new rail failed before the move was done.
            State::Moving(m) if m.to == Some(rail) => self.fallback(&mut out),
            State::Running { .. } | State::Moving(_) | State::Fallback => {}
        }
        out
    }

    /// The old member QP is drained: `rx_consumed` is this end's final
    /// count.
    pub fn drained(&mut self, rx_consumed: u64, now: u64) -> Actions {
        let mut out = Actions::NONE;
        if let State::Moving(mut m) = self.state {
            if m.rx_consumed.is_none() {
                m.rx_consumed = Some(rx_consumed);
                self.state = State::Moving(m);
                self.advance(now, &mut out);
            }
        }
        out
    }

    /// The member QP on the new rail is ready.
    pub fn prepared(&mut self, endpoint: Endpoint, now: u64) -> Actions {
        let mut out = Actions::NONE;
        if let State::Moving(mut m) = self.state {
            if m.endpoint.is_none() && m.to.is_some() {
                m.endpoint = Some(endpoint);
                self.state = State::Moving(m);
                self.advance(now, &mut out);
            }
        }
        out
    }

    /// Sends this end's half once it is complete: the active end's offer;
    /// the passive end's answer, its QP connected first.
    fn advance(&mut self, now: u64, out: &mut Actions) {
        let State::Moving(mut m) = self.state else {
            return;
        };
        let (Some(rx_consumed), Some(endpoint), Some(rail)) = (m.rx_consumed, m.endpoint, m.to)
        else {
            return;
        };
        let half = Half {
            rx_consumed,
            endpoint,
            rail,
        };
        let msg = match (self.role, m.peer, m.sent) {
            (Role::Active, _, None) => Msg::Offer {
                epoch: m.epoch,
                half,
            },
            (Role::Passive, Some(peer), None | Some(Msg::Request { .. })) => {
                out.push(Action::Connect(peer.endpoint));
                Msg::Answer {
                    epoch: m.epoch,
                    half,
                }
            }
            _ => return,
        };
        m.sent = Some(msg);
        m.sent_ns = now;
        self.state = State::Moving(m);
        out.push(Action::Send(msg));
    }

    /// A message from the peer. `usable`: the rails usable at both ends
    /// now (a message may start a move).
    pub fn receive(&mut self, msg: Msg, usable: RailSet, now: u64) -> Actions {
        let mut out = Actions::NONE;
        match (self.role, self.state, msg) {
            (_, State::Plain | State::Fallback, Msg::Abort { .. }) => {}
            // Cannot move (the handshake did not finish here), or gave up
            // (the first Abort may be lost): the peer must give up too.
            (_, State::Plain | State::Fallback, _) => {
                out.push(Action::Send(Msg::Abort { epoch: msg.epoch() }))
            }
            // The peer gave up on this move, or on the one just done.
            (_, State::Moving(Move { epoch, .. }), Msg::Abort { epoch: e })
            | (_, State::Running { epoch, .. }, Msg::Abort { epoch: e })
                if e == epoch =>
            {
                self.fallback(&mut out)
            }
            (_, _, Msg::Abort { .. }) => {}
            // A message of the next move starts it here.
            (Role::Active, State::Running { rail, epoch, .. }, Msg::Request { epoch: e })
                if Some(e) == epoch.checked_add(1) =>
            {
                self.start(e, rail, usable, now, &mut out)
            }
            (Role::Passive, State::Running { rail, epoch, .. }, Msg::Offer { epoch: e, half })
                if Some(e) == epoch.checked_add(1) =>
            {
                let m = self.begin(e, rail, now, &mut out);
                self.passive_offered(m, half, now, &mut out);
            }
            // The passive end missed the Go: again.
            (Role::Active, State::Running { epoch, last, .. }, Msg::Answer { epoch: e, .. })
                if e == epoch =>
            {
                if let Some(last) = last {
                    out.push(Action::Send(last));
                }
            }
            (_, State::Running { .. }, _) => {}
            (_, State::Moving(m), _) if msg.epoch() != m.epoch => {}
            (Role::Active, State::Moving(m), Msg::Answer { half, .. }) => {
                self.active_answered(m, half, &mut out)
            }
            (Role::Passive, State::Moving(m), Msg::Offer { half, .. }) => {
                self.passive_offered(m, half, now, &mut out)
            }
            (Role::Passive, State::Moving(m), Msg::Go { .. }) => {
                if let Some(peer) = m
                    .peer
                    .filter(|_| matches!(m.sent, Some(Msg::Answer { .. })))
                {
                    out.push(Action::Replay {
                        peer_rx_consumed: peer.rx_consumed,
                    });
                    self.state = State::Running {
                        rail: peer.rail,
                        epoch: m.epoch,
                        last: None,
                    };
                }
            }
            // Request to a moving active end, Go to an active end, and the
            // like: nothing new.
            (_, State::Moving(_), _) => {}
        }
        out
    }

    fn passive_offered(&mut self, mut m: Move, half: Half, now: u64, out: &mut Actions) {
        match m.peer {
            None => {
                m.peer = Some(half);
                m.to = Some(half.rail);
                self.state = State::Moving(m);
                out.push(Action::Prepare { rail: half.rail });
                self.advance(now, out);
            }
            // The active end missed the answer: again.
            Some(_) => {
                if let Some(answer @ Msg::Answer { .. }) = m.sent {
                    out.push(Action::Send(answer));
                }
            }
        }
    }

    fn active_answered(&mut self, m: Move, half: Half, out: &mut Actions) {
        // An answer before the offer went out, or for another rail, is
        // none of this move's.
        if !matches!(m.sent, Some(Msg::Offer { .. })) || Some(half.rail) != m.to {
            return;
        }
        let go = Msg::Go { epoch: m.epoch };
        out.push(Action::Connect(half.endpoint));
        out.push(Action::Replay {
            peer_rx_consumed: half.rx_consumed,
        });
        out.push(Action::Send(go));
        self.state = State::Running {
            rail: half.rail,
            epoch: m.epoch,
            last: Some(go),
        };
    }

    /// The caller's replay failed (the peer's count is out of range, an
    /// atomic was outstanding): the flush path.
    pub fn replay_failed(&mut self) -> Actions {
        let mut out = Actions::NONE;
        self.fallback(&mut out);
        out
    }

    /// Time passed: sends a stage's message again, or gives the move up
    /// past its deadline.
    pub fn tick(&mut self, now: u64) -> Actions {
        let mut out = Actions::NONE;
        let State::Moving(mut m) = self.state else {
            return out;
        };
        if now.saturating_sub(m.started_ns) >= self.config.deadline_ns {
            self.fallback(&mut out);
        } else if let Some(msg) = m.sent {
            if now.saturating_sub(m.sent_ns) >= self.config.retransmit_ns {
                m.sent_ns = now;
                self.state = State::Moving(m);
                out.push(Action::Send(msg));
            }
        }
        out
    }
}
