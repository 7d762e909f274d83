// SPDX-License-Identifier: GPL-2.0

//! The sends of the device's QP1: ib_mad posts a MAD, which is copied into
//! a [`GsiJob`] and sent, from the device's GSI workqueue, through a send
//! agent on a member; the WR completes with the member's status. A CM REQ
//! or REP goes out through the member of the QP it speaks for (its local
//! QPN): the peer's REQ then arrives on that QP's rail, and the passive side
//! puts its QP there. Other MADs go out through the member the driver names
//! for the port ([`DeviceOps::gsi_member`]). The failover channel's MADs
//! ([`super::tfo_channel`]) take the same agents, straight from the caller
//! ([`send_channel`]): nothing waits for their completion.

use core::{
    mem::offset_of,
    ptr::{self, NonNull},
};

use kernel::{error::from_err_ptr, prelude::*, types::Opaque};

use super::{
    ah::Ah,
    bindings,
    cm::CmRecord,
    device::{Device, DeviceOps, ObjectsGuard},
    gsi::{GsiPorts, MAD_SIZE},
    gsi_member::GsiMembers,
    ratelimit::RateLimit,
};
use crate::policy::mad;

/// Where [`DeviceOps::gsi_window`] runs, for fault injection in test builds.
#[derive(Clone, Copy)]
pub(crate) enum GsiWindow {
    /// A CM REQ's send work, before it picks the member. Process context.
    ReqOut,
    /// A member's REQ handler, before it hands the REQ to QP1. ib_cm's
    /// work, process context.
    ReqIn,
    /// A member's attach, right after one of its listeners went live,
    /// under the objects lock.
    Listen,
}

/// Whom a MAD is sent for.
#[derive(Clone, Copy)]
enum Origin {
    /// The device's QP1: its WR completes with the member's status.
    Qp1 { wr_id: u64 },
    /// The failover channel: nothing waits for it.
    Channel,
}

/// A MAD that QP1 (or the failover channel) sends, copied at the post.
///
/// # Invariants
///
/// `dev` is the device whose QP1 posted it and `gsi` its QP1 table, both
/// live until the job completes: ib_mad destroys QP1 only once its sends
/// have completed, and the device goes after its QPs.
#[repr(C)]
struct GsiJob {
    work: Opaque<kernel::bindings::work_struct>,
    dev: NonNull<bindings::ib_device>,
    gsi: NonNull<GsiPorts>,
    port: u32,
    origin: Origin,
    /// The AH's attributes: the AH lives until the WR completes.
    ah: bindings::rdma_ah_attr,
    remote_qpn: u32,
    pkey_index: u16,
    len: usize,
    mad: [u8; MAD_SIZE],
}

impl GsiJob {
    /// The WR is done: QP1 completes it with `status`; the job is freed.
    fn done(self: KBox<Self>, status: bindings::ib_wc_status) {
        if let Origin::Qp1 { wr_id } = self.origin {
            // SAFETY: by the type invariant the table lives until the job
            // completes, which is now.
            let gsi = unsafe { self.gsi.as_ref() };
            gsi.send_done(self.port, wr_id, status);
        }
    }
}

/// Copies send WR `wr` of the QP1 of `port` into a job and queues it.
/// Any context.
///
/// # Safety
///
/// `wr` must be a send WR valid for the call, posted on QP1 of `port` of
/// `dev`, a device whose table is `T`'s; its SGEs address kernel memory
/// (virtual DMA).
pub(super) unsafe fn post<T: DeviceOps>(
    dev: &Device,
    gsi: &GsiPorts,
    port: u32,
    wr: &bindings::ib_send_wr,
) -> Result {
    if wr.opcode != bindings::ib_wr_opcode_IB_WR_SEND || !(1..=2).contains(&wr.num_sge) {
        return Err(EINVAL);
    }
    // SAFETY: a UD WR on QP1: the send WR is the first field of its
    // `ib_ud_wr`.
    let ud = unsafe { &*ptr::from_ref(wr).cast::<bindings::ib_ud_wr>() };
    if ud.ah.is_null() || wr.sg_list.is_null() {
        return Err(EINVAL);
    }
    let mut job = KBox::new(
        GsiJob {
            work: Opaque::uninit(),
            // INVARIANT: the posting device and its table.
            dev: NonNull::from(dev).cast(),
            gsi: NonNull::from(gsi),
            port,
            origin: Origin::Qp1 {
                // SAFETY: `wr_id` and `wr_cqe` are the same 64 bits.
                wr_id: unsafe { *wr.__bindgen_anon_1.wr_id.as_ref() },
            },
            // SAFETY: plain C data, copied bit for bit, from a live AH of
            // the device.
            ah: unsafe { ptr::read(Ah::from_raw(ud.ah).attr()) },
            remote_qpn: ud.remote_qpn,
            pkey_index: ud.pkey_index,
            len: 0,
            mad: [0; MAD_SIZE],
        },
        GFP_ATOMIC,
    )?;
    // SAFETY: `num_sge` (checked) SGEs at `sg_list`.
    let sges = unsafe { core::slice::from_raw_parts(wr.sg_list, wr.num_sge as usize) };
    for sge in sges.iter().filter(|s| s.length > 0) {
        let len = usize::try_from(sge.length)?;
        let start = job.len;
        let end = start
            .checked_add(len)
            .filter(|&e| e <= MAD_SIZE)
            .ok_or(EINVAL)?;
        let to = job.mad.get_mut(start..end).ok_or(EINVAL)?;
        // SAFETY: virtual DMA: the consumer's buffer at a kernel address,
        // `length` bytes, readable for the call.
        let from = unsafe { core::slice::from_raw_parts(sge.addr as usize as *const u8, len) };
        to.copy_from_slice(from);
        job.len = end;
    }
    if job.len < bindings::IB_MGMT_MAD_HDR as usize {
        return Err(EINVAL);
    }
    let raw = KBox::into_raw(job);
    // SAFETY: `raw` is a live job; its work is initialised here, once.
    unsafe {
        let work = Opaque::raw_get(ptr::addr_of!((*raw).work));
        bindings::mrbond_rdma_init_work(work, Some(send_work::<T>));
        dev.queue_gsi(work);
    }
    Ok(())
}

/// # Safety
///
/// Called by the workqueue with the work of a job [`post`] queued, which
/// it owns from here.
unsafe extern "C" fn send_work<T: DeviceOps>(work: *mut kernel::bindings::work_struct) {
    // SAFETY: the work is the first field of a job made by `post` and
    // leaked there; taken back once, here.
    let job = unsafe { KBox::from_raw(work.byte_sub(offset_of!(GsiJob, work)).cast::<GsiJob>()) };
    let mad = job.mad.get(..job.len).unwrap_or(&[]);
    let class_attr = mad::class_attr(mad);
    if class_attr == Some((mad::CLASS_CM, mad::CM_REQ)) {
        T::gsi_window(GsiWindow::ReqOut);
    }
    // SAFETY: by the job's invariant the device is live.
    let dev = unsafe { Device::from_raw(job.dev.as_ptr()) };
    // SAFETY: the device's table is `T`'s (`post`'s caller says so).
    let Ok(data) = (unsafe { dev.driver_data::<T::Data>() }) else {
        job.done(bindings::ib_wc_status_IB_WC_GENERAL_ERR);
        return;
    };
    // The driver's choice first: it takes its locks, never under ours.
    let member = T::gsi_member(&data, job.port);
    let mut objects = dev.lock_objects();
    // A REQ or REP goes out through the member of the QP it speaks for.
    let member = note_cm::<T>(&data, &objects, mad, job.port, &job.ah).or(member);
    let tc = T::traffic_class(&data, job.ah.grh.traffic_class);
    match send(&mut objects, T::gsi_members(&data), member, job, tc) {
        Ok(()) => drop(objects),
        Err((job, e)) => {
            drop(objects);
            static NOT_SENT: RateLimit = RateLimit::new();
            if NOT_SENT.allow() {
                let (class, attr) = class_attr.unwrap_or((0, 0));
                pr_warn!(
                    "MAD class {:#x} attr {:#x} not sent: {:?}\n",
                    class,
                    attr,
                    e
                );
            }
            job.done(bindings::ib_wc_status_IB_WC_GENERAL_ERR);
        }
    }
}

/// If `mad` is a CM REQ or REP for a live RC QP of the device, the QP's
/// record notes the exchange; the QP's member slot, which must carry it.
/// Under the objects lock, which keeps the records alive.
fn note_cm<T: DeviceOps>(
    data: &<T::Data as kernel::types::ForeignOwnable>::Borrowed<'_>,
    _objects: &ObjectsGuard<'_>,
    mad: &[u8],
    port: u32,
    ah: &bindings::rdma_ah_attr,
) -> Option<usize> {
    let x = mad::cm_exchange(mad)?;
    let record = T::qpn_record(data, x.qpn)?;
    // SAFETY: the driver's QPN table holds the record of a live QP, under
    // the objects lock (`destroy_qp` takes the number out under it before
    // the record goes), which `_objects` holds.
    let record = unsafe { CmRecord::from_raw(record) };
    record.note(x, port, ah);
    Some(record.member())
}

/// Sends `job` through member `member`'s agent, with traffic class `tc`;
/// the job goes with the MAD (see [`sent`]), or comes back with the error.
fn send(
    objects: &mut ObjectsGuard<'_>,
    members: &GsiMembers,
    member: Option<usize>,
    job: KBox<GsiJob>,
    tc: u8,
) -> Result<(), (KBox<GsiJob>, Error)> {
    let Some(slot) = member else {
        return Err((job, super::enetdown()));
    };
    let Some(agent) = members.agent(slot) else {
        return Err((job, super::enetdown()));
    };
    let mut mav = bindings::rdma_ah_attr::default();
    let mgid = match objects.member_av(slot, &job.ah, &mut mav) {
        Ok(gid) => gid,
        Err(e) => return Err((job, e)),
    };
    mav.grh.traffic_class = tc;
    // The lock may have been dropped: is the agent still there?
    if members.agent(slot) != Some(agent) || !objects.member_can_send(slot, &mgid) {
        return Err((job, super::enetdown()));
    }
    let posted = post_mad(agent, &mut mav, job);
    drop(mgid);
    posted
}

/// Sends `mad`, a message of the failover channel, through member `slot`'s
/// agent to the GSI of the peer at `mav`, an address vector of the member
/// whose source GID entry is named by index only. Under the objects lock,
/// which keeps the agent. May sleep.
pub(super) fn send_channel(
    objects: &ObjectsGuard<'_>,
    dev: &Device,
    gsi: &GsiPorts,
    members: &GsiMembers,
    slot: usize,
    mav: &bindings::rdma_ah_attr,
    mad: &[u8; MAD_SIZE],
) -> Result {
    let agent = members.agent(slot).ok_or_else(super::enetdown)?;
    let gid = objects.member_gid(slot, mav.grh.sgid_index)?;
    // A refused packet would end the member's QP1 (see `member_can_send`).
    if !objects.member_can_send(slot, &gid) {
        return Err(super::enetdown());
    }
    // SAFETY: plain C data, copied bit for bit; its GID entry pointer is
    // replaced by the entry `gid` holds, which outlives the AH's creation
    // (the AH takes its own reference).
    let mut mav = unsafe { ptr::read(mav) };
    mav.grh.sgid_attr = ptr::from_ref(gid.attr());
    let job = KBox::new(
        GsiJob {
            work: Opaque::uninit(),
            // INVARIANT: the device and its table, which outlive the
            // member's agent that carries the job.
            dev: NonNull::from(dev).cast(),
            gsi: NonNull::from(gsi),
            port: 0,
            origin: Origin::Channel,
            // Unused by a channel job: `mav` is the member's already.
            ah: bindings::rdma_ah_attr::default(),
            remote_qpn: 1,
            pkey_index: 0,
            len: MAD_SIZE,
            mad: *mad,
        },
        GFP_KERNEL,
    )?;
    let posted = post_mad(agent, &mut mav, job).map_err(|(_, e)| e);
    drop(gid);
    posted
}

/// Posts `job`'s MAD through `agent` to the address `mav` (the member's);
/// the job goes with the MAD (see [`sent`]), or comes back with the error.
/// The caller keeps the agent live (the objects lock). May sleep.
fn post_mad(
    agent: NonNull<bindings::ib_mad_agent>,
    mav: &mut bindings::rdma_ah_attr,
    job: KBox<GsiJob>,
) -> Result<(), (KBox<GsiJob>, Error)> {
    // SAFETY: the agent is live under the objects lock (the member's
    // departure takes it out under the lock before releasing it); its QP
    // and PD are the member's QP1's.
    let mah = from_err_ptr(unsafe {
        bindings::rdma_create_ah(
            (*(*agent.as_ptr()).qp).pd,
            mav,
            bindings::rdma_create_ah_flags_RDMA_CREATE_AH_SLEEPABLE,
        )
    });
    let mah = match mah {
        Ok(mah) => mah,
        Err(e) => return Err((job, e)),
    };
    let destroy_ah = || {
        // SAFETY: created above, used by nothing else.
        unsafe {
            bindings::rdma_destroy_ah_user(
                mah,
                bindings::rdma_destroy_ah_flags_RDMA_DESTROY_AH_SLEEPABLE,
                ptr::null_mut(),
            )
        };
    };
    let hdr = bindings::IB_MGMT_MAD_HDR as usize;
    let data_len = job.len.saturating_sub(hdr);
    // SAFETY: as above; the sizes fit the job's MAD.
    let msg = from_err_ptr(unsafe {
        bindings::ib_create_send_mad(
            agent.as_ptr(),
            job.remote_qpn,
            job.pkey_index,
            0,
            hdr as i32,
            i32::try_from(data_len).unwrap_or(0),
            kernel::bindings::GFP_KERNEL,
            job.mad[0],
        )
    });
    let msg = match msg {
        Ok(msg) => msg,
        Err(e) => {
            destroy_ah();
            return Err((job, e));
        }
    };
    let len = job.len;
    let raw = KBox::into_raw(job);
    // SAFETY: `msg` is a send buffer of `len` bytes of MAD; the job rides
    // in its context until `sent`, or comes back below.
    let ret = unsafe {
        ptr::copy_nonoverlapping((*raw).mad.as_ptr(), (*msg).mad.cast::<u8>(), len);
        (*msg).ah = mah;
        (*msg).context[0] = raw.cast();
        bindings::ib_post_send_mad(msg, ptr::null_mut())
    };
    if ret != 0 {
        // SAFETY: not posted: the buffer and the job are ours again.
        let job = unsafe {
            bindings::ib_free_send_mad(msg);
            KBox::from_raw(raw)
        };
        destroy_ah();
        return Err((job, Error::from_errno(ret)));
    }
    Ok(())
}

/// A member's agent sent a MAD of QP1 (or gave up): so has QP1.
///
/// # Safety
///
/// Called by ib_mad as the send handler of a member's agent
/// ([`super::gsi_member`]), with a send buffer [`send`] posted.
pub(crate) unsafe fn sent(mwc: *mut bindings::ib_mad_send_wc) {
    // SAFETY: as the caller guarantees.
    let (msg, status) = unsafe { ((*mwc).send_buf, (*mwc).status) };
    // SAFETY: `send` put the job in the buffer's context and the AH in it;
    // both are ours again now.
    let job = unsafe {
        let job = KBox::from_raw((*msg).context[0].cast::<GsiJob>());
        bindings::rdma_destroy_ah_user((*msg).ah, 0, ptr::null_mut());
        bindings::ib_free_send_mad(msg);
        job
    };
    // A failed UD send on a member's QP1 is worth a line: rxe (6.12) then
    // leaves that QP1 in ERR, and the port takes no MAD again until the
    // device is re-created.
    static FAILED: RateLimit = RateLimit::new();
    if status != bindings::ib_wc_status_IB_WC_SUCCESS && FAILED.allow() {
        pr_warn!("a member's QP1 send failed: status {}\n", status);
    }
    job.done(status);
}
