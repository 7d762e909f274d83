// SPDX-License-Identifier: GPL-2.0

//! The device's record of each RC QP's connection exchange ([`CmRecord`]):
//! the REQ or REP that the device's QP1 last sent for it, noted as the GSI
//! proxy sends it through the QP's member. A member that dies while the QP
//! is not yet ready to send (INIT: our REQ is out; RTR: our REP is) ends
//! the exchange at once with a REJ, delivered to QP1 as from the peer,
//! instead of leaving ib_cm to retry it through a member that is gone until
//! it times out (15 retries of ~4.6 s under rdma_cm).
//!
//! The record also keeps what transparent failover's channel knows of the
//! connection ([`super::tfo_channel`]): the peer's QP and the member's
//! address vector to it, from RTR, the HELLO handshake, the peer's address
//! on each rail (its HELLO's), and the connection's move session
//! ([`Session`]), from the moment both ends can move it.

use core::{ffi::c_void, ptr::NonNull};

use kernel::{ffi::c_int, new_spinlock, prelude::*, sync::SpinLock};

use super::{av::gid_raw, bindings, gsi::GsiPorts};
use crate::policy::{
    mad::{self, CmExchange, CmSent},
    tfo_session::{Actions, Handshake, Role, Session, SessionConfig, State},
    tfo_wire::RailAddrs,
};

/// An exchange in flight, as our last message of it went out.
#[derive(Clone, Copy)]
struct InFlight {
    x: CmExchange,
    /// The device port whose QP1 sent it.
    port: u32,
    /// Our GID and the peer's.
    ours: [u8; 16],
    theirs: [u8; 16],
}

/// The connection's far end, as the failover channel reaches it.
pub(crate) struct ChannelPeer {
    /// The peer's QP number (its bond's, which is the member QP's).
    pub(crate) qpn: u32,
    /// The member QP's address vector to the peer: the channel's MADs go
    /// to the peer's GSI at the same address. Its source GID entry is named
    /// by index only (no pointer): the AH made from it takes its own
    /// reference.
    pub(crate) av: bindings::rdma_ah_attr,
}

impl Clone for ChannelPeer {
    fn clone(&self) -> Self {
        Self {
            qpn: self.qpn,
            // SAFETY: plain C data, copied bit for bit; it holds no
            // reference (its GID entry pointer is null).
            av: unsafe { core::ptr::read(&self.av) },
        }
    }
}

#[derive(Default)]
struct CmState {
    in_flight: Option<InFlight>,
    /// A REJ of the device ended an exchange.
    aborted: bool,
    /// Set at RTR.
    peer: Option<ChannelPeer>,
    handshake: Handshake,
    /// A HELLO that came before RTR, from the QP it names: rdma_cm's
    /// passive end moves its QP to RTS, and so sends its HELLO, before its
    /// REP brings us to RTR. Taken at RTR if it came from the peer then;
    /// it saves the handshake a round trip.
    early_hello: Option<EarlyHello>,
    /// Once the connection can move: its moves.
    session: Option<Session>,
    /// The peer's GID on each rail, from its HELLO.
    peer_rails: RailAddrs,
    /// Ours, as our HELLO named them.
    our_rails: RailAddrs,
    /// The first PSN of the member QP a move made.
    move_psn: u32,
}

/// A bit-for-bit copy of `attr`, plain C data with no GID entry pointer
/// (a recorded one's is cleared).
pub(crate) fn copy_attr(attr: &bindings::ib_qp_attr) -> bindings::ib_qp_attr {
    // SAFETY: plain C data; a recorded one holds no reference.
    unsafe { core::ptr::read(attr) }
}

/// A bit-for-bit copy of `init`, plain C data whose pointers are the
/// member's, replaced before use.
pub(crate) fn copy_init(init: &bindings::ib_qp_init_attr) -> bindings::ib_qp_init_attr {
    // SAFETY: plain C data; it owns nothing.
    unsafe { core::ptr::read(init) }
}

/// How the QP was made and connected, as a move makes and connects its
/// member QP on another rail again: the member's creation attributes and
/// the consumer's last `modify_qp` to each of INIT, RTR and RTS, with their
/// masks (pointers cleared: the GID entry is looked up again on the rail).
pub(crate) struct Recorded {
    pub(crate) member_init: bindings::ib_qp_init_attr,
    pub(crate) init: Option<(bindings::ib_qp_attr, c_int)>,
    pub(crate) rtr: Option<(bindings::ib_qp_attr, c_int)>,
    pub(crate) rts: Option<(bindings::ib_qp_attr, c_int)>,
}

/// A HELLO kept for RTR.
#[derive(Clone, Copy)]
struct EarlyHello {
    from: u32,
    heard: bool,
    rails: RailAddrs,
}

/// What the record says of the connection's moves, for `rdma res`.
pub(crate) struct SessionView {
    /// `None` until the connection can move.
    pub(crate) session: Option<Session>,
    pub(crate) peer_rails: RailAddrs,
}

/// What the device records of an RC QP's connection exchange.
///
/// # Invariants
///
/// `qp` is the device's QP the record was made for and `gsi` its device's
/// QP1 table: both outlive the record.
#[pin_data]
pub(crate) struct CmRecord {
    qp: NonNull<bindings::ib_qp>,
    /// The member slot of the QP, fixed at creation.
    member: usize,
    gsi: NonNull<GsiPorts>,
    /// Lock "mrbond:qp-cm". Inside the objects lock, under which the GSI
    /// proxy notes exchanges and members' departures end them.
    #[pin]
    state: SpinLock<CmState>,
    /// Lock "mrbond:qp-recorded": written by `modify_qp` and read by a
    /// move, both under the objects lock.
    #[pin]
    recorded: SpinLock<KBox<Recorded>>,
}

// SAFETY: the pointers name the core's QP and the device's QP1 table, both
// usable from any thread; the state is behind a lock.
unsafe impl Send for CmRecord {}
// SAFETY: as above.
unsafe impl Sync for CmRecord {}

impl CmRecord {
    /// The record of QP `qp` on member `slot`, of a device whose QP1 table
    /// is `gsi`. May sleep.
    ///
    /// # Safety
    ///
    /// `qp` and `gsi` must outlive the record.
    pub(super) unsafe fn new(
        qp: *mut bindings::ib_qp,
        slot: usize,
        gsi: &GsiPorts,
    ) -> Result<Pin<KBox<Self>>> {
        let qp = NonNull::new(qp).ok_or(EINVAL)?;
        let recorded = KBox::new(
            Recorded {
                member_init: bindings::ib_qp_init_attr::default(),
                init: None,
                rtr: None,
                rts: None,
            },
            GFP_KERNEL,
        )?;
        KBox::pin_init(
            pin_init!(Self {
                // INVARIANT: as the caller guarantees.
                qp,
                member: slot,
                gsi: NonNull::from(gsi),
                state <- new_spinlock!(CmState::default(), "mrbond:qp-cm"),
                recorded <- new_spinlock!(recorded, "mrbond:qp-recorded"),
            }),
            GFP_KERNEL,
        )
    }

    /// The record at `ptr`, found by its QP's number.
    ///
    /// # Safety
    ///
    /// `ptr` must be [`CmRecord::as_raw`] of a record that lives for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: NonNull<c_void>) -> &'a Self {
        // SAFETY: as the caller guarantees.
        unsafe { ptr.cast::<Self>().as_ref() }
    }

    /// The record's address, by which the driver's QPN table names it.
    pub(crate) fn as_raw(&self) -> *mut c_void {
        core::ptr::from_ref(self).cast_mut().cast()
    }

    /// The member slot of the QP.
    pub(crate) fn member(&self) -> usize {
        self.member
    }

    /// Whether a REJ of the device ended the QP's exchange.
    pub(super) fn aborted(&self) -> bool {
        self.state.lock().aborted
    }

    /// The device's QP1 of `port` sends `x`, a REQ or REP for this QP, to
    /// the address in `ah`.
    pub(crate) fn note(&self, x: CmExchange, port: u32, ah: &bindings::rdma_ah_attr) {
        // SAFETY: the AH's source GID entry, if any, is held while the AH
        // lives, which the caller's send outlasts.
        let ours = unsafe { ah.grh.sgid_attr.as_ref() }.map_or([0; 16], |a| gid_raw(&a.gid));
        self.state.lock().in_flight = Some(InFlight {
            x,
            port,
            ours,
            theirs: gid_raw(&ah.grh.dgid),
        });
    }

    /// The member QP went to RTR towards QP `qpn` at `av` (the member's
    /// address vector, whose source GID entry the record does not keep): a
    /// connection, whose handshake starts afresh.
    pub(crate) fn connected(&self, qpn: u32, av: &bindings::rdma_ah_attr) {
        // SAFETY: plain C data, copied bit for bit; the GID entry pointer
        // is dropped just below.
        let mut av = unsafe { core::ptr::read(av) };
        av.grh.sgid_attr = core::ptr::null();
        let mut st = self.state.lock();
        st.peer = Some(ChannelPeer { qpn, av });
        st.handshake = Handshake::new();
        st.session = None;
        st.peer_rails = RailAddrs::NONE;
        if let Some(early) = st.early_hello.take().filter(|e| e.from == qpn) {
            // Not ready to send yet: no answer; our HELLO at RTS says
            // "heard".
            let _ = st.handshake.hello(early.heard);
            st.peer_rails = early.rails;
        }
    }

    /// The QP is ready to send: this end's HELLO, once, if the peer is
    /// known: where it goes and its "heard" flag.
    pub(crate) fn hello_due(&self) -> Option<(ChannelPeer, bool)> {
        let mut st = self.state.lock();
        let peer = st.peer.clone()?;
        st.handshake.ready().map(|heard| (peer, heard))
    }

    /// The peer's HELLO from QP `from`, saying whether it heard ours and
    /// naming the peer's `rails`: `None` if `from` is not this
    /// connection's peer; else the HELLO to answer with, if any (where it
    /// goes; it says "heard"), and whether the connection became capable
    /// of moving now: its session starts then, in `role`, on the rail of
    /// the QP's member (none without a role: the connection never moves).
    /// Before RTR, when the peer is not known yet, it is kept for RTR.
    pub(crate) fn hello_heard(
        &self,
        from: u32,
        heard: bool,
        rails: RailAddrs,
        role: Option<Role>,
    ) -> Option<(Option<ChannelPeer>, bool)> {
        let mut st = self.state.lock();
        if st.peer.is_none() {
            st.early_hello = Some(EarlyHello { from, heard, rails });
            return Some((None, false));
        }
        let peer = st.peer.as_ref().filter(|p| p.qpn == from)?.clone();
        st.peer_rails = rails;
        let (answer, capable) = st.handshake.hello(heard);
        let rail = u8::try_from(self.member).ok().filter(|_| capable);
        if let (Some(rail), Some(role)) = (rail, role) {
            let mut session = Session::new(role, SessionConfig::DEFAULT);
            session.capable(rail);
            st.session = Some(session);
        }
        Some((answer.map(|_| peer), capable))
    }

    /// The connection's moves as they stand.
    pub(crate) fn session_view(&self) -> SessionView {
        let st = self.state.lock();
        SessionView {
            session: st.session,
            peer_rails: st.peer_rails,
        }
    }

    /// Runs `step` on the connection's move session, if it has one: the
    /// actions it returns, for the caller to do.
    pub(crate) fn session_step(
        &self,
        step: impl FnOnce(&mut Session) -> Actions,
    ) -> Option<Actions> {
        self.state.lock().session.as_mut().map(step)
    }

    /// The consumer ended the connection: its session gives up for good
    /// (a move on is abandoned by the consumer's own flush; a peer's later
    /// message is answered with an abort).
    pub(crate) fn end_moves(&self) {
        if let Some(s) = self.state.lock().session.as_mut() {
            let _ = s.replay_failed();
        }
    }

    /// Whether a move of the connection is on.
    pub(crate) fn moving(&self) -> bool {
        matches!(
            self.state.lock().session.map(|s| s.state()),
            Some(State::Moving(_))
        )
    }

    /// The peer's bond QPN, from RTR.
    pub(crate) fn peer_qpn(&self) -> Option<u32> {
        self.state.lock().peer.as_ref().map(|p| p.qpn)
    }

    /// The peer's GID on each rail, from its HELLO.
    pub(crate) fn peer_rails(&self) -> RailAddrs {
        self.state.lock().peer_rails
    }

    /// Our GID and the peer's on `rail`, as the HELLOs named them.
    pub(crate) fn rail_gids(&self, rail: u8) -> Option<([u8; 16], [u8; 16])> {
        let st = self.state.lock();
        Some((st.our_rails.get(rail)?, st.peer_rails.get(rail)?))
    }

    /// Our HELLO named `rails`.
    pub(crate) fn named(&self, rails: RailAddrs) {
        self.state.lock().our_rails = rails;
    }

    /// The connection's member address vector to the peer (its source GID
    /// entry named by index only), from RTR.
    pub(crate) fn peer_av(&self) -> Option<ChannelPeer> {
        self.state.lock().peer.clone()
    }

    /// The QP's number.
    pub(crate) fn qpn(&self) -> u32 {
        // SAFETY: by the type invariant the QP outlives the record; its
        // number never changes after creation.
        unsafe { (*self.qp.as_ptr()).qp_num }
    }

    /// The member QP was made with `init` (its pointers are the member's,
    /// replaced at a move).
    pub(crate) fn record_init(&self, init: &bindings::ib_qp_init_attr) {
        // SAFETY: plain C data, copied bit for bit.
        self.recorded.lock().member_init = unsafe { core::ptr::read(init) };
    }

    /// The consumer's `modify_qp` with `attr` and `mask` went through: the
    /// last one to each of INIT, RTR and RTS is kept.
    pub(crate) fn record_modify(&self, attr: &bindings::ib_qp_attr, mask: c_int) {
        // SAFETY: plain C data, copied bit for bit; its GID entry pointer
        // is cleared just below.
        let mut copy = unsafe { core::ptr::read(attr) };
        copy.ah_attr.grh.sgid_attr = core::ptr::null();
        copy.alt_ah_attr.grh.sgid_attr = core::ptr::null();
        let bits = u32::try_from(mask).unwrap_or(0);
        if bits & bindings::ib_qp_attr_mask_IB_QP_STATE == 0 {
            return;
        }
        let mut r = self.recorded.lock();
        let slot = match attr.qp_state {
            bindings::ib_qp_state_IB_QPS_INIT => &mut r.init,
            bindings::ib_qp_state_IB_QPS_RTR => &mut r.rtr,
            bindings::ib_qp_state_IB_QPS_RTS => &mut r.rts,
            _ => return,
        };
        *slot = Some((copy, mask));
    }

    /// Runs `f` on what was recorded.
    pub(crate) fn with_recorded<R>(&self, f: impl FnOnce(&Recorded) -> R) -> R {
        f(&self.recorded.lock())
    }

    /// The first PSN of the member QP a move made, set when it made it.
    pub(crate) fn move_psn(&self) -> u32 {
        self.state.lock().move_psn
    }

    /// See [`CmRecord::move_psn`].
    pub(crate) fn set_move_psn(&self, psn: u32) {
        self.state.lock().move_psn = psn;
    }

    /// The QP.
    pub(crate) fn ibqp(&self) -> *mut bindings::ib_qp {
        self.qp.as_ptr()
    }

    /// Whether the peer heard this end's HELLO: the connection can move.
    pub(crate) fn capable(&self) -> bool {
        self.state.lock().handshake.capable()
    }

    /// The QP lost its member while in state `was`: the exchange in flight
    /// for it, if any, ends with a REJ delivered to QP1 as from the peer.
    pub(super) fn abort(&self, was: bindings::ib_qp_state) {
        let Some(f) = self.state.lock().in_flight.take() else {
            return;
        };
        // Ready to send, or never connecting: nothing is in flight.
        if was != bindings::ib_qp_state_IB_QPS_INIT && was != bindings::ib_qp_state_IB_QPS_RTR {
            return;
        }
        // The address the exchange went out from is gone with the member.
        let rej = mad::cm_rej(&f.x, mad::REJ_INVALID_GID);
        let mut vlan = u16::MAX;
        // SAFETY: by the type invariant the QP, and so its device, is live;
        // the GID is read for the call. Our GID may be gone with the
        // member: the REJ is untagged then.
        let _ = unsafe {
            bindings::mrbond_rdma_gid_vlan(
                (*self.qp.as_ptr()).device,
                f.port,
                f.ours.as_ptr(),
                &mut vlan,
            )
        };
        // SAFETY: by the type invariant the table outlives the record.
        let gsi = unsafe { self.gsi.as_ref() };
        // Dropped (no receive buffer) is warned about there.
        let _ = gsi.deliver(f.port, &rej, &f.theirs, &f.ours, vlan);
        self.state.lock().aborted = true;
        // SAFETY: as above; the number never changes.
        let qpn = unsafe { (*self.qp.as_ptr()).qp_num };
        pr_info!(
            "QP {} lost its member while connecting: {} rejected locally\n",
            qpn,
            match f.x.sent {
                CmSent::Req => "REQ",
                CmSent::Rep => "REP",
            }
        );
    }
}
