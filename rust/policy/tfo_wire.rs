// SPDX-License-Identifier: GPL-2.0

//! The control channel of transparent failover (issue 17): the vendor MADs
//! two bonds exchange on their members' GSI, byte by byte.
//!
//! A vendor MAD of the OUI-carrying range (IBTA vol. 1, 13.4.9: classes
//! 0x30-0x4f), unsegmented: the common header, an RMPP header left zero,
//! a reserved byte, the OUI, then 216 bytes of data. Four messages:
//! - [`Hello`]: at connect, each end says it can resume the connection's
//!   QPs and where it is on each rail ([`RailAddrs`]: a move's messages
//!   and its new QP go there); a peer that never says so gets the flush
//!   path;
//! - [`Heartbeat`]: on every rail pair, a sequence number and the last one
//!   heard from the other end, which tells which direction lost packets;
//! - [`Resume`]: a QP moves to another rail: the receives the sender
//!   consumed (`policy::resume` turns the peer's into fates), its new member
//!   QP, and the rkeys the peer must use from now on, in as many MADs as
//!   they need (`keys_left` says how many follow: the update is whole when
//!   it reaches 0). The active end's is the move's offer, the passive
//!   end's its answer ([`crate::policy::tfo_session`]);
//! - [`MoveControl`]: the rest of a move's exchange: the passive end's
//!   request for one, the active end's go, either end's abort.
//!
//! Fields are big-endian. Decoding checks everything it reads and returns
//! `None` for anything else; nothing here can panic.

use super::tfo_session::{Endpoint, Half, Msg};

/// A MAD (`IB_MGMT_MAD_SIZE`).
pub const MAD_SIZE: usize = 256;
/// Our vendor class (`IB_MGMT_CLASS_VENDOR_RANGE2_START` + 8).
pub const CLASS_TFO: u8 = 0x38;
/// The OUI our class is scoped by: the Linux RDMA stack's own
/// (`IB_OPENIB_OUI`). A deployment beyond the testbed needs one assigned.
pub const OUI: u32 = 0x00_1405;
/// This format's version (the class version of the header).
pub const VERSION: u8 = 1;
/// The most rkey pairs one RESUME carries.
pub const KEYS_PER_MAD: usize = (MAD_SIZE - DATA - RESUME_KEYS) / 8;

const BASE_VERSION: u8 = 1;
const METHOD_SEND: u8 = 0x03;
const ATTR_HELLO: u16 = 0x0001;
const ATTR_HEARTBEAT: u16 = 0x0002;
const ATTR_RESUME: u16 = 0x0003;
const ATTR_MOVE: u16 = 0x0004;
/// Offsets: the common header's fields (base version, class, class
/// version and method are its first four bytes), the OUI, the data.
const TID: usize = 8;
const ATTR_ID: usize = 16;
const OUI_AT: usize = 37;
const DATA: usize = 40;
/// A RESUME's rkey pairs, from the data's start.
const RESUME_KEYS: usize = 32;
/// PSNs and QPNs are 24 bits.
const PSN_MASK: u32 = 0x00ff_ffff;
/// A HELLO's rail mask and its GIDs, from the data's start.
const HELLO_RAIL_MASK: usize = 20;
const HELLO_GIDS: usize = 24;
/// The most rails a HELLO names: as many GIDs as fill its data.
pub const HELLO_RAILS: usize = (MAD_SIZE - DATA - HELLO_GIDS) / 16;

/// One end's GID on each of its rails, as its HELLO names them: the rails
/// a move can take the connection to. Rails are indexed as the bond's
/// member slots, the same at both ends (rail mode); a HELLO names at most
/// [`HELLO_RAILS`] of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RailAddrs {
    /// Bit `r`: rail `r` is named.
    mask: u16,
    /// The GIDs of the named rails, lowest rail first.
    gids: [[u8; 16]; HELLO_RAILS],
}

impl Default for RailAddrs {
    fn default() -> Self {
        Self::NONE
    }
}

impl RailAddrs {
    /// No rail.
    pub const NONE: Self = Self {
        mask: 0,
        gids: [[0; 16]; HELLO_RAILS],
    };

    /// Which rails are named, a bit each.
    pub fn mask(&self) -> u16 {
        self.mask
    }

    /// The place of rail `rail`'s GID in `gids`: the named rails below it.
    fn place(mask: u16, rail: u8) -> Option<usize> {
        let below = 1u16.checked_shl(u32::from(rail))?.wrapping_sub(1);
        usize::try_from((mask & below).count_ones()).ok()
    }

    /// Names `gid` on `rail`, in increasing rail order. False, changing
    /// nothing, for a rail not above the last one named, past the 16th, or
    /// once [`HELLO_RAILS`] are named.
    pub fn push(&mut self, rail: u8, gid: [u8; 16]) -> bool {
        let Some(bit) = 1u16.checked_shl(u32::from(rail)) else {
            return false;
        };
        let Some(slot) = Self::place(self.mask, rail).and_then(|i| self.gids.get_mut(i)) else {
            return false;
        };
        if self.mask >= bit {
            return false;
        }
        *slot = gid;
        self.mask |= bit;
        true
    }

    /// The GID named on `rail`, if any.
    pub fn get(&self, rail: u8) -> Option<[u8; 16]> {
        let bit = 1u16.checked_shl(u32::from(rail))?;
        if self.mask & bit == 0 {
            return None;
        }
        self.gids.get(Self::place(self.mask, rail)?).copied()
    }

    /// The rails named, with their GIDs, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = (u8, [u8; 16])> + '_ {
        (0u8..16).filter_map(|r| self.get(r).map(|g| (r, g)))
    }
}

/// The connection a message is about: both ends' bond QPNs, the sender's
/// first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Connection {
    /// The sender's bond QPN.
    pub local_qpn: u32,
    /// The receiver's bond QPN.
    pub remote_qpn: u32,
}

/// HELLO: the sender can resume this connection's QPs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hello {
    /// The connection.
    pub conn: Connection,
    /// The sender bond's node GUID.
    pub node_guid: u64,
    /// How often the sender sends heartbeats on each rail, in ms.
    pub heartbeat_ms: u16,
    /// The sender has heard the receiver's HELLO
    /// ([`crate::policy::tfo_session::Handshake`]).
    pub heard: bool,
    /// The sender's GID on each of its rails.
    pub rails: RailAddrs,
}

/// HEARTBEAT on one rail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Heartbeat {
    /// The rail (its index, the same at both ends).
    pub rail: u8,
    /// The sender's sequence number.
    pub seq: u32,
    /// The last sequence number the sender heard on this rail.
    pub echo: u32,
}

/// Which end's half of a move a RESUME carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Stage {
    /// The active end's: the move's offer.
    Offer,
    /// The passive end's: its answer.
    Answer,
}

/// RESUME: one batch of a QP's move to another rail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Resume {
    /// The connection.
    pub conn: Connection,
    /// The move (the connection's how-manieth).
    pub epoch: u16,
    /// Offer or answer.
    pub stage: Stage,
    /// Receives the sender consumed on this connection, over every rail.
    pub rx_consumed: u64,
    /// The sender's member QP on the new rail.
    pub member_qpn: u32,
    /// Its first PSN (24 bits).
    pub psn: u32,
    /// The new rail.
    pub rail: u8,
    /// Key pairs still to come in later RESUMEs of this move: 0 in the
    /// last.
    pub keys_left: u16,
    /// How many of `keys` are used.
    pub nkeys: u8,
    /// (bond rkey, member rkey on the new rail) pairs.
    pub keys: [(u32, u32); KEYS_PER_MAD],
}

/// What a [`MoveControl`] says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Control {
    /// Passive to active: move.
    Request,
    /// Active to passive: connected and replayed; replay.
    Go,
    /// Either: gave up, on the flush path.
    Abort,
}

/// A move's request, go or abort.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MoveControl {
    /// The connection.
    pub conn: Connection,
    /// The move.
    pub epoch: u16,
    /// What it says.
    pub control: Control,
}

/// A message of the channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Message {
    /// See [`Hello`].
    Hello(Hello),
    /// See [`Heartbeat`].
    Heartbeat(Heartbeat),
    /// See [`Resume`].
    Resume(Resume),
    /// See [`MoveControl`].
    Move(MoveControl),
}

fn put(mad: &mut [u8; MAD_SIZE], at: usize, bytes: &[u8]) {
    if let Some(dst) = at
        .checked_add(bytes.len())
        .and_then(|end| mad.get_mut(at..end))
    {
        dst.copy_from_slice(bytes);
    }
}

fn get<const N: usize>(mad: &[u8; MAD_SIZE], at: usize) -> Option<[u8; N]> {
    mad.get(at..at.checked_add(N)?)?.try_into().ok()
}

fn data(field: usize) -> usize {
    DATA.saturating_add(field)
}

/// `msg` as a MAD with transaction ID `tid`.
pub fn encode(msg: &Message, tid: u64, mad: &mut [u8; MAD_SIZE]) {
    *mad = [0; MAD_SIZE];
    let attr = match msg {
        Message::Hello(_) => ATTR_HELLO,
        Message::Heartbeat(_) => ATTR_HEARTBEAT,
        Message::Resume(_) => ATTR_RESUME,
        Message::Move(_) => ATTR_MOVE,
    };
    put(mad, 0, &[BASE_VERSION, CLASS_TFO, VERSION, METHOD_SEND]);
    put(mad, TID, &tid.to_be_bytes());
    put(mad, ATTR_ID, &attr.to_be_bytes());
    put(mad, OUI_AT, &OUI.to_be_bytes()[1..]);
    match msg {
        Message::Hello(h) => {
            put(mad, data(0), &h.conn.local_qpn.to_be_bytes());
            put(mad, data(4), &h.conn.remote_qpn.to_be_bytes());
            put(mad, data(8), &h.node_guid.to_be_bytes());
            put(mad, data(16), &h.heartbeat_ms.to_be_bytes());
            put(mad, data(18), &[u8::from(h.heard)]);
            put(mad, data(HELLO_RAIL_MASK), &h.rails.mask.to_be_bytes());
            for (i, gid) in h.rails.gids.iter().enumerate() {
                put(
                    mad,
                    data(HELLO_GIDS.saturating_add(i.saturating_mul(16))),
                    gid,
                );
            }
        }
        Message::Heartbeat(b) => {
            put(mad, data(0), &[b.rail]);
            put(mad, data(4), &b.seq.to_be_bytes());
            put(mad, data(8), &b.echo.to_be_bytes());
        }
        Message::Resume(r) => {
            put(mad, data(0), &r.conn.local_qpn.to_be_bytes());
            put(mad, data(4), &r.conn.remote_qpn.to_be_bytes());
            put(mad, data(8), &r.rx_consumed.to_be_bytes());
            put(mad, data(16), &r.member_qpn.to_be_bytes());
            put(mad, data(20), &(r.psn & PSN_MASK).to_be_bytes());
            let used = usize::from(r.nkeys).min(KEYS_PER_MAD);
            put(mad, data(24), &[r.rail, u8::try_from(used).unwrap_or(0)]);
            put(mad, data(26), &r.keys_left.to_be_bytes());
            put(mad, data(28), &r.epoch.to_be_bytes());
            put(mad, data(30), &[stage_byte(r.stage)]);
            for (i, (bond, member)) in r.keys.iter().take(used).enumerate() {
                let at = data(RESUME_KEYS.saturating_add(i.saturating_mul(8)));
                put(mad, at, &bond.to_be_bytes());
                put(mad, at.saturating_add(4), &member.to_be_bytes());
            }
        }
        Message::Move(m) => {
            put(mad, data(0), &m.conn.local_qpn.to_be_bytes());
            put(mad, data(4), &m.conn.remote_qpn.to_be_bytes());
            put(mad, data(8), &m.epoch.to_be_bytes());
            put(mad, data(10), &[control_byte(m.control)]);
        }
    }
}

fn stage_byte(stage: Stage) -> u8 {
    match stage {
        Stage::Offer => 1,
        Stage::Answer => 2,
    }
}

fn control_byte(control: Control) -> u8 {
    match control {
        Control::Request => 1,
        Control::Go => 2,
        Control::Abort => 3,
    }
}

fn u32_at(mad: &[u8; MAD_SIZE], field: usize) -> Option<u32> {
    get(mad, data(field)).map(u32::from_be_bytes)
}

fn connection(mad: &[u8; MAD_SIZE]) -> Option<Connection> {
    Some(Connection {
        local_qpn: u32_at(mad, 0)?,
        remote_qpn: u32_at(mad, 4)?,
    })
}

/// The message a MAD of our class carries and its transaction ID; `None`
/// for a MAD that is not one (another class, OUI, version or method, an
/// unknown attribute, a field out of range).
pub fn decode(mad: &[u8; MAD_SIZE]) -> Option<(Message, u64)> {
    let [base, class, version, method] = get::<4>(mad, 0)?;
    if base != BASE_VERSION || class != CLASS_TFO || version != VERSION || method != METHOD_SEND {
        return None;
    }
    let [o0, o1, o2] = get::<3>(mad, OUI_AT)?;
    if u32::from_be_bytes([0, o0, o1, o2]) != OUI {
        return None;
    }
    let tid = u64::from_be_bytes(get(mad, TID)?);
    let msg = match u16::from_be_bytes(get(mad, ATTR_ID)?) {
        ATTR_HELLO => {
            let mask = u16::from_be_bytes(get(mad, data(HELLO_RAIL_MASK))?);
            if usize::try_from(mask.count_ones()).ok()? > HELLO_RAILS {
                return None;
            }
            // Only the named rails' GIDs are read: the rest stay zero.
            let named = usize::try_from(mask.count_ones()).ok()?;
            let mut gids = [[0; 16]; HELLO_RAILS];
            for (i, gid) in gids.iter_mut().take(named).enumerate() {
                *gid = get(mad, data(HELLO_GIDS.checked_add(i.checked_mul(16)?)?))?;
            }
            Message::Hello(Hello {
                conn: connection(mad)?,
                node_guid: u64::from_be_bytes(get(mad, data(8))?),
                heartbeat_ms: u16::from_be_bytes(get(mad, data(16))?),
                heard: match get::<1>(mad, data(18))? {
                    [0] => false,
                    [1] => true,
                    _ => return None,
                },
                rails: RailAddrs { mask, gids },
            })
        }
        ATTR_HEARTBEAT => Message::Heartbeat(Heartbeat {
            rail: get::<1>(mad, data(0))?[0],
            seq: u32_at(mad, 4)?,
            echo: u32_at(mad, 8)?,
        }),
        ATTR_RESUME => {
            let psn = u32_at(mad, 20)?;
            let [rail, nkeys] = get::<2>(mad, data(24))?;
            let member_qpn = u32_at(mad, 16)?;
            // QPNs and PSNs are 24 bits.
            if psn & !PSN_MASK != 0
                || member_qpn & !PSN_MASK != 0
                || usize::from(nkeys) > KEYS_PER_MAD
            {
                return None;
            }
            let mut keys = [(0, 0); KEYS_PER_MAD];
            for (i, key) in keys.iter_mut().take(usize::from(nkeys)).enumerate() {
                let field = RESUME_KEYS.checked_add(i.checked_mul(8)?)?;
                *key = (u32_at(mad, field)?, u32_at(mad, field.checked_add(4)?)?);
            }
            let [stage] = get::<1>(mad, data(30))?;
            Message::Resume(Resume {
                conn: connection(mad)?,
                epoch: u16::from_be_bytes(get(mad, data(28))?),
                stage: match stage {
                    1 => Stage::Offer,
                    2 => Stage::Answer,
                    _ => return None,
                },
                rx_consumed: u64::from_be_bytes(get(mad, data(8))?),
                member_qpn,
                psn,
                rail,
                keys_left: u16::from_be_bytes(get(mad, data(26))?),
                nkeys,
                keys,
            })
        }
        ATTR_MOVE => {
            let [control] = get::<1>(mad, data(10))?;
            Message::Move(MoveControl {
                conn: connection(mad)?,
                epoch: u16::from_be_bytes(get(mad, data(8))?),
                control: match control {
                    1 => Control::Request,
                    2 => Control::Go,
                    3 => Control::Abort,
                    _ => return None,
                },
            })
        }
        _ => return None,
    };
    Some((msg, tid))
}

/// `msg` of a move on connection `conn` as a channel message. An offer or
/// answer is a RESUME without keys: the caller adds the rkey updates, in
/// as many RESUMEs as they need, the last one with `keys_left` 0.
pub fn from_move(conn: Connection, msg: Msg) -> Message {
    let resume = |epoch, stage, half: Half| {
        Message::Resume(Resume {
            conn,
            epoch,
            stage,
            rx_consumed: half.rx_consumed,
            member_qpn: half.endpoint.qpn & PSN_MASK,
            psn: half.endpoint.psn & PSN_MASK,
            rail: half.rail,
            keys_left: 0,
            nkeys: 0,
            keys: [(0, 0); KEYS_PER_MAD],
        })
    };
    let control = |epoch, control| {
        Message::Move(MoveControl {
            conn,
            epoch,
            control,
        })
    };
    match msg {
        Msg::Offer { epoch, half } => resume(epoch, Stage::Offer, half),
        Msg::Answer { epoch, half } => resume(epoch, Stage::Answer, half),
        Msg::Request { epoch } => control(epoch, Control::Request),
        Msg::Go { epoch } => control(epoch, Control::Go),
        Msg::Abort { epoch } => control(epoch, Control::Abort),
    }
}

/// The move message a channel message completes, and its connection: a
/// RESUME's last batch (the ones before it only carry keys), or a move
/// control; `None` for anything else.
pub fn to_move(msg: &Message) -> Option<(Connection, Msg)> {
    match *msg {
        Message::Resume(r) if r.keys_left == 0 => {
            let half = Half {
                rx_consumed: r.rx_consumed,
                endpoint: Endpoint {
                    qpn: r.member_qpn,
                    psn: r.psn,
                },
                rail: r.rail,
            };
            let epoch = r.epoch;
            Some((
                r.conn,
                match r.stage {
                    Stage::Offer => Msg::Offer { epoch, half },
                    Stage::Answer => Msg::Answer { epoch, half },
                },
            ))
        }
        Message::Move(m) => {
            let epoch = m.epoch;
            Some((
                m.conn,
                match m.control {
                    Control::Request => Msg::Request { epoch },
                    Control::Go => Msg::Go { epoch },
                    Control::Abort => Msg::Abort { epoch },
                },
            ))
        }
        Message::Resume(_) | Message::Hello(_) | Message::Heartbeat(_) => None,
    }
}
