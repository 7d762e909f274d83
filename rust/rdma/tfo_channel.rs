// SPDX-License-Identifier: GPL-2.0

//! Transparent failover's control channel (issue 17): vendor MADs
//! ([`crate::policy::tfo_wire`]) between the bonds at the two ends of a
//! connection, on their members' GSI. So far the HELLO handshake
//! ([`crate::policy::tfo_session::Handshake`]), which finds the
//! connections whose peer runs rdma_mrbond too and tells each end where the
//! other is on every rail; moving them comes next.
//!
//! Each end sends its HELLO when the QP reaches RTS, through the QP's
//! member to the peer's GSI at the member QP's own address vector (the
//! rail the connection runs on), and answers a HELLO as the handshake
//! says. A peer without rdma_mrbond has no agent for the class: its ib_mad
//! drops the MAD, and the connection never becomes capable.

use core::sync::atomic::{AtomicU64, Ordering};

use kernel::{
    c_str, fmt,
    prelude::*,
    str::{CStr, CString},
    types::ForeignOwnable,
};

use super::{
    av::Gid,
    bindings,
    cm::{ChannelPeer, CmRecord},
    device::{Device, DeviceOps, ObjectsGuard},
    gsi, gsi_member, gsi_send, qp,
    ratelimit::RateLimit,
    tfo_move,
};
use crate::policy::{
    tfo_session::{Msg, Role, State},
    tfo_wire::{self, Connection, Hello, Message, RailAddrs, MAD_SIZE},
    MAX_MEMBERS,
};

// The channel's MADs are the GSI's.
const _: () = assert!(MAD_SIZE == gsi::MAD_SIZE);

/// What the channel did, device-wide (`hw_counters/tfo_*`). They only grow.
pub(crate) struct ChannelCounters {
    hello_sent: AtomicU64,
    hello_heard: AtomicU64,
    capable: AtomicU64,
    moves: AtomicU64,
    move_fallbacks: AtomicU64,
    /// The next MAD's transaction ID.
    tid: AtomicU64,
}

impl ChannelCounters {
    /// All zero.
    pub(crate) const fn new() -> Self {
        Self {
            hello_sent: AtomicU64::new(0),
            hello_heard: AtomicU64::new(0),
            capable: AtomicU64::new(0),
            moves: AtomicU64::new(0),
            move_fallbacks: AtomicU64::new(0),
            tid: AtomicU64::new(1),
        }
    }

    /// HELLOs handed to a member's QP1.
    pub(crate) fn hello_sent(&self) -> u64 {
        self.hello_sent.load(Ordering::Relaxed)
    }

    /// HELLOs from the peer of a connection of ours (one that came before
    /// the connection's RTR included: it is kept until then).
    pub(crate) fn hello_heard(&self) -> u64 {
        self.hello_heard.load(Ordering::Relaxed)
    }

    /// Connections whose peer heard our HELLO.
    pub(crate) fn capable(&self) -> u64 {
        self.capable.load(Ordering::Relaxed)
    }

    /// Connections moved to another rail.
    pub(crate) fn moves(&self) -> u64 {
        self.moves.load(Ordering::Relaxed)
    }

    /// Moves given up for the flush path.
    pub(crate) fn move_fallbacks(&self) -> u64 {
        self.move_fallbacks.load(Ordering::Relaxed)
    }

    /// A move ended: done, or given up.
    pub(crate) fn count_move(&self, done: bool) {
        let c = if done {
            &self.moves
        } else {
            &self.move_fallbacks
        };
        c.fetch_add(1, Ordering::Relaxed);
    }
}

/// A connection's moves as `rdma -dd res show qp` shows them.
pub(crate) struct SessionAttrs {
    /// `active` (decides the moves: [`Role::of`]), `passive`, or `none`
    /// (cannot move).
    pub(crate) role: &'static CStr,
    /// `plain` (cannot move), `running`, `moving` or `fallback`.
    pub(crate) state: &'static CStr,
    /// The rail it runs on (moving: the one it leaves).
    pub(crate) rail: Option<u32>,
    /// The peer's address on each rail: `rail=gid` pairs, comma-separated.
    pub(crate) peer_rails: CString,
}

impl SessionAttrs {
    /// The attributes of the connection `record` keeps. May sleep.
    pub(crate) fn of(record: &CmRecord) -> Result<Self> {
        let view = record.session_view();
        let role = match view.session.map(|s| s.role()) {
            Some(Role::Active) => c_str!("active"),
            Some(Role::Passive) => c_str!("passive"),
            None => c_str!("none"),
        };
        let (state, rail) = match view.session.map(|s| s.state()) {
            None | Some(State::Plain) => (c_str!("plain"), None),
            Some(State::Running { rail, .. }) => (c_str!("running"), Some(rail)),
            Some(State::Moving(m)) => (c_str!("moving"), Some(m.from)),
            Some(State::Fallback) => (c_str!("fallback"), None),
        };
        Ok(Self {
            role,
            state,
            rail: rail.map(u32::from),
            peer_rails: CString::try_from_fmt(fmt!("{}", RailList(&view.peer_rails)))?,
        })
    }
}

/// `rail=gid` pairs, comma-separated.
struct RailList<'a>(&'a RailAddrs);

impl core::fmt::Display for RailList<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for (i, (rail, gid)) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(f, "{sep}{rail}={}", Gid(gid))?;
        }
        Ok(())
    }
}

/// The QP whose record is `record`, number `qpn`, reached RTS: its HELLO,
/// if its peer is known. Under the objects lock. May sleep.
pub(crate) fn ready<T: DeviceOps>(
    dev: &Device,
    data: &<T::Data as ForeignOwnable>::Borrowed<'_>,
    objects: &ObjectsGuard<'_>,
    record: &CmRecord,
    qpn: u32,
) {
    if let Some((peer, heard)) = record.hello_due() {
        send_hello::<T>(dev, data, objects, record, qpn, &peer, heard);
    }
}

/// Sends the HELLO of our QP `qpn` on member `slot` to `peer`.
fn send_hello<T: DeviceOps>(
    dev: &Device,
    data: &<T::Data as ForeignOwnable>::Borrowed<'_>,
    objects: &ObjectsGuard<'_>,
    record: &CmRecord,
    qpn: u32,
    peer: &ChannelPeer,
    heard: bool,
) {
    let slot = record.member();
    let members = T::gsi_members(data);
    let counters = members.channel_counters();
    let rails = our_rails(objects, slot, peer);
    record.named(rails);
    let hello = Message::Hello(Hello {
        conn: Connection {
            local_qpn: qpn,
            remote_qpn: peer.qpn,
        },
        node_guid: u64::from_be(dev.node_guid_be()),
        // No heartbeats yet.
        heartbeat_ms: 0,
        heard,
        rails,
    });
    let mut mad = [0u8; MAD_SIZE];
    tfo_wire::encode(
        &hello,
        counters.tid.fetch_add(1, Ordering::Relaxed),
        &mut mad,
    );
    match gsi_send::send_channel(
        objects,
        dev,
        T::gsi_ports(data),
        members,
        slot,
        &peer.av,
        &mad,
    ) {
        Ok(()) => {
            counters.hello_sent.fetch_add(1, Ordering::Relaxed);
        }
        Err(e) => {
            static NOT_SENT: RateLimit = RateLimit::new();
            if NOT_SENT.allow() {
                pr_warn!("QP {}: HELLO not sent: {:?}\n", qpn, e);
            }
        }
    }
}

/// Our address on each rail, of the kind the connection on member `slot`
/// uses towards `peer` (its source GID's type and family): where a move
/// can take it. Rails past what a HELLO names are left out.
fn our_rails(objects: &ObjectsGuard<'_>, slot: usize, peer: &ChannelPeer) -> RailAddrs {
    let mut rails = RailAddrs::NONE;
    let Ok(like) = objects.member_gid(slot, peer.av.grh.sgid_index) else {
        return rails;
    };
    for (rail, member) in (0u8..).zip(0..MAX_MEMBERS) {
        if let Some(gid) = objects.member_gid_like(member, &like) {
            if !rails.push(rail, gid) {
                break;
            }
        }
    }
    rails
}

/// The failover channel's receive handler on a member.
///
/// # Safety
///
/// Called by ib_mad as the receive handler of a channel agent made by
/// [`gsi_member::GsiMembers::attach`] on a device whose table is `T`'s,
/// with a received MAD that is ours to free.
pub(super) unsafe extern "C" fn received<T: DeviceOps>(
    agent: *mut bindings::ib_mad_agent,
    _send_buf: *mut bindings::ib_mad_send_buf,
    rwc: *mut bindings::ib_mad_recv_wc,
) {
    let mut mad = [0u8; MAD_SIZE];
    // SAFETY: as the caller guarantees, `rwc` is a received MAD of
    // `mad_len` bytes at `recv_buf.mad`, freed here once copied.
    unsafe {
        let from = (*rwc).recv_buf.__bindgen_anon_1.mad.cast::<u8>();
        let len = usize::try_from((*rwc).mad_len).unwrap_or(0).min(MAD_SIZE);
        if !from.is_null() {
            core::ptr::copy_nonoverlapping(from, mad.as_mut_ptr(), len);
        }
        bindings::ib_free_recv_mad(rwc);
    }
    let Some((msg, _)) = tfo_wire::decode(&mad) else {
        return;
    };
    // SAFETY: as the caller guarantees; the handler is running.
    let Some(dev) = (unsafe { gsi_member::agent_device(agent) }) else {
        return;
    };
    // SAFETY: the device's table is `T`'s; its data is there until its
    // `.dealloc_driver`, which unregisters this agent (waiting for this
    // handler) before it frees the data.
    let Ok(data) = (unsafe { dev.driver_data::<T::Data>() }) else {
        return;
    };
    let mut objects = dev.lock_objects();
    let conn = match msg {
        Message::Hello(h) => h.conn,
        _ => match tfo_wire::to_move(&msg) {
            Some((conn, _)) => conn,
            None => return,
        },
    };
    let Some(record) = T::qpn_record(&data, conn.remote_qpn) else {
        return;
    };
    // SAFETY: the driver's QPN table holds the record of a live QP, under
    // the objects lock (`destroy_qp` takes the number out under it before
    // the record goes), which is held.
    let record = unsafe { CmRecord::from_raw(record) };
    let hello = match msg {
        Message::Hello(h) => h,
        _ => {
            if let Some((_, m)) = tfo_wire::to_move(&msg) {
                if record.peer_qpn() == Some(conn.local_qpn) {
                    tfo_move::received::<T>(dev, &data, &mut objects, record, m);
                }
            }
            return;
        }
    };
    let ours = (u64::from_be(dev.node_guid_be()), hello.conn.remote_qpn);
    let role = Role::of(ours, (hello.node_guid, hello.conn.local_qpn));
    let Some((answer, capable)) =
        record.hello_heard(hello.conn.local_qpn, hello.heard, hello.rails, role)
    else {
        return;
    };
    let counters = T::gsi_members(&data).channel_counters();
    counters.hello_heard.fetch_add(1, Ordering::Relaxed);
    if capable {
        counters.capable.fetch_add(1, Ordering::Relaxed);
        if let Some(path) = qp::path_of(record) {
            path.set_capable();
        }
    }
    if let Some(peer) = answer {
        send_hello::<T>(
            dev,
            &data,
            &objects,
            record,
            hello.conn.remote_qpn,
            &peer,
            true,
        );
    }
}

/// Sends `msg`, a move's message of the connection `record` keeps, to the
/// peer on `rail`: from our member there to the peer's address on it
/// (both from the HELLOs), with the connection's own address vector as
/// the template. Under the objects lock, which the address resolution
/// keeps ([`ObjectsGuard::rail_av`]). May sleep.
pub(crate) fn send_move<T: DeviceOps>(
    dev: &Device,
    data: &<T::Data as ForeignOwnable>::Borrowed<'_>,
    objects: &mut ObjectsGuard<'_>,
    record: &CmRecord,
    rail: u8,
    msg: Msg,
) -> Result {
    let peer = record.peer_av().ok_or(EINVAL)?;
    let (sgid, dgid) = record.rail_gids(rail).ok_or(EINVAL)?;
    let slot = usize::from(rail);
    let mut mav = bindings::rdma_ah_attr::default();
    let gid = objects.rail_av(slot, &peer.av, sgid, dgid, &mut mav)?;
    // `send_channel` names the source entry by index, as `ChannelPeer`s do.
    mav.grh.sgid_attr = core::ptr::null();
    let conn = Connection {
        local_qpn: record.qpn(),
        remote_qpn: peer.qpn,
    };
    let members = T::gsi_members(data);
    let counters = members.channel_counters();
    let mut mad = [0u8; MAD_SIZE];
    tfo_wire::encode(
        &tfo_wire::from_move(conn, msg),
        counters.tid.fetch_add(1, Ordering::Relaxed),
        &mut mad,
    );
    let sent = gsi_send::send_channel(objects, dev, T::gsi_ports(data), members, slot, &mav, &mad);
    drop(gid);
    sent
}
