// SPDX-License-Identifier: GPL-2.0

//! The vdev's port verbs: a port is up while the bond's policy finds it
//! usable (in rail mode port N is member slot N - 1; in active-backup mode
//! the one port is up while any member is), and reports RoCE values of its
//! own (`policy::port`) with the MTU and speed of the netdev it is bound to;
//! its counters are its member's (`Bond::stats`). The table of the vdev's
//! Rust verbs is here too: `query_device` answered by `vdev_attrs`, the PD
//! verbs by `vdev_pd`.

#![deny(unsafe_code)]

use kernel::{prelude::*, sync::Arc, sync::ArcBorrow};

use crate::{
    bond::Bond,
    policy::port::{self, IbMtu, PortCounter, PORT_COUNTER_COUNT},
    rdma::{
        device::{
            Device, DeviceAttr, DeviceOps, EthSpeed, LinkLayer, PortAttr, RoceV2Port, StatDesc,
        },
        pd::{NewPd, PdSet},
    },
    vdev_attrs,
    vdev_pd::VdevPd,
};

/// The descriptors of [`PortCounter::ALL`], in its order.
static PORT_COUNTERS: [StatDesc; PORT_COUNTER_COUNT] = {
    let mut descs = [const { StatDesc::new(c"") }; PORT_COUNTER_COUNT];
    let mut i = 0;
    while i < PORT_COUNTER_COUNT {
        descs[i] = StatDesc::new(PortCounter::ALL[i].name());
        i += 1;
    }
    descs
};

/// The verbs of every vdev that Rust implements (`mrbond_rs_dev_ops`, in
/// `entry.rs`).
pub(crate) struct VdevVerbs;

#[vtable]
impl DeviceOps for VdevVerbs {
    type Data = Arc<Bond>;
    type PdData = VdevPd;

    fn pds<'a>(bond: &'a ArcBorrow<'_, Bond>) -> &'a PdSet<VdevPd> {
        &bond.pds
    }

    fn alloc_pd(_bond: ArcBorrow<'_, Bond>, _dev: &Device, pd: &NewPd<'_>) -> Result {
        // One rkey valid on every member cannot exist.
        if pd.wants_global_rkey() {
            pr_warn!(
                "{} asked for an unsafe global rkey, refused: QPs of one PD live on several HCAs\n",
                pd.ulp()
            );
            return Err(crate::rdma::eopnotsupp());
        }
        Ok(())
    }

    fn pd_data() -> impl PinInit<VdevPd, Error> {
        VdevPd::new()
    }

    fn query_device(bond: ArcBorrow<'_, Bond>, dev: &Device, attr: &mut DeviceAttr<'_>) -> Result {
        vdev_attrs::report(&bond.caps, dev, attr);
        Ok(())
    }

    /// Takes RTNL (the netdev's speed): the bond's state lock is dropped
    /// before, so no bond lock nests around RTNL.
    fn query_port(
        bond: ArcBorrow<'_, Bond>,
        dev: &Device,
        port: u32,
        attr: &mut PortAttr<'_>,
    ) -> Result {
        attr.set_active(bond.port_active(port));
        attr.set_mtu(IbMtu::Mtu4096, port::active_mtu(dev.port_netdev_mtu(port)));
        attr.set_table_lens(port::GID_TABLE_LEN, port::PKEY_TABLE_LEN);
        attr.set_cm_supported();
        attr.set_max_msg_size(port::MAX_MSG_SIZE);
        // No netdev or no ethtool speed: still a usable port, just slow.
        attr.set_speed(dev.port_eth_speed(port).unwrap_or(EthSpeed::SLOWEST));
        Ok(())
    }

    fn get_port_immutable(_dev: &Device, _port: u32) -> Result<RoceV2Port> {
        Ok(RoceV2Port {
            gid_table_len: port::GID_TABLE_LEN,
            pkey_table_len: port::PKEY_TABLE_LEN,
        })
    }

    /// A vdev of node type IB_CA would otherwise be reported InfiniBand.
    fn get_link_layer(_dev: &Device, _port: u32) -> LinkLayer {
        LinkLayer::Ethernet
    }

    fn query_pkey(_dev: &Device, _port: u32, index: u16) -> Result<u16> {
        if index >= port::PKEY_TABLE_LEN {
            return Err(EINVAL);
        }
        Ok(port::DEFAULT_PKEY)
    }

    const HW_STATS: &'static [StatDesc] = &PORT_COUNTERS;

    fn get_hw_stats(
        bond: ArcBorrow<'_, Bond>,
        _dev: &Device,
        port: u32,
        values: &mut [u64],
    ) -> Result {
        bond.stats(port, values);
        Ok(())
    }
}
