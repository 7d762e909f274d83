// SPDX-License-Identifier: GPL-2.0

//! The vdev's device attributes: what its first members can all promise
//! (`policy::caps`), frozen when the bond is created, plus what the vdev
//! provides itself whatever its members are. The core copies them once, at
//! registration, and ULPs read that copy: a member joining later must cover
//! them ([`crate::ctl::bond::Bond::weaker_attribute`]).

#![deny(unsafe_code)]

use crate::{
    ffi::{MAX_MEMBERS, MAX_SGE},
    policy::{
        caps::{self, DeviceCaps, Limit},
        port,
    },
    rdma::member_device::IbDevice,
    rdma::{
        bindings,
        device::{Device, DeviceAttr},
    },
};

// The policy's flag numbers are the kernel's.
const _: () = {
    assert!(
        caps::CAP_UD_AV_PORT_ENFORCE
            == bindings::ib_device_cap_flags_IB_DEVICE_UD_AV_PORT_ENFORCE as u64
    );
    assert!(
        caps::CAP_CURR_QP_STATE_MOD
            == bindings::ib_device_cap_flags_IB_DEVICE_CURR_QP_STATE_MOD as u64
    );
    assert!(
        caps::CAP_RC_RNR_NAK_GEN == bindings::ib_device_cap_flags_IB_DEVICE_RC_RNR_NAK_GEN as u64
    );
};

/// What the vdev provides itself: port events, its own system image, and
/// FRWR (`alloc_mr`, `map_mr_sg`, REG_MR and LOCAL_INV are proxied).
const CAP_OWN: u64 = (bindings::ib_device_cap_flags_IB_DEVICE_PORT_ACTIVE_EVENT
    | bindings::ib_device_cap_flags_IB_DEVICE_SYS_IMAGE_GUID
    | bindings::ib_device_cap_flags_IB_DEVICE_MEM_MGT_EXTENSIONS) as u64;

/// `rdma link del` may remove the vdev (nldev_dellink checks the frozen
/// copy), and the local DMA lkey is the vdev's own.
const KERNEL_CAP: u64 = (bindings::ib_kernel_cap_flags_IBK_ALLOW_USER_UNREG
    | bindings::ib_kernel_cap_flags_IBK_LOCAL_DMA_LKEY) as u64;

/// The attributes a bond over `members` promises.
pub(crate) fn freeze(members: &[Option<&IbDevice>; MAX_MEMBERS]) -> DeviceCaps {
    let mut all = [DeviceCaps::NONE; MAX_MEMBERS];
    let mut n = 0usize;
    for (slot, m) in all.iter_mut().zip(members.iter().flatten()) {
        *slot = m.caps();
        n = n.saturating_add(1);
    }
    let mut caps = caps::intersect(all.get(..n).unwrap_or(&[]), caps::INHERITED_CAP_FLAGS);
    // ULPs size max_send_sge from max_sge_rd too (nvmet takes the larger).
    for limit in [Limit::MaxSendSge, Limit::MaxRecvSge, Limit::MaxSgeRd] {
        caps.clamp(limit, u64::from(MAX_SGE));
    }
    caps
}

/// `query_device`: the frozen `caps` and the vdev's own attributes.
pub(crate) fn report(caps: &DeviceCaps, dev: &Device, attr: &mut DeviceAttr<'_>) {
    attr.set_caps(caps);
    attr.add_cap_flags(CAP_OWN);
    attr.set_kernel_cap_flags(KERNEL_CAP);
    // 0 keeps rdma_rw from registering local MRs per READ (it would need
    // them on the QP's member): nvmet then uses only the peer's rkeys and
    // the local DMA lkey.
    attr.set_max_sgl_rd(0);
    // Never a member's: the vdev is its own system image. Vendor, part,
    // hardware and firmware versions stay 0 for the same reason.
    attr.set_sys_image_guid_be(dev.node_guid_be());
    // The ports' P_Key table, as `query_port` reports it.
    attr.set_max_pkeys(port::PKEY_TABLE_LEN);
}
