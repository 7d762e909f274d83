// SPDX-License-Identifier: GPL-2.0

//! What a vdev port reports (`query_port`, `get_port_immutable`,
//! `query_pkey`): RoCE values of its own, whatever its member.
//!
//! The tables' sizes must be the same in `get_port_immutable`, which the
//! core reads once before its caches exist, and in `query_port`, which sysfs
//! `gids/` reads; so they are constants here, not the member's.

/// Entries of a port's GID table.
pub const GID_TABLE_LEN: u32 = 128;
/// Entries of a port's P_Key table: the default P_Key only, as rxe (RoCE has
/// no partitions).
pub const PKEY_TABLE_LEN: u16 = 1;
/// The one P_Key, full membership (`IB_DEFAULT_PKEY_FULL`).
pub const DEFAULT_PKEY: u16 = 0xffff;
/// Largest message a port carries (`max_msg_sz`), as rxe's.
pub const MAX_MSG_SIZE: u32 = 1 << 31;

/// Bytes of RoCE v2 headers around an IB payload, as `iboe_get_mtu()`
/// counts them: GRH 40, UDP 8, BTH 12, XRC ETH 4, AtomicETH 28, ICRC 4.
pub const ROCE_HEADER_BYTES: u32 = 40 + 8 + 12 + 4 + 28 + 4;

/// An InfiniBand path MTU (`enum ib_mtu`, whose values these are).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum IbMtu {
    /// `IB_MTU_256`
    Mtu256 = 1,
    /// `IB_MTU_512`
    Mtu512 = 2,
    /// `IB_MTU_1024`
    Mtu1024 = 3,
    /// `IB_MTU_2048`
    Mtu2048 = 4,
    /// `IB_MTU_4096`
    Mtu4096 = 5,
}

impl IbMtu {
    /// Largest first, as [`roce_mtu`] tries them.
    const DESCENDING: [IbMtu; 5] = [
        IbMtu::Mtu4096,
        IbMtu::Mtu2048,
        IbMtu::Mtu1024,
        IbMtu::Mtu512,
        IbMtu::Mtu256,
    ];

    /// The MTU in bytes (`ib_mtu_enum_to_int()`).
    pub const fn bytes(self) -> u32 {
        match self {
            IbMtu::Mtu256 => 256,
            IbMtu::Mtu512 => 512,
            IbMtu::Mtu1024 => 1024,
            IbMtu::Mtu2048 => 2048,
            IbMtu::Mtu4096 => 4096,
        }
    }

    /// The `enum ib_mtu` value.
    pub const fn to_raw(self) -> u32 {
        self as u32
    }
}

/// The path MTU that RoCE v2 packets of an Ethernet MTU of `eth_mtu` bytes
/// carry (`iboe_get_mtu()`, as rdma_cm computes a path's MTU), or `None`
/// when not even 256 bytes of payload fit.
pub fn roce_mtu(eth_mtu: u32) -> Option<IbMtu> {
    let payload = eth_mtu.checked_sub(ROCE_HEADER_BYTES)?;
    IbMtu::DESCENDING
        .into_iter()
        .find(|mtu| payload >= mtu.bytes())
}

/// A port's active MTU: that of its netdev (`eth_mtu`), 1024 when it has
/// none yet, and never below 256, the smallest value `enum ib_mtu` has.
pub fn active_mtu(eth_mtu: Option<u32>) -> IbMtu {
    match eth_mtu {
        Some(mtu) => roce_mtu(mtu).unwrap_or(IbMtu::Mtu256),
        None => IbMtu::Mtu1024,
    }
}

/// How many [`PortCounter`]s there are.
pub const PORT_COUNTER_COUNT: usize = 10;

/// A counter of a vdev port (`rdma statistic`, sysfs `hw_counters/`), per
/// port and, on port 0 (sysfs only), summed over the members. Only
/// counters, which only grow: tools such as exporters take everything
/// there for one. The gauges (usability, QPs, outstanding WRs) are in the
/// member's sysfs directory and its netlink nest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortCounter {
    /// Usability changes of the member.
    Transitions,
    /// QPs placed on the member.
    Placements,
    /// Posts refused because a key was another member's.
    WrongMemberKey,
    /// WRs completed with a flush error.
    FlushedWr,
    /// Member QPNs retried because the vdev had one already (device-wide).
    QpnCollisions,
    /// Transparent failover's HELLOs sent to peers (device-wide).
    TfoHelloSent,
    /// HELLOs heard from peers, for a connection of ours (device-wide).
    TfoHelloHeard,
    /// Connections whose peer heard our HELLO: they can move to another
    /// rail (device-wide).
    TfoCapable,
    /// Connections moved to another rail, their ULP none the wiser
    /// (device-wide).
    TfoMoves,
    /// Moves given up: the connection took the flush path (device-wide).
    TfoMoveFallbacks,
}

impl PortCounter {
    /// Every counter, in the order the core shows and the driver fills them.
    pub const ALL: [PortCounter; PORT_COUNTER_COUNT] = [
        PortCounter::Transitions,
        PortCounter::Placements,
        PortCounter::WrongMemberKey,
        PortCounter::FlushedWr,
        PortCounter::QpnCollisions,
        PortCounter::TfoHelloSent,
        PortCounter::TfoHelloHeard,
        PortCounter::TfoCapable,
        PortCounter::TfoMoves,
        PortCounter::TfoMoveFallbacks,
    ];

    /// The counter's name, NUL-terminated for the core.
    pub const fn name(self) -> &'static core::ffi::CStr {
        match self {
            PortCounter::Transitions => c"transitions",
            PortCounter::Placements => c"placements",
            PortCounter::WrongMemberKey => c"wrong_member_key",
            PortCounter::FlushedWr => c"flushed_wr",
            PortCounter::QpnCollisions => c"qpn_collisions",
            PortCounter::TfoHelloSent => c"tfo_hello_sent",
            PortCounter::TfoHelloHeard => c"tfo_hello_heard",
            PortCounter::TfoCapable => c"tfo_capable",
            PortCounter::TfoMoves => c"tfo_moves",
            PortCounter::TfoMoveFallbacks => c"tfo_move_fallbacks",
        }
    }

    /// The counter's place in [`PortCounter::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }
}
