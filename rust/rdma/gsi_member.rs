// SPDX-License-Identifier: GPL-2.0

//! The device's QP1 on each member ([`GsiMembers`]): a send agent on the
//! member's QP1, which QP1's sends go out through ([`super::gsi_send`]),
//! listeners on the service IDs of the `cm_ports` module parameter, and the
//! receive agent of transparent failover's channel
//! ([`super::tfo_channel`]).
//!
//! Replies (REP, RTU, DREQ, ...) need nothing: ib_cm matches them by
//! communication ID in global tables, whichever device got them. A REQ is
//! matched by (device, service ID) on the member that got it, so every
//! member listens on the service IDs of `cm_ports` with a handler that hands
//! the REQ to the device's QP1 of that member's port as a received MAD
//! ([`GsiPorts::deliver`]), and returns `-ENOMEM`, which makes ib_cm drop
//! its own copy without a REJ. The device's ib_cm and rdma_cm then accept
//! it on the device.

use core::{
    ffi::c_void,
    ptr::{self, NonNull},
    sync::atomic::{AtomicPtr, Ordering},
};

use kernel::{error::from_err_ptr, ffi::c_int, new_mutex, prelude::*, sync::Mutex};

use super::{
    bindings,
    device::{Device, DeviceOps},
    gsi::{GsiPorts, MAD_SIZE},
    gsi_send::{self, GsiWindow},
    ratelimit::RateLimit,
    tfo_channel::{self, ChannelCounters},
};
use crate::policy::{mad, tfo_wire, MAX_MEMBERS};

/// Most `cm_ports` (`MRBOND_RDMA_CM_PORTS_MAX`).
const CM_PORTS_MAX: usize = bindings::MRBOND_RDMA_CM_PORTS_MAX as usize;
/// Where ib_cm's handler finds the private data of the REQ MAD it got:
/// this far into the MAD.
const REQ_PDATA_OFFSET: usize = 24 + 140;

/// What a member's agent and listeners are given as their context: where
/// the REQs they take go. Set before the first of them exists.
struct MemberCtx {
    dev: AtomicPtr<bindings::ib_device>,
    gsi: AtomicPtr<GsiPorts>,
    slot: usize,
}

/// A member's agents and listeners.
#[derive(Default)]
struct Held {
    agent: Option<NonNull<bindings::ib_mad_agent>>,
    /// The failover channel's receive agent.
    channel: Option<NonNull<bindings::ib_mad_agent>>,
    listen: [Option<NonNull<bindings::ib_cm_id>>; CM_PORTS_MAX],
}

// SAFETY: handles of ib_mad and ib_cm objects, usable from any thread.
unsafe impl Send for Held {}

/// A leaving member's agent and listeners, released when dropped, which
/// must be without the device's objects lock: unregistering the agent
/// flushes its port's MAD workqueue, whose timeout work runs rdma_cm
/// handlers that create objects on the device under that lock. Pending
/// sends complete, flushed, and running REQ handlers return first.
///
/// # Invariants
///
/// The handles are live and nothing else releases them.
pub(crate) struct Leaving(Held);

impl Drop for Leaving {
    fn drop(&mut self) {
        for id in self.0.listen.iter_mut().filter_map(Option::take) {
            // SAFETY: by the type invariant the listener is live and ours.
            unsafe { bindings::ib_destroy_cm_id(id.as_ptr()) };
        }
        for agent in [self.0.channel.take(), self.0.agent.take()]
            .into_iter()
            .flatten()
        {
            // SAFETY: as above.
            unsafe { bindings::ib_unregister_mad_agent(agent.as_ptr()) };
        }
    }
}

/// The agent and listeners of each member of a device.
///
/// # Invariants
///
/// Every handle in `held` is live; a member's leave takes them out under
/// the device's objects lock before releasing them ([`Leaving`]).
#[pin_data]
pub(crate) struct GsiMembers {
    ctx: [MemberCtx; MAX_MEMBERS],
    channel: ChannelCounters,
    /// Lock "mrbond:gsi-members". Inside the objects lock; ib_mad and
    /// ib_cm registrations nest inside it.
    #[pin]
    held: Mutex<[Held; MAX_MEMBERS]>,
}

impl GsiMembers {
    /// No member yet.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            ctx: core::array::from_fn(|slot| MemberCtx {
                dev: AtomicPtr::new(ptr::null_mut()),
                gsi: AtomicPtr::new(ptr::null_mut()),
                slot,
            }),
            channel: ChannelCounters::new(),
            held <- new_mutex!(core::array::from_fn(|_| Held::default()), "mrbond:gsi-members"),
        })
    }

    /// Member `slot` joined on `mdev`'s port `mport`: its send agent and
    /// its REQ listeners, which hand REQs to `dev`'s QP1 table `gsi`.
    /// Under the objects lock. May sleep.
    ///
    /// # Safety
    ///
    /// `dev`'s table must be `T`'s and `gsi` its QP1 table, both outliving
    /// every agent and listener made here (the device releases them before
    /// its driver data goes); `mdev` must stay registered until the
    /// member's [`GsiMembers::take`] result is dropped.
    pub(super) unsafe fn attach<T: DeviceOps>(
        &self,
        dev: &Device,
        gsi: &GsiPorts,
        slot: usize,
        mdev: *mut bindings::ib_device,
        mport: u32,
    ) {
        let Some(ctx) = self.ctx.get(slot) else {
            return;
        };
        ctx.dev.store(dev.raw(), Ordering::Release);
        ctx.gsi
            .store(ptr::from_ref(gsi).cast_mut(), Ordering::Release);
        let context = ptr::from_ref(ctx).cast_mut().cast::<c_void>();
        let mut held = self.held.lock();
        let Some(h) = held.get_mut(slot) else {
            return;
        };
        let register = |reg: Option<&mut bindings::ib_mad_reg_req>,
                        recv: bindings::ib_mad_recv_handler| {
            // SAFETY: `mdev` is registered; the handlers and the context
            // stay valid while the agent lives (as the caller guarantees);
            // `reg` is read for the call.
            from_err_ptr(unsafe {
                bindings::ib_register_mad_agent(
                    mdev,
                    mport,
                    bindings::ib_qp_type_IB_QPT_GSI,
                    reg.map_or(ptr::null_mut(), ptr::from_mut),
                    0,
                    Some(agent_sent),
                    recv,
                    context,
                    0,
                )
            })
        };
        match register(None, None) {
            // INVARIANT: registered here, released by `Leaving`.
            Ok(agent) => h.agent = NonNull::new(agent),
            Err(e) => pr_warn!(
                "member {}: no MAD agent ({:?}): connections cannot use it\n",
                slot,
                e
            ),
        }
        // The failover channel's: our class's SENDs.
        let mut reg = bindings::ib_mad_reg_req {
            mgmt_class: tfo_wire::CLASS_TFO,
            mgmt_class_version: tfo_wire::VERSION,
            oui: {
                let [_, a, b, c] = tfo_wire::OUI.to_be_bytes();
                [a, b, c]
            },
            ..Default::default()
        };
        if let Some(word) = reg.method_mask.get_mut(0) {
            *word = 1 << bindings::IB_MGMT_METHOD_SEND;
        }
        let channel = register(Some(&mut reg), Some(tfo_channel::received::<T>));
        match channel {
            // INVARIANT: registered here, released by `Leaving`.
            Ok(agent) => h.channel = NonNull::new(agent),
            Err(e) => pr_warn!(
                "member {}: no failover channel ({:?}): its connections cannot move\n",
                slot,
                e
            ),
        }
        for (i, &port) in cm_ports().iter().enumerate() {
            // The context is set before the listen: a REQ may arrive the
            // moment it is live (peers reconnect as members rejoin). A
            // listener of our own: `ib_cm_insert_listen()` would share one
            // between bonds and overwrite its context.
            // SAFETY: as above.
            let id = from_err_ptr(unsafe {
                bindings::ib_create_cm_id(mdev, Some(member_req::<T>), context)
            });
            let listened = id.and_then(|id| {
                // SAFETY: just created; destroyed here on failure.
                let ret = unsafe { bindings::ib_cm_listen(id, service_id(port)) };
                if ret != 0 {
                    // SAFETY: as above.
                    unsafe { bindings::ib_destroy_cm_id(id) };
                    return Err(Error::from_errno(ret));
                }
                Ok(id)
            });
            match listened {
                Ok(id) => {
                    T::gsi_window(GsiWindow::Listen);
                    if let Some(slot) = h.listen.get_mut(i) {
                        // INVARIANT: listening, released by `Leaving`.
                        *slot = NonNull::new(id);
                    }
                }
                Err(e) => pr_warn!(
                    "member {}: cannot take REQs for port {} ({:?}): a wildcard rdma_cm listener there?\n",
                    slot,
                    port,
                    e
                ),
            }
        }
    }

    /// The failover channel's counters.
    pub(crate) fn channel_counters(&self) -> &ChannelCounters {
        &self.channel
    }

    /// Member `slot`'s send agent, while it has one. Under the objects
    /// lock, which keeps it: a leave takes it out under that lock.
    pub(super) fn agent(&self, slot: usize) -> Option<NonNull<bindings::ib_mad_agent>> {
        self.held.lock().get(slot).and_then(|h| h.agent)
    }

    /// Member `slot` leaves: its agent and listeners, taken out under the
    /// objects lock (no send picks the agent up again), to be dropped
    /// without it.
    pub(super) fn take(&self, slot: usize) -> Leaving {
        let held = self.held.lock().get_mut(slot).map(core::mem::take);
        Leaving(held.unwrap_or_default())
    }

    /// The device goes: every member's agent and listeners are released.
    /// Without the objects lock; no send work is left.
    pub(crate) fn release_all(&self) {
        for slot in 0..MAX_MEMBERS {
            drop(self.take(slot));
        }
    }
}

/// The service ID rdma_cm listens on for TCP port `port`
/// (`rdma_get_service_id()`), big-endian.
fn service_id(port: u16) -> u64 {
    let ps = u64::from(bindings::rdma_ucm_port_space_RDMA_PS_TCP);
    ((ps << 16) | u64::from(port)).to_be()
}

/// The `cm_ports` module parameter.
fn cm_ports() -> &'static [u16] {
    let mut ports: *const u16 = ptr::null();
    // SAFETY: the parameter's array, read only, lives as long as the module.
    let n = unsafe { bindings::mrbond_rdma_cm_ports(&mut ports) } as usize;
    if ports.is_null() {
        return &[];
    }
    // SAFETY: `n` (at most `CM_PORTS_MAX`) ports at `ports`.
    unsafe { core::slice::from_raw_parts(ports, n.min(CM_PORTS_MAX)) }
}

/// # Safety
///
/// Called by ib_mad as the send handler of an agent made by
/// [`GsiMembers::attach`].
unsafe extern "C" fn agent_sent(
    _agent: *mut bindings::ib_mad_agent,
    mwc: *mut bindings::ib_mad_send_wc,
) {
    // SAFETY: the agent's sends are QP1's, posted by `gsi_send`.
    unsafe { gsi_send::sent(mwc) };
}

/// ib_cm's handler of the REQs a member received for `cm_ports`.
///
/// # Safety
///
/// Called by ib_cm with a listener made by [`GsiMembers::attach`] on a
/// device whose table is `T`'s, and a valid event.
unsafe extern "C" fn member_req<T: DeviceOps>(
    cm_id: *mut bindings::ib_cm_id,
    event: *const bindings::ib_cm_event,
) -> c_int {
    // SAFETY: as the caller guarantees.
    let (ctx, event) = unsafe { (&*(*cm_id).context.cast::<MemberCtx>(), &*event) };
    if event.event != bindings::ib_cm_event_type_IB_CM_REQ_RECEIVED || event.private_data.is_null()
    {
        return 0;
    }
    // Test builds: hold the REQ, so that the peer waits for a REP.
    T::gsi_window(GsiWindow::ReqIn);
    // SAFETY: ib_cm's own receive buffer of the REQ MAD, read only, whose
    // private data is at its fixed offset.
    let mad = unsafe {
        &*event
            .private_data
            .cast::<u8>()
            .sub(REQ_PDATA_OFFSET)
            .cast::<[u8; MAD_SIZE]>()
    };
    let (dev, gsi) = (
        ctx.dev.load(Ordering::Acquire),
        ctx.gsi.load(Ordering::Acquire),
    );
    let (Some(dev), Some((theirs, ours))) = (NonNull::new(dev), mad::cm_req_gids(mad)) else {
        return ENOMEM.to_errno();
    };
    // SAFETY: set before the listener was made, and live while it is (as
    // `attach`'s caller guarantees).
    let (dev, gsi) = unsafe { (Device::from_raw(dev.as_ptr()), &*gsi) };
    // Rail: one port per member. Active-backup: the only port.
    let port = if dev.port_count() == 1 {
        1
    } else {
        u32::try_from(ctx.slot)
            .unwrap_or(u32::MAX)
            .saturating_add(1)
    };
    let mut vlan = u16::MAX;
    // SAFETY: the device is live; the GID is read for the call.
    if unsafe { bindings::mrbond_rdma_gid_vlan(dev.raw(), port, ours.as_ptr(), &mut vlan) } != 0 {
        static NOT_OURS: RateLimit = RateLimit::new();
        if NOT_OURS.allow() {
            pr_warn!("a REQ for an address port {} does not have\n", port);
        }
        return ENOMEM.to_errno();
    }
    // A drop (no receive buffer) is warned about there.
    let _ = gsi.deliver(port, mad, &theirs, &ours, vlan);
    // ib_cm forgets its copy without a REJ.
    ENOMEM.to_errno()
}

/// The device a member agent made by [`GsiMembers::attach`] hands MADs to.
///
/// # Safety
///
/// `agent` must be such an agent, live for `'a` (its handler is running).
pub(super) unsafe fn agent_device<'a>(agent: *mut bindings::ib_mad_agent) -> Option<&'a Device> {
    // SAFETY: as the caller guarantees, the agent's context is its
    // member's, which lives as long as the device's data.
    let ctx = unsafe { &*(*agent).context.cast::<MemberCtx>() };
    let dev = NonNull::new(ctx.dev.load(Ordering::Acquire))?;
    // SAFETY: set before the agent was made, and live while it is (as
    // `attach`'s caller guarantees).
    Some(unsafe { Device::from_raw(dev.as_ptr()) })
}
