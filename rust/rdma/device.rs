// SPDX-License-Identifier: GPL-2.0

//! RDMA devices: the `ib_device_ops` table a driver builds from a
//! [`DeviceOps`] implementation, as `kernel::net::phy` builds a
//! `phy_driver`, and the handles its verbs are given.

use core::{ffi::c_void, marker::PhantomData, mem::MaybeUninit, ptr::NonNull};

use kernel::{
    error::{from_result, VTABLE_DEFAULT_ERROR},
    ffi::c_int,
    prelude::*,
    types::{ForeignOwnable, Opaque},
};

use super::{
    bindings,
    cm::CmRecord,
    container::ObjectsLockGuard,
    cq::{CqSet, CqWindow, Polling, Wc},
    gsi::GsiPorts,
    gsi_member::GsiMembers,
    gsi_send::GsiWindow,
    member_device::{IbDevice, MemberDevice},
    mr::{MrTable, MrWindow},
    pd::{MemberPd, NewPd, Pd, PdSet},
    qp_path::{PathCounters, QpIds, QpWindow},
    qp_set::QpPaths,
    sysfs::Dir as SysfsDir,
};
use crate::policy::{
    caps::{DeviceCaps, Limit},
    port::IbMtu,
};

/// An RDMA device of this module, as one of its verbs sees it.
///
/// # Invariants
///
/// The wrapped `ib_device` is allocated, as the first field of a
/// [`super::container::Container`], with its ops table built from a
/// [`DeviceOps`] implementation, for as long as the reference is used.
#[repr(transparent)]
pub(crate) struct Device(Opaque<bindings::ib_device>);

impl Device {
    /// Creates a reference to the device a verb was called on.
    ///
    /// # Safety
    ///
    /// `ptr` must point at an allocated `ib_device` of this module that
    /// stays allocated for `'a`.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::ib_device) -> &'a Self {
        // CAST: `Device` is a transparent wrapper of `ib_device`.
        // INVARIANT: guaranteed by the caller.
        // SAFETY: the caller guarantees the pointer is valid for `'a`.
        unsafe { &*ptr.cast::<Self>() }
    }

    pub(super) fn raw(&self) -> *mut bindings::ib_device {
        self.0.get()
    }

    /// The number of ports (`phys_port_cnt`), set before registration.
    pub(crate) fn port_count(&self) -> u32 {
        // SAFETY: by the type invariant the device is allocated; the count
        // is set before it is registered and never changes after.
        unsafe { (*self.raw()).phys_port_cnt }
    }

    /// Takes the device's objects lock (see [`ObjectsGuard`]). May sleep.
    pub(crate) fn lock_objects(&self) -> ObjectsGuard<'_> {
        ObjectsGuard {
            dev: self,
            slots: Some(self.objects_lock().lock()),
        }
    }

    /// The largest CQ a consumer may create (`attrs.max_cqe`).
    pub(crate) fn max_cqe(&self) -> u32 {
        // SAFETY: by the type invariant the device is allocated; the
        // attributes are set at registration and never written after it.
        u32::try_from(unsafe { (*self.raw()).attrs.max_cqe }).unwrap_or(0)
    }

    /// The driver data that `T` keeps in the device, or `ENODEV` once the
    /// device is being freed.
    ///
    /// # Safety
    ///
    /// The device's driver data must be a `T` made foreign by
    /// `into_foreign()` and still owned by the device for `'a`.
    pub(super) unsafe fn driver_data<'a, T: ForeignOwnable>(&'a self) -> Result<T::Borrowed<'a>> {
        let data: *mut c_void = self.raw_driver_data();
        if data.is_null() {
            return Err(ENODEV);
        }
        // SAFETY: the caller guarantees that `data` is a live `T`.
        Ok(unsafe { T::borrow(data) })
    }

    /// The node GUID, in the network byte order the core keeps it in.
    pub(crate) fn node_guid_be(&self) -> u64 {
        // SAFETY: by the type invariant the device is allocated; the GUID is
        // set before registration and never written after it.
        unsafe { (*self.raw()).node_guid }
    }

    /// The Ethernet MTU of the netdev `port` is bound to, if it has one.
    pub(crate) fn port_netdev_mtu(&self, port: u32) -> Option<u32> {
        // SAFETY: by the type invariant the device is allocated; the core
        // returns the netdev with a reference taken, or NULL.
        let ndev = unsafe { bindings::ib_device_get_netdev(self.raw(), port) };
        if ndev.is_null() {
            return None;
        }
        // SAFETY: the reference keeps `ndev` alive until the put below.
        let mtu = unsafe { bindings::mrbond_rdma_netdev_mtu(ndev) };
        // SAFETY: drops the reference ib_device_get_netdev() took.
        unsafe { bindings::mrbond_rdma_dev_put(ndev) };
        Some(mtu)
    }

    /// The speed and width that the ethtool speed of `port`'s netdev maps
    /// to, if it has a netdev that reports one. Takes RTNL: a caller must
    /// hold no lock that is taken under RTNL.
    pub(crate) fn port_eth_speed(&self, port: u32) -> Option<EthSpeed> {
        let mut speed = 0u16;
        let mut width = 0u8;
        // SAFETY: by the type invariant the device is allocated; the
        // out-parameters are valid for the call.
        let ret = unsafe { bindings::ib_get_eth_speed(self.raw(), port, &mut speed, &mut width) };
        (ret == 0).then_some(EthSpeed { speed, width })
    }
}

/// A port speed and width (`enum ib_port_speed`, `enum ib_port_width`) as
/// the core derives them from an Ethernet link.
#[derive(Clone, Copy)]
pub(crate) struct EthSpeed {
    speed: u16,
    width: u8,
}

impl EthSpeed {
    /// SDR, 1X: the slowest a port reports.
    pub(crate) const SLOWEST: Self = Self {
        speed: bindings::ib_port_speed_IB_SPEED_SDR as u16,
        width: bindings::ib_port_width_IB_WIDTH_1X as u8,
    };
}

/// The attributes a `query_device` fills, zeroed by its adapter.
///
/// # Invariants
///
/// `0` is the `ib_device_attr` of the current `query_device` call.
pub(crate) struct DeviceAttr<'a>(&'a mut bindings::ib_device_attr);

impl DeviceAttr<'_> {
    /// Sets the limits, page sizes, capability flags and ACK delay of
    /// `caps`. Each limit was read from a field of the same type (see the
    /// readers of [`DeviceCaps`]) or lowered since, so each fits.
    pub(crate) fn set_caps(&mut self, caps: &DeviceCaps) {
        let int = |l: Limit| c_int::try_from(caps.get(l)).unwrap_or(c_int::MAX);
        let uint = |l: Limit| u32::try_from(caps.get(l)).unwrap_or(u32::MAX);
        let a = &mut *self.0;
        a.max_mr_size = caps.get(Limit::MaxMrSize);
        a.max_qp = int(Limit::MaxQp);
        a.max_qp_wr = int(Limit::MaxQpWr);
        a.max_send_sge = int(Limit::MaxSendSge);
        a.max_recv_sge = int(Limit::MaxRecvSge);
        a.max_sge_rd = int(Limit::MaxSgeRd);
        a.max_cq = int(Limit::MaxCq);
        a.max_cqe = int(Limit::MaxCqe);
        a.max_mr = int(Limit::MaxMr);
        a.max_pd = int(Limit::MaxPd);
        a.max_qp_rd_atom = int(Limit::MaxQpRdAtom);
        a.max_res_rd_atom = int(Limit::MaxResRdAtom);
        a.max_qp_init_rd_atom = int(Limit::MaxQpInitRdAtom);
        a.atomic_cap = uint(Limit::AtomicCap);
        a.masked_atomic_cap = uint(Limit::MaskedAtomicCap);
        a.max_ah = int(Limit::MaxAh);
        a.max_fast_reg_page_list_len = uint(Limit::MaxFastRegPageListLen);
        a.page_size_cap = caps.page_size_cap;
        a.device_cap_flags = caps.cap_flags;
        a.local_ca_ack_delay = caps.local_ca_ack_delay;
    }

    /// Adds `enum ib_device_cap_flags` bits.
    pub(crate) fn add_cap_flags(&mut self, flags: u64) {
        self.0.device_cap_flags |= flags;
    }

    /// Sets the `enum ib_kernel_cap_flags` bits.
    pub(crate) fn set_kernel_cap_flags(&mut self, flags: u64) {
        self.0.kernel_cap_flags = flags;
    }

    /// Sets how many SGEs an RDMA READ's local MR list may have; 0 makes
    /// rdma_rw register none.
    pub(crate) fn set_max_sgl_rd(&mut self, sges: u32) {
        self.0.max_sgl_rd = sges;
    }

    /// Sets the system image GUID, in network byte order.
    pub(crate) fn set_sys_image_guid_be(&mut self, guid: u64) {
        self.0.sys_image_guid = guid;
    }

    /// Sets the P_Key table size of every port.
    pub(crate) fn set_max_pkeys(&mut self, pkeys: u16) {
        self.0.max_pkeys = pkeys;
    }
}

/// The attributes a `query_port` fills, which the core has zeroed.
///
/// # Invariants
///
/// `0` is the core's `ib_port_attr` of the current `query_port` call.
pub(crate) struct PortAttr<'a>(&'a mut bindings::ib_port_attr);

impl PortAttr<'_> {
    /// Sets the logical and physical port state.
    pub(crate) fn set_active(&mut self, active: bool) {
        let attr = &mut *self.0;
        if active {
            attr.state = bindings::ib_port_state_IB_PORT_ACTIVE;
            attr.phys_state = bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_LINK_UP as u8;
        } else {
            attr.state = bindings::ib_port_state_IB_PORT_DOWN;
            attr.phys_state = bindings::ib_port_phys_state_IB_PORT_PHYS_STATE_DISABLED as u8;
        }
    }

    /// Sets the largest and the current path MTU.
    pub(crate) fn set_mtu(&mut self, max: IbMtu, active: IbMtu) {
        self.0.max_mtu = max.to_raw();
        self.0.active_mtu = active.to_raw();
    }

    /// Sets the GID and P_Key table sizes, as `get_port_immutable` has them.
    pub(crate) fn set_table_lens(&mut self, gids: u32, pkeys: u16) {
        self.0.gid_tbl_len = c_int::try_from(gids).unwrap_or(c_int::MAX);
        self.0.pkey_tbl_len = pkeys;
    }

    /// Marks the port as one whose connections the CM manages.
    pub(crate) fn set_cm_supported(&mut self) {
        self.0.port_cap_flags |= bindings::ib_port_capability_mask_bits_IB_PORT_CM_SUP;
    }

    /// Sets the largest message size.
    pub(crate) fn set_max_msg_size(&mut self, bytes: u32) {
        self.0.max_msg_sz = bytes;
    }

    /// Sets the port speed and width.
    pub(crate) fn set_speed(&mut self, speed: EthSpeed) {
        self.0.active_speed = speed.speed;
        self.0.active_width = speed.width;
    }
}

/// What `get_port_immutable` reports of a RoCE v2 port: read once, before
/// the core's caches exist.
pub(crate) struct RoceV2Port {
    /// GID table entries.
    pub(crate) gid_table_len: u32,
    /// P_Key table entries.
    pub(crate) pkey_table_len: u16,
}

/// The link layer of a port.
pub(crate) enum LinkLayer {
    /// Ethernet: RoCE.
    Ethernet,
}

/// The device's objects lock, held ("mrbond:vdev-objects", see
/// [`super::container`]): member objects are made and destroyed, and members
/// attached and detached, under it. Inside it nest the object sets' locks
/// and the members' own verbs, never the driver's placement.
///
/// # Invariants
///
/// `slots` is `Some` but inside [`ObjectsGuard::unlocked`].
pub(crate) struct ObjectsGuard<'a> {
    dev: &'a Device,
    slots: Option<ObjectsLockGuard<'a>>,
}

/// A member's device, as the objects lock keeps it: for no longer than the
/// lock is held.
pub(crate) struct LockedMember<'g> {
    dev: MemberDevice,
    _guard: PhantomData<&'g ObjectsGuard<'g>>,
}

impl core::ops::Deref for LockedMember<'_> {
    type Target = MemberDevice;

    fn deref(&self) -> &MemberDevice {
        &self.dev
    }
}

impl ObjectsGuard<'_> {
    /// Member `slot`'s device and port, while it is attached.
    pub(crate) fn member(&self, slot: usize) -> Option<(LockedMember<'_>, u32)> {
        let (dev, port) = self.slots.as_ref()?.get(slot)?;
        // SAFETY: the slot holds a registration reference, which it keeps
        // under the objects lock (the result cannot outlive it); the
        // member's detach, under that lock, frees the member PDs, CQs and
        // QPs made on it before it empties the slot.
        let dev = unsafe { MemberDevice::from_raw(dev.as_non_null()) };
        Some((
            LockedMember {
                dev,
                _guard: PhantomData,
            },
            port,
        ))
    }

    /// Whether a MAD from source GID `gid` can leave through member
    /// `slot`: its port is active, and the netdev the GID is on (and its
    /// real device under a VLAN) can transmit. rxe (6.12) moves QP1 to ERR
    /// for good when the IP stack refuses one of its packets, and the port
    /// then takes no CM MAD again: a noop qdisc refuses every packet, and a
    /// device has one from the moment its carrier drops until it is
    /// activated again after the carrier is back, which the port state and
    /// the carrier bits lead or lag. ib_cm retries a MAD refused here.
    pub(crate) fn member_can_send(&self, slot: usize, gid: &GidAttrRef) -> bool {
        let Some((member, port)) = self.member(slot) else {
            return false;
        };
        let mut state = bindings::ib_port_state_IB_PORT_NOP;
        // SAFETY: the member device is registered under the lock.
        let ret = unsafe { bindings::ib_get_cached_port_state(member.as_raw(), port, &mut state) };
        // SAFETY: the entry is held by `gid`.
        ret == 0
            && state == bindings::ib_port_state_IB_PORT_ACTIVE
            && unsafe { bindings::mrbond_rdma_gid_can_xmit(gid.attr()) }
    }

    /// Runs `f` with the lock dropped, and takes it again. `&mut`: no
    /// [`LockedMember`] lives across it.
    pub(super) fn unlocked<R>(&mut self, f: impl FnOnce() -> R) -> R {
        drop(self.slots.take());
        let r = f();
        // INVARIANT: held again before the guard can be used or dropped.
        self.slots = Some(self.dev.objects_lock().lock());
        r
    }

    /// Member `slot` hosts objects on `dev` from now on; `None` empties
    /// it. The device it held before.
    ///
    /// # Safety
    ///
    /// When emptying the slot, every object made on its device must be
    /// gone (a [`MemberDevice`] lent out by [`ObjectsGuard::member`] or the
    /// MR table is valid only while the slot holds the device).
    pub(super) unsafe fn set_member(
        &mut self,
        slot: usize,
        dev: Option<IbDevice>,
    ) -> Result<Option<IbDevice>> {
        self.slots.as_mut().ok_or(EINVAL)?.set(slot, dev)
    }
}

/// A GID table entry, held: put when dropped.
///
/// # Invariants
///
/// `0` is an entry with a reference this handle owns.
pub(crate) struct GidAttrRef(NonNull<bindings::ib_gid_attr>);

impl GidAttrRef {
    /// Owns the reference to `attr` that the caller took.
    ///
    /// # Safety
    ///
    /// `attr` must be a GID table entry with a reference the caller gives
    /// to the handle.
    pub(super) unsafe fn from_raw(attr: NonNull<bindings::ib_gid_attr>) -> Self {
        // INVARIANT: as the caller guarantees.
        Self(attr)
    }

    /// The entry, which the reference keeps.
    pub(crate) fn attr(&self) -> &bindings::ib_gid_attr {
        // SAFETY: by the type invariant the entry is held while `self` is.
        unsafe { self.0.as_ref() }
    }
}

impl Drop for GidAttrRef {
    fn drop(&mut self) {
        // SAFETY: by the type invariant the reference is ours to put.
        unsafe { bindings::rdma_put_gid_attr(self.0.as_ptr()) };
    }
}

/// The verbs of a device, by group, and what they need of its driver (see
/// [`OpsTable`]). Verbs that may sleep say so.
#[vtable]
pub(crate) trait DeviceOps {
    /// The driver data the device holds until its `.dealloc_driver`.
    type Data: ForeignOwnable;

    /// The driver's data in each of the device's PDs (see [`super::pd::Pd`]).
    type PdData: Sync;

    /// The set of the device's live PDs, which the PD adapters keep.
    fn pds<'a>(data: &'a <Self::Data as ForeignOwnable>::Borrowed<'_>) -> &'a PdSet<Self::PdData>;

    /// `alloc_pd` for a kernel caller: whether the PD may exist. Its data
    /// is then [`DeviceOps::pd_data`]'s, dropped by `dealloc_pd`. May
    /// sleep.
    fn alloc_pd(
        data: <Self::Data as ForeignOwnable>::Borrowed<'_>,
        dev: &Device,
        pd: &NewPd<'_>,
    ) -> Result;

    /// The initialiser of a new PD's data.
    fn pd_data() -> impl PinInit<Self::PdData, Error>;

    /// Member `slot` is going away, its QPs and MRs gone already: `pd`
    /// frees its object there. Under the objects lock.
    fn member_gone(pd: &Pd<Self::PdData>, slot: usize);

    /// The set of the device's live CQs, which the CQ adapters keep.
    fn cqs<'a>(data: &'a <Self::Data as ForeignOwnable>::Borrowed<'_>) -> &'a CqSet;

    /// Runs inside a race window of the CQ verbs, for fault injection in
    /// test builds; may sleep.
    fn cq_window(_window: CqWindow) {}

    /// Runs inside a race window of the QPs (see [`QpWindow`]), for fault
    /// injection in test builds; may sleep.
    fn qp_window(_window: QpWindow) {}

    /// `create_qp` of an RC QP of `pd`: the member slot it goes to, for a
    /// connection on `port` (0: none known). Takes the driver's locks,
    /// never under the objects lock. May sleep.
    fn place_qp(
        data: &<Self::Data as ForeignOwnable>::Borrowed<'_>,
        pd: &Pd<Self::PdData>,
        port: u32,
    ) -> Result<usize>;

    /// The current task created a QP of `pd` on member `slot`.
    fn qp_placed(pd: &Pd<Self::PdData>, slot: usize);

    /// How many QPNs the device holds (live or in quarantine), after
    /// dropping the quarantines that are over: the most collisions a member
    /// can cause. Under the objects lock.
    fn qpns_held(data: &<Self::Data as ForeignOwnable>::Borrowed<'_>) -> usize;

    /// Claims `qpn` for a new RC QP whose proxy record is `record`;
    /// `EBUSY` if the number is live or in quarantine. Under the objects
    /// lock.
    fn claim_qpn(
        data: &<Self::Data as ForeignOwnable>::Borrowed<'_>,
        qpn: u32,
        record: &CmRecord,
    ) -> Result;

    /// Gives back a number claimed by a QP whose creation failed.
    fn release_qpn(data: &<Self::Data as ForeignOwnable>::Borrowed<'_>, qpn: u32);

    /// `qpn`'s QP is destroyed; `aborted`: the device ended its connection
    /// exchange. Under the objects lock.
    fn quarantine_qpn(data: &<Self::Data as ForeignOwnable>::Borrowed<'_>, qpn: u32, aborted: bool);

    /// The traffic class of a member AV whose consumer asked for
    /// `requested` (the driver's ECN and DSCP settings). Any context.
    fn traffic_class(data: &<Self::Data as ForeignOwnable>::Borrowed<'_>, requested: u8) -> u8;

    /// The device's QP1 of each port (see [`super::gsi`]).
    fn gsi_ports<'a>(data: &'a <Self::Data as ForeignOwnable>::Borrowed<'_>) -> &'a GsiPorts;

    /// The device's agents and listeners on each member (see
    /// [`super::gsi_member`]).
    fn gsi_members<'a>(data: &'a <Self::Data as ForeignOwnable>::Borrowed<'_>) -> &'a GsiMembers;

    /// The member slot whose QP1 carries a MAD of `port` that speaks for
    /// no QP of the device; `None` if no member may. Takes the driver's
    /// locks, never under the objects lock. Process context.
    fn gsi_member(data: &<Self::Data as ForeignOwnable>::Borrowed<'_>, port: u32) -> Option<usize>;

    /// The record of the RC QP whose number `qpn` is live
    /// ([`CmRecord::as_raw`], as [`DeviceOps::claim_qpn`] was given it).
    /// Under the objects lock.
    fn qpn_record(
        data: &<Self::Data as ForeignOwnable>::Borrowed<'_>,
        qpn: u32,
    ) -> Option<NonNull<c_void>>;

    /// Runs inside a race window of QP1's sends (see [`GsiWindow`]), for
    /// fault injection in test builds; may sleep.
    fn gsi_window(_window: GsiWindow) {}

    /// The device's RC QP data paths: by id, as a set, and their counters.
    fn qp_ids<'a>(data: &'a <Self::Data as ForeignOwnable>::Borrowed<'_>) -> &'a QpIds;
    fn qp_paths<'a>(data: &'a <Self::Data as ForeignOwnable>::Borrowed<'_>) -> &'a QpPaths;
    fn path_counters<'a>(
        data: &'a <Self::Data as ForeignOwnable>::Borrowed<'_>,
    ) -> &'a PathCounters;

    /// `poll_cq`: makes a member's completion the device's (its QP, the
    /// consumer's `wr_id`, [`super::qp_path::translate_wc`]); false to drop it
    /// (a completion of a WR the device already flushed, or of a QP
    /// destroyed meanwhile). Any context, under the CQ's poll lock.
    fn translate_wc(
        data: &<Self::Data as ForeignOwnable>::Borrowed<'_>,
        wc: &mut Wc,
        polling: &Polling<'_>,
    ) -> bool;

    /// The device's MRs, which the MR adapters keep (see [`super::mr`]).
    fn mrs<'a>(data: &'a <Self::Data as ForeignOwnable>::Borrowed<'_>) -> &'a MrTable;

    /// `alloc_mr`: the member slot a new FRWR MR of `pd` binds to, for
    /// the current task. May sleep.
    fn mr_member(pd: &Pd<Self::PdData>) -> Result<usize>;

    /// `f` applied to `pd`'s object on member `slot`, whose device is
    /// `dev`, made first if there is none. May sleep.
    fn with_member_pd<R>(
        pd: &Pd<Self::PdData>,
        slot: usize,
        dev: &MemberDevice,
        f: impl FnOnce(&MemberPd) -> Result<R>,
    ) -> Result<R>;

    /// Runs inside a race window of the MR verbs, for fault injection in
    /// test builds; must not sleep in [`MrWindow::MemberMap`].
    fn mr_window(_window: MrWindow) {}

    /// sysfs show of file `id` of directory `dir` (see [`super::sysfs`]):
    /// the bytes written to `page`, or `-errno`. May sleep.
    fn sysfs_show(
        _data: <Self::Data as ForeignOwnable>::Borrowed<'_>,
        _dir: SysfsDir,
        _id: u32,
        _page: &mut [u8],
    ) -> isize {
        EINVAL.to_errno() as isize
    }

    /// sysfs store of `input` to file `id` of directory `dir`, by a caller
    /// with `CAP_NET_ADMIN`. May sleep.
    fn sysfs_store(
        _data: <Self::Data as ForeignOwnable>::Borrowed<'_>,
        _dir: SysfsDir,
        _id: u32,
        _input: &[u8],
    ) -> Result {
        Err(EINVAL)
    }

    /// `query_device`: the device's attributes, for a kernel caller (the
    /// core at registration, which keeps the copy ULPs read). May sleep.
    fn query_device(
        _data: <Self::Data as ForeignOwnable>::Borrowed<'_>,
        _dev: &Device,
        _attr: &mut DeviceAttr<'_>,
    ) -> Result {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }

    /// `query_port`: the attributes of `port`. May sleep.
    fn query_port(
        _data: <Self::Data as ForeignOwnable>::Borrowed<'_>,
        _dev: &Device,
        _port: u32,
        _attr: &mut PortAttr<'_>,
    ) -> Result {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }

    /// `get_port_immutable`: what `port` reports for the device's lifetime.
    fn get_port_immutable(_dev: &Device, _port: u32) -> Result<RoceV2Port> {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }

    /// `get_link_layer`: the link layer of `port`.
    fn get_link_layer(_dev: &Device, _port: u32) -> LinkLayer {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }

    /// `query_pkey`: the P_Key at `index` of `port`'s table.
    fn query_pkey(_dev: &Device, _port: u32, _index: u16) -> Result<u16> {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }

    /// `process_mad`: a MAD for `port` — one the core's sysfs sends to read
    /// `ports/N/counters/` (whose directory exists only with this verb),
    /// or one QP1 received, offered to the driver first — and the reply,
    /// if the driver answers it; `None` hands it on as before. May sleep.
    fn process_mad(
        _data: <Self::Data as ForeignOwnable>::Borrowed<'_>,
        _port: u32,
        _mad: &[u8; super::gsi::MAD_SIZE],
    ) -> Option<[u8; super::gsi::MAD_SIZE]> {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }

    /// The counters of every port (`rdma statistic`) and of the device
    /// (port 0, which only sysfs `hw_counters/` shows), in the order
    /// [`DeviceOps::get_hw_stats`] fills them; used only with it.
    const HW_STATS: &'static [StatDesc] = &[];

    /// `get_hw_stats`: refreshes every counter of `port` (0: the device),
    /// `values[i]` that of `HW_STATS[i]`. Called with the core's stats
    /// lock held; may sleep.
    fn get_hw_stats(
        _data: <Self::Data as ForeignOwnable>::Borrowed<'_>,
        _dev: &Device,
        _port: u32,
        _values: &mut [u64],
    ) -> Result {
        kernel::build_error(VTABLE_DEFAULT_ERROR)
    }
}

/// The descriptor of a counter (`struct rdma_stat_desc`): its name in
/// `rdma statistic` and sysfs `hw_counters/`.
#[repr(transparent)]
pub(crate) struct StatDesc(bindings::rdma_stat_desc);

// SAFETY: never written after it is built; its only pointer is a static
// string.
unsafe impl Sync for StatDesc {}

impl StatDesc {
    /// A counter named `name`, without flags.
    pub(crate) const fn new(name: &'static core::ffi::CStr) -> Self {
        // SAFETY: all zeroes is a valid `rdma_stat_desc`: no flags, no
        // private data.
        let mut desc: bindings::rdma_stat_desc = unsafe { MaybeUninit::zeroed().assume_init() };
        desc.name = name.as_ptr().cast();
        Self(desc)
    }
}

/// The C entry points of a [`DeviceOps`] implementation: each turns the
/// core's raw arguments into the handles above.
pub(super) struct Adapter<T: DeviceOps>(PhantomData<T>);

impl<T: DeviceOps> Adapter<T> {
    /// Refuses user data: this layer has no user verbs (no ucontext), so
    /// only a kernel caller, with no udata or an empty one, gets an answer.
    ///
    /// # Safety
    ///
    /// Called by the RDMA core on a device whose table is `T`'s, whose
    /// driver data is a `T::Data`, with `attr` and `udata` of this call.
    unsafe extern "C" fn query_device(
        ibdev: *mut bindings::ib_device,
        attr: *mut bindings::ib_device_attr,
        udata: *mut bindings::ib_udata,
    ) -> c_int {
        from_result(|| {
            // SAFETY: `udata` is NULL or the core's, valid for the call.
            if let Some(udata) = unsafe { udata.as_ref() } {
                if udata.inlen != 0 || udata.outlen != 0 {
                    return Err(EINVAL);
                }
            }
            // SAFETY: the core calls a verb on an allocated device.
            let dev = unsafe { Device::from_raw(ibdev) };
            // SAFETY: the device is `T`'s and holds its data until its
            // `.dealloc_driver`, after its last verb.
            let data = unsafe { dev.driver_data::<T::Data>() }?;
            // SAFETY: `attr` is this call's, valid for writes and unaliased;
            // all zeroes is a valid `ib_device_attr`.
            let attr = unsafe {
                attr.write(MaybeUninit::zeroed().assume_init());
                &mut *attr
            };
            // INVARIANT: `attr` is this call's.
            T::query_device(data, dev, &mut DeviceAttr(attr))?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the RDMA core on a device whose table is `T`'s, whose
    /// driver data is a `T::Data`, with the zeroed `attr` of this call.
    unsafe extern "C" fn query_port(
        ibdev: *mut bindings::ib_device,
        port: u32,
        attr: *mut bindings::ib_port_attr,
    ) -> c_int {
        from_result(|| {
            // SAFETY: the core calls a verb on an allocated device.
            let dev = unsafe { Device::from_raw(ibdev) };
            // SAFETY: the device is `T`'s and holds its data until its
            // `.dealloc_driver`, after its last verb.
            let data = unsafe { dev.driver_data::<T::Data>() }?;
            // INVARIANT: `attr` is this call's, valid and unaliased for it.
            // SAFETY: as the core guarantees.
            let mut attr = PortAttr(unsafe { &mut *attr });
            T::query_port(data, dev, port, &mut attr)?;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the RDMA core on a device whose table is `T`'s, with the
    /// `immutable` of this call.
    unsafe extern "C" fn get_port_immutable(
        ibdev: *mut bindings::ib_device,
        port: u32,
        immutable: *mut bindings::ib_port_immutable,
    ) -> c_int {
        from_result(|| {
            // SAFETY: the core calls a verb on an allocated device.
            let dev = unsafe { Device::from_raw(ibdev) };
            let roce = T::get_port_immutable(dev, port)?;
            // SAFETY: `immutable` is this call's, valid for writes.
            let immutable = unsafe { &mut *immutable };
            immutable.core_cap_flags = bindings::RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
            immutable.gid_tbl_len = c_int::try_from(roce.gid_table_len)?;
            immutable.pkey_tbl_len = c_int::from(roce.pkey_table_len);
            immutable.max_mad_size = bindings::IB_MGMT_MAD_SIZE;
            Ok(0)
        })
    }

    /// # Safety
    ///
    /// Called by the RDMA core on a device whose table is `T`'s.
    unsafe extern "C" fn get_link_layer(
        ibdev: *mut bindings::ib_device,
        port: u32,
    ) -> bindings::rdma_link_layer {
        // SAFETY: the core calls a verb on an allocated device.
        let dev = unsafe { Device::from_raw(ibdev) };
        match T::get_link_layer(dev, port) {
            LinkLayer::Ethernet => bindings::rdma_link_layer_IB_LINK_LAYER_ETHERNET,
        }
    }

    /// # Safety
    ///
    /// Called by the RDMA core on a device whose table is `T`'s, with the
    /// `pkey` of this call.
    unsafe extern "C" fn query_pkey(
        ibdev: *mut bindings::ib_device,
        port: u32,
        index: u16,
        pkey: *mut u16,
    ) -> c_int {
        from_result(|| {
            // SAFETY: the core calls a verb on an allocated device.
            let dev = unsafe { Device::from_raw(ibdev) };
            let value = T::query_pkey(dev, port, index)?;
            // SAFETY: `pkey` is this call's, valid for writes.
            unsafe { pkey.write(value) };
            Ok(0)
        })
    }

    /// `IB_MAD_RESULT_SUCCESS`, with `IB_MAD_RESULT_REPLY` when `T` wrote
    /// a reply into `out_mad`.
    ///
    /// # Safety
    ///
    /// Called by the RDMA core on a device whose table is `T`'s, whose
    /// driver data is a `T::Data`, with `in_mad` a readable MAD and
    /// `out_mad` a writable buffer of `*out_mad_size` bytes (or NULLs).
    #[allow(clippy::too_many_arguments)]
    unsafe extern "C" fn process_mad(
        ibdev: *mut bindings::ib_device,
        _flags: c_int,
        port: u32,
        _in_wc: *const bindings::ib_wc,
        _in_grh: *const bindings::ib_grh,
        in_mad: *const bindings::ib_mad,
        out_mad: *mut bindings::ib_mad,
        out_mad_size: *mut usize,
        _out_mad_pkey_index: *mut u16,
    ) -> c_int {
        // What the MAD layer does without the verb: pass the MAD on.
        let pass = bindings::ib_mad_result_IB_MAD_RESULT_SUCCESS as c_int;
        if in_mad.is_null() || out_mad.is_null() || out_mad_size.is_null() {
            return pass;
        }
        // SAFETY: the core calls a verb on an allocated device.
        let dev = unsafe { Device::from_raw(ibdev) };
        // SAFETY: the device is `T`'s and holds its data until its
        // `.dealloc_driver`, after its last verb.
        let Ok(data) = (unsafe { dev.driver_data::<T::Data>() }) else {
            return pass;
        };
        // SAFETY: the caller guarantees `in_mad` is a readable MAD.
        let request = super::ib_mad::bytes_of(unsafe { &*in_mad });
        let Some(reply) = T::process_mad(data, port, &request) else {
            return pass;
        };
        // SAFETY: the caller guarantees the size is readable.
        if unsafe { *out_mad_size } < core::mem::size_of::<bindings::ib_mad>() {
            return pass;
        }
        // SAFETY: `out_mad` is writable for at least one `ib_mad` (checked
        // above), this call's.
        unsafe { out_mad.write(super::ib_mad::to_ib_mad(&reply)) };
        pass | bindings::ib_mad_result_IB_MAD_RESULT_REPLY as c_int
    }

    /// The counters `T` keeps, for one port or the device.
    fn alloc_hw_stats() -> *mut bindings::rdma_hw_stats {
        let Ok(count) = c_int::try_from(T::HW_STATS.len()) else {
            return core::ptr::null_mut();
        };
        // SAFETY: `HW_STATS` is a static array of `count` descriptors, which
        // the core keeps a pointer to for the device's lifetime.
        unsafe {
            bindings::rdma_alloc_hw_stats_struct(
                T::HW_STATS.as_ptr().cast(),
                count,
                bindings::RDMA_HW_STATS_DEFAULT_LIFESPAN as _,
            )
        }
    }

    /// # Safety
    ///
    /// Called by the RDMA core on a device whose table is `T`'s.
    unsafe extern "C" fn alloc_hw_port_stats(
        _ibdev: *mut bindings::ib_device,
        _port: u32,
    ) -> *mut bindings::rdma_hw_stats {
        Self::alloc_hw_stats()
    }

    /// # Safety
    ///
    /// Called by the RDMA core on a device whose table is `T`'s.
    unsafe extern "C" fn alloc_hw_device_stats(
        _ibdev: *mut bindings::ib_device,
    ) -> *mut bindings::rdma_hw_stats {
        Self::alloc_hw_stats()
    }

    /// Refreshes every counter and returns how many: nldev prints only the
    /// returned count, and sysfs refuses any other at registration.
    ///
    /// # Safety
    ///
    /// Called by the RDMA core on a device whose table is `T`'s, whose
    /// driver data is a `T::Data`, with `stats` from `alloc_hw_stats()` and
    /// its lock held.
    unsafe extern "C" fn get_hw_stats(
        ibdev: *mut bindings::ib_device,
        stats: *mut bindings::rdma_hw_stats,
        port: u32,
        _index: c_int,
    ) -> c_int {
        from_result(|| {
            // SAFETY: the core calls a verb on an allocated device.
            let dev = unsafe { Device::from_raw(ibdev) };
            // SAFETY: the device is `T`'s and holds its data until its
            // `.dealloc_driver`, after its last verb.
            let data = unsafe { dev.driver_data::<T::Data>() }?;
            // SAFETY: `stats` is allocated with `num_counters` values, and
            // the stats lock the core holds makes them this call's.
            let values = unsafe {
                let count = usize::try_from((*stats).num_counters)?.min(T::HW_STATS.len());
                (*stats).value.as_mut_slice(count)
            };
            T::get_hw_stats(data, dev, port, values)?;
            Ok(c_int::try_from(values.len())?)
        })
    }
}

/// The `ib_device_ops` table of a [`DeviceOps`] implementation `T`:
/// every verb of `T`, the object sizes of this layer, the owner and
/// `.dealloc_driver` (see [`super::container::dealloc_driver`]). Without every
/// one of the 17 ops that `ib_device_check_mandatory()` checks, a device
/// registers but `kverbs_provider` is false and no kernel ULP ever sees it.
/// No `drain_sq`/`drain_rq`: the core's drain (ERR, then a marker WR) is
/// right, since a post to a QP in ERR always completes.
#[repr(transparent)]
pub(crate) struct OpsTable<T: DeviceOps>(bindings::ib_device_ops, PhantomData<T>);

// SAFETY: the table is never written after it is built; its pointers are
// the owner module, functions of this module, or NULL.
unsafe impl<T: DeviceOps> Sync for OpsTable<T> {}

impl<T: DeviceOps> OpsTable<T> {
    /// The table for `T`, whose module is `owner` (`__this_module`).
    pub(crate) const fn new(owner: *mut kernel::bindings::module) -> Self {
        Self(
            bindings::ib_device_ops {
                owner,
                // Never a real driver's id: those container_of our device.
                driver_id: bindings::rdma_driver_id_RDMA_DRIVER_UNKNOWN,
                dealloc_driver: Some(super::container::dealloc_driver::<T>),
                query_device: if T::HAS_QUERY_DEVICE {
                    Some(Adapter::<T>::query_device)
                } else {
                    None
                },
                query_port: if T::HAS_QUERY_PORT {
                    Some(Adapter::<T>::query_port)
                } else {
                    None
                },
                get_port_immutable: if T::HAS_GET_PORT_IMMUTABLE {
                    Some(Adapter::<T>::get_port_immutable)
                } else {
                    None
                },
                get_link_layer: if T::HAS_GET_LINK_LAYER {
                    Some(Adapter::<T>::get_link_layer)
                } else {
                    None
                },
                query_pkey: if T::HAS_QUERY_PKEY {
                    Some(Adapter::<T>::query_pkey)
                } else {
                    None
                },
                process_mad: if T::HAS_PROCESS_MAD {
                    Some(Adapter::<T>::process_mad)
                } else {
                    None
                },
                alloc_hw_port_stats: if T::HAS_GET_HW_STATS {
                    Some(Adapter::<T>::alloc_hw_port_stats)
                } else {
                    None
                },
                alloc_hw_device_stats: if T::HAS_GET_HW_STATS {
                    Some(Adapter::<T>::alloc_hw_device_stats)
                } else {
                    None
                },
                get_hw_stats: if T::HAS_GET_HW_STATS {
                    Some(Adapter::<T>::get_hw_stats)
                } else {
                    None
                },
                alloc_pd: Some(Adapter::<T>::alloc_pd),
                dealloc_pd: Some(Adapter::<T>::dealloc_pd),
                size_ib_pd: Adapter::<T>::PD_SIZE,
                get_dma_mr: Some(Adapter::<T>::get_dma_mr),
                alloc_mr: Some(Adapter::<T>::alloc_mr),
                reg_user_mr: Some(Adapter::<T>::reg_user_mr),
                dereg_mr: Some(Adapter::<T>::dereg_mr),
                map_mr_sg: Some(Adapter::<T>::map_mr_sg),
                create_cq: Some(Adapter::<T>::create_cq),
                destroy_cq: Some(Adapter::<T>::destroy_cq),
                poll_cq: Some(Adapter::<T>::poll_cq),
                req_notify_cq: Some(Adapter::<T>::req_notify_cq),
                size_ib_cq: Adapter::<T>::CQ_SIZE,
                create_ah: Some(Adapter::<T>::create_ah),
                destroy_ah: Some(Adapter::<T>::destroy_ah),
                size_ib_ah: Adapter::<T>::AH_SIZE,
                create_qp: Some(Adapter::<T>::create_qp),
                modify_qp: Some(Adapter::<T>::modify_qp),
                query_qp: Some(Adapter::<T>::query_qp),
                fill_res_qp_entry: Some(Adapter::<T>::fill_res_qp_entry),
                destroy_qp: Some(Adapter::<T>::destroy_qp),
                post_send: Some(Adapter::<T>::post_send),
                post_recv: Some(Adapter::<T>::post_recv),
                size_ib_qp: Adapter::<T>::QP_SIZE,
                // SAFETY: all zeroes is a valid `ib_device_ops`: no verb.
                ..unsafe { MaybeUninit::<bindings::ib_device_ops>::zeroed().assume_init() }
            },
            PhantomData,
        )
    }

    /// The table, for `ib_set_device_ops()`.
    pub(super) fn as_raw(&self) -> *const bindings::ib_device_ops {
        &self.0
    }
}
