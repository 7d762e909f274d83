// SPDX-License-Identifier: GPL-2.0
//! The port values the vdev reports: the RoCE path MTU of an Ethernet MTU
//! as `iboe_get_mtu()` computes it.

use mrbond_policy::policy::port::{active_mtu, roce_mtu, IbMtu, ROCE_HEADER_BYTES};
use proptest::prelude::*;

/// `iboe_get_mtu()` as include/rdma/ib_addr.h writes it, on a signed MTU.
fn iboe_get_mtu(mtu: i64) -> u32 {
    let mtu = mtu - (40 + 8 + 12 + 4 + 28 + 4);
    match mtu {
        m if m >= 4096 => 5,
        m if m >= 2048 => 4,
        m if m >= 1024 => 3,
        m if m >= 512 => 2,
        m if m >= 256 => 1,
        _ => 0,
    }
}

#[test]
fn common_ethernet_mtus() {
    assert_eq!(roce_mtu(1500), Some(IbMtu::Mtu1024));
    assert_eq!(roce_mtu(9000), Some(IbMtu::Mtu4096));
    assert_eq!(roce_mtu(4200), Some(IbMtu::Mtu4096));
    assert_eq!(roce_mtu(4096), Some(IbMtu::Mtu2048));
    assert_eq!(roce_mtu(0), None);
}

#[test]
fn edges_are_exactly_the_headers_above_each_mtu() {
    for mtu in [
        IbMtu::Mtu256,
        IbMtu::Mtu512,
        IbMtu::Mtu1024,
        IbMtu::Mtu2048,
        IbMtu::Mtu4096,
    ] {
        let edge = mtu.bytes() + ROCE_HEADER_BYTES;
        assert_eq!(roce_mtu(edge), Some(mtu), "at {edge}");
        assert_ne!(roce_mtu(edge - 1), Some(mtu), "below {edge}");
    }
}

#[test]
fn a_port_without_netdev_or_room_still_reports_an_mtu() {
    assert_eq!(active_mtu(None), IbMtu::Mtu1024);
    assert_eq!(active_mtu(Some(68)), IbMtu::Mtu256);
    assert_eq!(active_mtu(Some(1500)), IbMtu::Mtu1024);
}

proptest! {
    #[test]
    fn agrees_with_the_kernel_inline(eth_mtu in 0u32..70000) {
        let ours = roce_mtu(eth_mtu).map_or(0, IbMtu::to_raw);
        prop_assert_eq!(ours, iboe_get_mtu(i64::from(eth_mtu)));
    }
}

#[test]
fn port_counters_are_listed_in_their_index_order_with_distinct_names() {
    use mrbond_policy::policy::port::{PortCounter, PORT_COUNTER_COUNT};
    for (i, counter) in PortCounter::ALL.into_iter().enumerate() {
        assert_eq!(counter.index(), i, "{counter:?}");
    }
    let mut names: Vec<_> = PortCounter::ALL.iter().map(|c| c.name()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), PORT_COUNTER_COUNT);
}
