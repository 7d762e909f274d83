// SPDX-License-Identifier: GPL-2.0

//! The device's QP1 (GSI), which carries the connection manager's MADs. It
//! has no wire of its own, so it is a proxy: its sends go out through a
//! member's MAD agent ([`super::gsi_send`]), and the connection requests
//! members receive are handed to it ([`super::gsi_member`]). Here: its
//! receive buffers, its completions, and the table of each port's QP1
//! ([`GsiPorts`]) by which sends and deliveries find it.

use core::{
    ptr::NonNull,
    sync::atomic::{AtomicU32, Ordering},
};

use kernel::{ffi::c_int, prelude::*};

use super::{
    bindings,
    cq::{Cq, Wc},
    device::{Device, DeviceOps},
    gsi_send,
    irq_lock::{new_spinlock_irq, SpinLockIrq},
    ratelimit::RateLimit,
};
use crate::policy::mad::{self, NetworkType};

/// Ports a device may have; index 0 of [`GsiPorts`] is never used.
const MAX_PORTS: usize = bindings::MRBOND_RDMA_MAX_PORTS as usize;
/// A MAD, without the network header in front of it.
pub(crate) const MAD_SIZE: usize = bindings::IB_MGMT_MAD_SIZE as usize;
/// No VLAN tag: `vlan_id` values are below this (`VLAN_N_VID`).
const VLAN_N_VID: u16 = 4096;

/// A receive buffer ib_mad posted on QP1.
#[derive(Clone, Copy, Default)]
struct RecvBuf {
    wr_id: u64,
    /// A kernel virtual address: the device maps nothing (virtual DMA).
    addr: u64,
    length: u32,
}

/// QP1's receive queue: a ring of a power of two buffers.
struct RecvRing {
    bufs: KVec<RecvBuf>,
    head: u64,
    tail: u64,
}

impl RecvRing {
    fn slot(&mut self, at: u64) -> Option<&mut RecvBuf> {
        // A power of two: the mask keeps the index in the ring.
        let mask = self.bufs.len().checked_sub(1)?;
        self.bufs.get_mut(usize::try_from(at).ok()? & mask)
    }
}

/// The device's QP1 of one port.
///
/// # Invariants
///
/// `ibqp` is the core's QP this QP1 was created for, which outlives it.
#[pin_data]
pub(crate) struct GsiQp {
    ibqp: NonNull<bindings::ib_qp>,
    port: u32,
    /// The state ib_mad last set: QP1 has no wire state of its own.
    pub(super) state: AtomicU32,
    /// Sends the proxy may hold at once (the consumer's `max_send_wr`).
    sq_size: u32,
    /// Sends handed to the proxy and not completed yet.
    sends: AtomicU32,
    /// Lock "mrbond:gsi-rq": the receive buffers. Inside "mrbond:gsi"; only
    /// a CQ's "mrbond:cq-swq" nests inside it.
    #[pin]
    rq: SpinLockIrq<RecvRing>,
}

// SAFETY: the QP pointer names the core's QP, whose CQs may be used from
// any thread; the rest is atomics and a lock.
unsafe impl Send for GsiQp {}
// SAFETY: as above.
unsafe impl Sync for GsiQp {}

impl GsiQp {
    /// QP1 of the port in `init`, for QP `ibqp` (whose number it sets to
    /// 1), filed in `ports`. May sleep.
    ///
    /// # Safety
    ///
    /// `ibqp` must be the QP of a `create_qp` on `dev`, valid for the call,
    /// and outlive the result, which the caller ends with [`GsiQp::end`].
    pub(super) unsafe fn new(
        dev: &Device,
        ports: &GsiPorts,
        ibqp: *mut bindings::ib_qp,
        init: &bindings::ib_qp_init_attr,
    ) -> Result<Pin<KBox<Self>>> {
        let port = init.port_num;
        let cap = &init.cap;
        if port < 1 || port > dev.port_count() || cap.max_send_sge > 2 || cap.max_recv_sge != 1 {
            return Err(EINVAL);
        }
        let size = cap
            .max_recv_wr
            .checked_add(1)
            .and_then(u32::checked_next_power_of_two)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or(EINVAL)?;
        let core_qp = NonNull::new(ibqp).ok_or(EINVAL)?;
        let mut bufs = KVec::with_capacity(size, GFP_KERNEL)?;
        for _ in 0..size {
            bufs.push(RecvBuf::default(), GFP_KERNEL)?;
        }
        let qp = KBox::pin_init(
            pin_init!(Self {
                // INVARIANT: as the caller guarantees.
                ibqp: core_qp,
                port,
                state: AtomicU32::new(bindings::ib_qp_state_IB_QPS_RESET),
                sq_size: cap.max_send_wr,
                sends: AtomicU32::new(0),
                rq <- new_spinlock_irq!(RecvRing { bufs, head: 0, tail: 0 }, "mrbond:gsi-rq"),
            }),
            GFP_KERNEL,
        )?;
        ports.insert(port, &qp)?;
        // SAFETY: the core's QP, before anyone else sees it.
        unsafe { (*ibqp).qp_num = 1 };
        Ok(qp)
    }

    /// Takes QP1 out of `ports` and frees it: sends still in flight
    /// complete into nothing from now on.
    pub(super) fn end(self: Pin<KBox<Self>>, ports: &GsiPorts) {
        ports.remove(self.port, &self);
    }

    fn cq(&self, recv: bool) -> &Cq {
        // SAFETY: by the type invariant the QP is live; the core set its
        // CQs before `create_qp`, and they outlive it.
        unsafe {
            let ibqp = self.ibqp.as_ptr();
            Cq::from_raw(if recv {
                (*ibqp).recv_cq
            } else {
                (*ibqp).send_cq
            })
        }
    }

    fn complete(&self, wc: &mut Wc, recv: bool) {
        wc.raw_mut().qp = self.ibqp.as_ptr();
        let cq = self.cq(recv);
        if cq.push(wc) {
            cq.kick_later();
        }
    }

    /// `post_send`: each MAD is copied and sent from the device's GSI
    /// workqueue through a member ([`super::gsi_send`]), which completes
    /// the WR with the member's status. Any context.
    ///
    /// # Safety
    ///
    /// `wr` must be a chain of the consumer's send WRs and `bad_wr` valid
    /// for the call; `dev` the QP's device, whose table is `T`'s, and
    /// `ports` its QP1 table.
    pub(super) unsafe fn post_send<T: DeviceOps>(
        &self,
        dev: &Device,
        ports: &GsiPorts,
        mut wr: *const bindings::ib_send_wr,
        bad_wr: *mut *const bindings::ib_send_wr,
    ) -> c_int {
        while !wr.is_null() {
            // SAFETY: a WR of the caller's chain.
            let w = unsafe { &*wr };
            let ret = if self.sends.load(Ordering::Relaxed) > self.sq_size {
                ENOMEM.to_errno()
            } else {
                // Counted first: the send may complete before the call returns.
                self.sends.fetch_add(1, Ordering::Relaxed);
                // SAFETY: as the caller guarantees; the job copies the MAD.
                match unsafe { gsi_send::post::<T>(dev, ports, self.port, w) } {
                    Ok(()) => 0,
                    Err(e) => {
                        self.sends.fetch_sub(1, Ordering::Relaxed);
                        e.to_errno()
                    }
                }
            };
            if ret != 0 {
                // SAFETY: as the caller guarantees.
                unsafe { *bad_wr = wr };
                return ret;
            }
            wr = w.next;
        }
        0
    }

    /// `post_recv`: ib_mad's receive buffers, filled only by the requests
    /// members hand on. Any context.
    ///
    /// # Safety
    ///
    /// `wr` must be a chain of the consumer's receive WRs and `bad_wr` valid
    /// for the call.
    pub(super) unsafe fn post_recv(
        &self,
        mut wr: *const bindings::ib_recv_wr,
        bad_wr: *mut *const bindings::ib_recv_wr,
    ) -> c_int {
        let mut rq = self.rq.lock();
        while !wr.is_null() {
            // SAFETY: a WR of the caller's chain.
            let w = unsafe { &*wr };
            let ret = if w.num_sge != 1 || w.sg_list.is_null() {
                EINVAL.to_errno()
            } else if rq.head.wrapping_sub(rq.tail) >= rq.bufs.len() as u64 {
                ENOMEM.to_errno()
            } else {
                // SAFETY: one SGE, as checked.
                let sge = unsafe { &*w.sg_list };
                let head = rq.head;
                match rq.slot(head) {
                    Some(slot) => {
                        *slot = RecvBuf {
                            // SAFETY: `wr_id` and `wr_cqe` are the same 64
                            // bits, any of which is a valid `u64`.
                            wr_id: unsafe { *w.__bindgen_anon_1.wr_id.as_ref() },
                            addr: sge.addr,
                            length: sge.length,
                        };
                        rq.head = head.wrapping_add(1);
                        0
                    }
                    None => EINVAL.to_errno(),
                }
            };
            if ret != 0 {
                // SAFETY: as the caller guarantees.
                unsafe { *bad_wr = wr };
                return ret;
            }
            wr = w.next;
        }
        0
    }

    /// Fills the oldest receive buffer with `mad` as received from GID
    /// `theirs` by GID `ours`, and completes it; false if none is posted.
    fn deliver(&self, mad: &[u8; MAD_SIZE], theirs: &[u8; 16], ours: &[u8; 16], vlan: u16) -> bool {
        let buf = {
            let mut rq = self.rq.lock();
            if rq.tail == rq.head {
                return false;
            }
            let tail = rq.tail;
            let buf = rq.slot(tail).map(|b| *b);
            rq.tail = tail.wrapping_add(1);
            buf
        };
        let Some(buf) = buf else {
            return false;
        };
        let mut wc = Wc::default();
        let w = wc.raw_mut();
        w.status = bindings::ib_wc_status_IB_WC_SUCCESS;
        w.src_qp = 1;
        w.port_num = self.port;
        let mut flags =
            bindings::ib_wc_flags_IB_WC_GRH | bindings::ib_wc_flags_IB_WC_WITH_NETWORK_HDR_TYPE;
        if vlan < VLAN_N_VID {
            flags |= bindings::ib_wc_flags_IB_WC_WITH_VLAN;
            w.vlan_id = vlan;
        }
        w.wc_flags = c_int::try_from(flags).unwrap_or(0);
        let len = mad::GRH_LEN + MAD_SIZE;
        w.byte_len = u32::try_from(len).unwrap_or(u32::MAX);
        if usize::try_from(buf.length).is_ok_and(|l| l >= len) {
            let (header, kind) = mad::network_header(theirs, ours);
            w.network_hdr_type = match kind {
                NetworkType::Ipv4 => bindings::rdma_network_type_RDMA_NETWORK_IPV4,
                NetworkType::Ipv6 => bindings::rdma_network_type_RDMA_NETWORK_IPV6,
            } as u8;
            let to = buf.addr as usize as *mut u8;
            // SAFETY: ib_mad posted this buffer of `length` bytes, which
            // holds `len`, at a kernel virtual address (the device maps
            // nothing: virtual DMA); it is ours until its completion.
            unsafe {
                core::ptr::copy_nonoverlapping(header.as_ptr(), to, mad::GRH_LEN);
                core::ptr::copy_nonoverlapping(mad.as_ptr(), to.add(mad::GRH_LEN), MAD_SIZE);
            }
        } else {
            w.status = bindings::ib_wc_status_IB_WC_LOC_LEN_ERR;
        }
        wc.set_wr(buf.wr_id, bindings::ib_wc_opcode_IB_WC_RECV);
        self.complete(&mut wc, true);
        true
    }
}

/// A QP1 filed in [`GsiPorts`].
struct GsiRef(NonNull<GsiQp>);

// SAFETY: a `GsiQp` is `Sync`; the table hands it out only under its lock.
unsafe impl Send for GsiRef {}

/// Each port's QP1, by port number.
///
/// # Invariants
///
/// Every entry is a live [`GsiQp`]: it is filed once initialised and taken
/// out, under the lock, before it is freed ([`GsiQp::end`]).
#[pin_data]
pub(crate) struct GsiPorts {
    /// Lock "mrbond:gsi": QP1s come and go, and are completed to, under
    /// it; taken in any context (the proxy's send completions).
    #[pin]
    qps: SpinLockIrq<[Option<GsiRef>; MAX_PORTS + 1]>,
}

impl GsiPorts {
    /// No QP1 yet.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            qps <- new_spinlock_irq!([const { None }; MAX_PORTS + 1], "mrbond:gsi"),
        })
    }

    fn insert(&self, port: u32, qp: &Pin<KBox<GsiQp>>) -> Result {
        let mut qps = self.qps.lock();
        let slot = usize::try_from(port)
            .ok()
            .and_then(|p| qps.get_mut(p))
            .ok_or(EINVAL)?;
        if slot.is_some() {
            return Err(EBUSY);
        }
        // INVARIANT: initialised; `end` takes it out before the free.
        *slot = Some(GsiRef(NonNull::from(&**qp)));
        Ok(())
    }

    fn remove(&self, port: u32, qp: &GsiQp) {
        let mut qps = self.qps.lock();
        if let Some(slot) = usize::try_from(port).ok().and_then(|p| qps.get_mut(p)) {
            if slot
                .as_ref()
                .is_some_and(|q| core::ptr::eq(q.0.as_ptr(), qp))
            {
                *slot = None;
            }
        }
    }

    /// Runs `f` on port `port`'s QP1 under the lock, if it exists.
    fn with<R>(&self, port: u32, f: impl FnOnce(&GsiQp) -> R) -> Option<R> {
        let qps = self.qps.lock();
        let qp = usize::try_from(port)
            .ok()
            .and_then(|p| qps.get(p))?
            .as_ref()?;
        // SAFETY: by the type invariant a filed QP1 is live while the lock
        // is held.
        Some(f(unsafe { qp.0.as_ref() }))
    }

    /// The proxy sent (or gave up on) WR `wr_id` of port `port`'s QP1,
    /// with `status`. Any context.
    pub(crate) fn send_done(&self, port: u32, wr_id: u64, status: bindings::ib_wc_status) {
        self.with(port, |qp| {
            qp.sends.fetch_sub(1, Ordering::Relaxed);
            let mut wc = Wc::default();
            wc.raw_mut().status = status;
            wc.set_wr(wr_id, bindings::ib_wc_opcode_IB_WC_SEND);
            qp.complete(&mut wc, false);
        });
    }

    /// `mad`, a CM MAD from GID `theirs` to GID `ours`, received on port
    /// `port`'s QP1, tagged with VLAN `vlan` (ib_cm matches a REQ's source
    /// GID by it; 0xffff: none); false if it was dropped (no QP1, or no
    /// receive buffer). Any context.
    pub(crate) fn deliver(
        &self,
        port: u32,
        mad: &[u8; MAD_SIZE],
        theirs: &[u8; 16],
        ours: &[u8; 16],
        vlan: u16,
    ) -> bool {
        static DROPPED: RateLimit = RateLimit::new();
        let delivered = self
            .with(port, |qp| qp.deliver(mad, theirs, ours, vlan))
            .unwrap_or(false);
        if !delivered && DROPPED.allow() {
            pr_warn!(
                "a CM MAD for port {} dropped: no QP1 receive buffer\n",
                port
            );
        }
        delivered
    }
}
