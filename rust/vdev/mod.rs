// SPDX-License-Identifier: GPL-2.0

//! The vdev's verbs (its ops table `mrbond_rs_dev_ops`, exported by
//! `ffi::entry`, built by `rdma::device::OpsTable`): each verb answered by the
//! module of its object, `attrs` for the device, `ports` for the
//! ports and counters, `pd` for the PDs; the MRs, CQs and QPs are the
//! layer's (`rdma::mr`, `rdma::cq`, `rdma::qp`), an MR bound to the member
//! `pd` names, a QP placed by the bond and numbered from its QPN table
//! (`qpns`).

#![deny(unsafe_code)]

use core::{ffi::c_void, ptr::NonNull};

use kernel::{prelude::*, sync::Arc, sync::ArcBorrow};

use crate::{
    ctl::bond::Bond,
    ffi::ProxyQp,
    inject::{inject, inject_any, Inject},
    policy::qpn::QpEnd,
    rdma::{
        cm::CmRecord,
        cq::{CqSet, CqWindow, Polling, Wc},
        device::{Device, DeviceAttr, DeviceOps, LinkLayer, PortAttr, RoceV2Port, StatDesc},
        gsi::GsiPorts,
        gsi_member::GsiMembers,
        gsi_send::GsiWindow,
        member_device::MemberDevice,
        mr::{MrTable, MrWindow},
        pd::{MemberPd, NewPd, Pd, PdSet},
        qp_path::{self, PathCounters, QpIds, QpWindow},
        qp_set::QpPaths,
        sysfs::Dir as SysfsDir,
    },
};

pub(crate) mod attrs;
pub(crate) mod handle;
pub(crate) mod pd;
pub(crate) mod ports;
pub(crate) mod qpns;

use pd::{self as vdev_pd, VdevPd};

/// The verbs of every vdev that Rust implements.
pub(crate) struct VdevVerbs;

#[vtable]
impl DeviceOps for VdevVerbs {
    type Data = Arc<Bond>;
    type PdData = VdevPd;

    fn sysfs_show(bond: ArcBorrow<'_, Bond>, dir: SysfsDir, id: u32, page: &mut [u8]) -> isize {
        crate::ctl::sysfs::show(&bond, dir, id, page)
    }

    fn sysfs_store(bond: ArcBorrow<'_, Bond>, dir: SysfsDir, id: u32, input: &[u8]) -> Result {
        crate::ctl::sysfs::store(&bond, dir, id, input)
    }

    fn query_device(bond: ArcBorrow<'_, Bond>, dev: &Device, attr: &mut DeviceAttr<'_>) -> Result {
        attrs::report(&bond.caps, dev, attr);
        Ok(())
    }

    fn query_port(
        bond: ArcBorrow<'_, Bond>,
        dev: &Device,
        port: u32,
        attr: &mut PortAttr<'_>,
    ) -> Result {
        ports::query_port(&bond, dev, port, attr);
        Ok(())
    }

    fn get_port_immutable(_dev: &Device, _port: u32) -> Result<RoceV2Port> {
        Ok(ports::immutable())
    }

    /// A vdev of node type IB_CA would otherwise be reported InfiniBand.
    fn get_link_layer(_dev: &Device, _port: u32) -> LinkLayer {
        LinkLayer::Ethernet
    }

    fn query_pkey(_dev: &Device, _port: u32, index: u16) -> Result<u16> {
        ports::pkey(index)
    }

    fn process_mad(
        bond: ArcBorrow<'_, Bond>,
        port: u32,
        mad: &[u8; crate::rdma::gsi::MAD_SIZE],
    ) -> Option<[u8; crate::rdma::gsi::MAD_SIZE]> {
        ports::process_mad(&bond, port, mad)
    }

    const HW_STATS: &'static [StatDesc] = &ports::PORT_COUNTERS;

    fn get_hw_stats(
        bond: ArcBorrow<'_, Bond>,
        _dev: &Device,
        port: u32,
        values: &mut [u64],
    ) -> Result {
        bond.stats(port, values);
        Ok(())
    }

    fn pds<'a>(bond: &'a ArcBorrow<'_, Bond>) -> &'a PdSet<VdevPd> {
        &bond.pds
    }

    fn alloc_pd(_bond: ArcBorrow<'_, Bond>, _dev: &Device, pd: &NewPd<'_>) -> Result {
        vdev_pd::may_alloc(pd)
    }

    fn pd_data() -> impl PinInit<VdevPd, Error> {
        VdevPd::new()
    }

    fn member_gone(pd: &Pd<VdevPd>, slot: usize) {
        pd.data().detach(slot);
    }

    fn cqs<'a>(bond: &'a ArcBorrow<'_, Bond>) -> &'a CqSet {
        &bond.cqs
    }

    fn cq_window(window: CqWindow) {
        match window {
            CqWindow::Destroy => inject(Inject::CqDestroy),
            CqWindow::KickWork => inject(Inject::CqKickWork),
        }
    }

    fn qp_window(window: QpWindow) {
        match window {
            QpWindow::FatalWork => inject(Inject::QpFatalWork),
            QpWindow::DetachQp => inject(Inject::DetachQp),
        }
    }

    fn place_qp(bond: &ArcBorrow<'_, Bond>, pd: &Pd<VdevPd>, port: u32) -> Result<usize> {
        bond.place_qp(pd.ulp().as_bytes(), pd.data().home(), port)
    }

    fn qp_placed(pd: &Pd<VdevPd>, slot: usize) {
        pd.data().note_qp(slot);
    }

    fn qpns_held(bond: &ArcBorrow<'_, Bond>) -> usize {
        bond.qpns.prune()
    }

    /// The GSI proxy finds the QP a CM MAD speaks for by its number.
    fn claim_qpn(bond: &ArcBorrow<'_, Bond>, qpn: u32, record: &CmRecord) -> Result {
        bond.qpns
            .claim(qpn, ProxyQp::new(record.as_raw()).ok_or(EINVAL)?)
    }

    fn release_qpn(bond: &ArcBorrow<'_, Bond>, qpn: u32) {
        bond.qpns.release(qpn);
    }

    fn quarantine_qpn(bond: &ArcBorrow<'_, Bond>, qpn: u32, aborted: bool) {
        let end = if aborted {
            QpEnd::ExchangeAborted
        } else {
            QpEnd::Destroyed
        };
        bond.qpns.quarantine(qpn, end);
    }

    fn traffic_class(bond: &ArcBorrow<'_, Bond>, requested: u8) -> u8 {
        bond.knobs.qp_traffic_class(requested)
    }

    fn gsi_ports<'a>(bond: &'a ArcBorrow<'_, Bond>) -> &'a GsiPorts {
        &bond.gsi_ports
    }

    fn gsi_members<'a>(bond: &'a ArcBorrow<'_, Bond>) -> &'a GsiMembers {
        &bond.gsi_members
    }

    fn gsi_member(bond: &ArcBorrow<'_, Bond>, port: u32) -> Option<usize> {
        bond.gsi_member(port)
    }

    fn qpn_record(bond: &ArcBorrow<'_, Bond>, qpn: u32) -> Option<NonNull<c_void>> {
        bond.qpns.live(qpn).and_then(|r| NonNull::new(r.as_raw()))
    }

    fn gsi_window(window: GsiWindow) {
        match window {
            GsiWindow::ReqOut => inject(Inject::GsiReqOut),
            GsiWindow::ReqIn => inject(Inject::CmReqIn),
            GsiWindow::Listen => inject(Inject::CmListen),
        }
    }

    fn qp_ids<'a>(bond: &'a ArcBorrow<'_, Bond>) -> &'a QpIds {
        &bond.qp_ids
    }

    fn qp_paths<'a>(bond: &'a ArcBorrow<'_, Bond>) -> &'a QpPaths {
        &bond.qp_paths
    }

    fn path_counters<'a>(bond: &'a ArcBorrow<'_, Bond>) -> &'a PathCounters {
        &bond.counters
    }

    fn translate_wc(bond: &ArcBorrow<'_, Bond>, wc: &mut Wc, polling: &Polling<'_>) -> bool {
        qp_path::translate_wc(&bond.qp_ids, &bond.counters, Self::mrs(bond), wc, polling)
    }

    fn mrs<'a>(bond: &'a ArcBorrow<'_, Bond>) -> &'a MrTable {
        &bond.mrs
    }

    /// ULPs allocate MRs after their QP: before it, where the PD's first
    /// QP will go is not decided.
    fn mr_member(pd: &Pd<VdevPd>) -> Result<usize> {
        pd.data().mr_member().ok_or(EAGAIN)
    }

    fn with_member_pd<R>(
        pd: &Pd<VdevPd>,
        slot: usize,
        dev: &MemberDevice,
        f: impl FnOnce(&MemberPd) -> Result<R>,
    ) -> Result<R> {
        pd.data()
            .with_member_pd(slot, || MemberPd::alloc_on(dev), f)?
    }

    fn mr_window(window: MrWindow) {
        match window {
            MrWindow::MemberMap => inject_any(Inject::MapMrSg),
            MrWindow::MemberAlloc => inject(Inject::AllocMr),
        }
    }
}
