// SPDX-License-Identifier: GPL-2.0

//! The vdev's port verbs: a port is up while the bond's policy finds it
//! usable (in rail mode port N is member slot N - 1; in active-backup mode
//! the one port is up while any member is), and reports RoCE values of its
//! own (`policy::port`) with the MTU and speed of the netdev it is bound to;
//! its counters are its member's (`Bond::stats`).

#![deny(unsafe_code)]

use kernel::prelude::*;

use crate::{
    ctl::bond::Bond,
    policy::port::{self, IbMtu, PortCounter, PORT_COUNTER_COUNT},
    rdma::device::{Device, EthSpeed, PortAttr, RoceV2Port, StatDesc},
};

/// The descriptors of [`PortCounter::ALL`], in its order.
pub(crate) static PORT_COUNTERS: [StatDesc; PORT_COUNTER_COUNT] = {
    let mut descs = [const { StatDesc::new(c"") }; PORT_COUNTER_COUNT];
    let mut i = 0;
    while i < PORT_COUNTER_COUNT {
        descs[i] = StatDesc::new(PortCounter::ALL[i].name());
        i += 1;
    }
    descs
};

/// `query_port`. Takes RTNL (the netdev's speed): the bond's state lock is
/// dropped before, so no bond lock nests around RTNL.
pub(crate) fn query_port(bond: &Bond, dev: &Device, port: u32, attr: &mut PortAttr<'_>) {
    attr.set_active(bond.port_active(port));
    attr.set_mtu(IbMtu::Mtu4096, port::active_mtu(dev.port_netdev_mtu(port)));
    attr.set_table_lens(port::GID_TABLE_LEN, port::PKEY_TABLE_LEN);
    attr.set_cm_supported();
    attr.set_max_msg_size(port::MAX_MSG_SIZE);
    // No netdev or no ethtool speed: still a usable port, just slow.
    attr.set_speed(dev.port_eth_speed(port).unwrap_or(EthSpeed::SLOWEST));
}

/// `get_port_immutable`: every port is RoCE v2 with the same tables.
pub(crate) fn immutable() -> RoceV2Port {
    RoceV2Port {
        gid_table_len: port::GID_TABLE_LEN,
        pkey_table_len: port::PKEY_TABLE_LEN,
    }
}

/// `query_pkey`: the one default P_Key.
pub(crate) fn pkey(index: u16) -> Result<u16> {
    if index >= port::PKEY_TABLE_LEN {
        return Err(EINVAL);
    }
    Ok(port::DEFAULT_PKEY)
}
