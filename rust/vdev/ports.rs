// SPDX-License-Identifier: GPL-2.0

//! The vdev's port verbs: a port is up while the bond's policy finds it
//! usable (in rail mode port N is member slot N - 1; in active-backup mode
//! the one port is up while any member is), and reports RoCE values of its
//! own (`policy::port`) with the MTU and speed of the netdev it is bound to;
//! its counters are its member's (`Bond::stats`), and so are its PMA port
//! counters (`ports/N/counters/`, [`process_mad`]).

#![deny(unsafe_code)]

use kernel::prelude::*;

use crate::{
    ctl::bond::Bond,
    policy::{
        knobs::BondMode,
        pma::{self, CounterSet, PmaGet},
        port::{self, IbMtu, PortCounter, PORT_COUNTER_COUNT},
    },
    rdma::{
        device::{Device, EthSpeed, PortAttr, RoceV2Port, StatDesc},
        gsi::MAD_SIZE,
    },
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

/// `process_mad`: the PMA GETs of `ports/N/counters/` (and of a peer's
/// perfquery). ClassPortInfo the bond answers itself; a port's counters
/// are its members' own PMA counters (a rail port's member; every member
/// of an active-backup bond, summed), each asked for its own port. No
/// answer where no member's PMA answers (rxe has none): the read fails
/// rather than show a zero. Every other MAD is passed on.
pub(crate) fn process_mad(bond: &Bond, port: u32, mad: &[u8; MAD_SIZE]) -> Option<[u8; MAD_SIZE]> {
    match pma::pma_get(mad)? {
        PmaGet::ClassPortInfo => Some(pma::class_port_info(mad)),
        PmaGet::Counters(set) => members_counters(bond, port, set, mad),
    }
}

fn members_counters(
    bond: &Bond,
    port: u32,
    set: CounterSet,
    request: &[u8; MAD_SIZE],
) -> Option<[u8; MAD_SIZE]> {
    let rail_slot = match bond.mode {
        BondMode::Rail => Some(usize::try_from(port).ok()?.checked_sub(1)?),
        BondMode::ActiveBackup => None,
    };
    let mut sum: Option<[u8; MAD_SIZE]> = None;
    // Member handles are valid under the state lock; a member's PMA may
    // sleep (mlx5 asks its firmware), which the mutex allows.
    let st = bond.state.lock();
    for (slot, member) in st.members.iter().enumerate() {
        if rail_slot.is_some_and(|s| s != slot) {
            continue;
        }
        let Some(dev) = member.as_ref().and_then(|m| m.dev.as_ref()) else {
            continue;
        };
        let member_port = dev.start_port();
        let ask = pma::for_member_port(request, u8::try_from(member_port).ok()?);
        let Some(answer) = dev.pma_query(member_port, &ask) else {
            continue;
        };
        match sum.as_mut() {
            Some(s) => pma::add_counters(set, s, &answer),
            None => sum = Some(answer),
        }
    }
    drop(st);
    Some(pma::counters_reply(
        request,
        &sum?,
        u8::try_from(port).ok()?,
    ))
}
