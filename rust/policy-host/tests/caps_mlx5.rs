// SPDX-License-Identifier: GPL-2.0
//! The capability intersection over real mlx5 attribute values: a bond of
//! two ConnectX-6 Dx ports, and of a ConnectX-6 Dx with a ConnectX-5, is
//! accepted, with the intersection a ULP can rely on.
//!
//! The fixtures are `struct ib_device_attr` as `mlx5_ib_query_device()`
//! (drivers/infiniband/hw/mlx5/main.c, 6.12) fills it from the firmware's
//! capabilities. The values `ibv_devinfo -v` prints agree with public reports
//! of a ConnectX-6 (MT4123, firmware 20.29: openucx/ucx#8229) and a
//! ConnectX-5 (MT4121, firmware 16.29: ofiwg/libfabric#8256); the ConnectX-6
//! Dx (MT4125) shares the ConnectX-6 generation's limits. The fields
//! `ibv_devinfo` does not print (`max_fast_reg_page_list_len`,
//! `masked_atomic_cap`, the send and receive SGE split) follow the driver's
//! code. None of this was measured on hardware here.

use mrbond_policy::policy::caps::{
    intersect, weaker, DeviceCaps, Limit, CAP_CURR_QP_STATE_MOD, CAP_RC_RNR_NAK_GEN,
    CAP_UD_AV_PORT_ENFORCE, INHERITED_CAP_FLAGS, LIMIT_COUNT,
};

/// `enum ib_device_cap_flags` bits mlx5 sets that the vdev must not pass on.
const CAP_BAD_PKEY_CNTR: u64 = 1 << 0;
const CAP_BAD_QKEY_CNTR: u64 = 1 << 1;
const CAP_AUTO_PATH_MIG: u64 = 1 << 4;
const CAP_CHANGE_PHY_PORT: u64 = 1 << 5;
const CAP_PORT_ACTIVE_EVENT: u64 = 1 << 10;
const CAP_SYS_IMAGE_GUID: u64 = 1 << 11;
const CAP_MEM_WINDOW: u64 = 1 << 17;
const CAP_UD_IP_CSUM: u64 = 1 << 18;
const CAP_XRC: u64 = 1 << 20;
const CAP_MEM_MGT_EXTENSIONS: u64 = 1 << 21;
const CAP_MEM_WINDOW_TYPE_2B: u64 = 1 << 24;
const CAP_RAW_IP_CSUM: u64 = 1 << 26;
const CAP_MANAGED_FLOW_STEERING: u64 = 1 << 29;
const CAP_RAW_SCATTER_FCS: u64 = 1 << 34;
const CAP_PCI_WRITE_END_PADDING: u64 = 1 << 36;

/// What mlx5 sets on a ConnectX-5/6 Ethernet port: the driver's base set
/// (CHANGE_PHY_PORT, PORT_ACTIVE_EVENT, SYS_IMAGE_GUID, RC_RNR_NAK_GEN)
/// plus the firmware-dependent ones these generations have. mlx5 never
/// sets CURR_QP_STATE_MOD or UD_AV_PORT_ENFORCE.
const MLX5_CAP_FLAGS: u64 = CAP_BAD_PKEY_CNTR
    | CAP_BAD_QKEY_CNTR
    | CAP_AUTO_PATH_MIG
    | CAP_CHANGE_PHY_PORT
    | CAP_PORT_ACTIVE_EVENT
    | CAP_SYS_IMAGE_GUID
    | CAP_RC_RNR_NAK_GEN
    | CAP_MEM_WINDOW
    | CAP_UD_IP_CSUM
    | CAP_XRC
    | CAP_MEM_MGT_EXTENSIONS
    | CAP_MEM_WINDOW_TYPE_2B
    | CAP_RAW_IP_CSUM
    | CAP_MANAGED_FLOW_STEERING
    | CAP_RAW_SCATTER_FCS
    | CAP_PCI_WRITE_END_PADDING;

/// `IB_ATOMIC_NONE`, `IB_ATOMIC_HCA`.
const ATOMIC_NONE: u64 = 0;
const ATOMIC_HCA: u64 = 1;

fn caps(values: &[(Limit, u64)], cap_flags: u64, local_ca_ack_delay: u8) -> DeviceCaps {
    let mut limits = [0u64; LIMIT_COUNT];
    for (l, v) in Limit::ALL.iter().zip(limits.iter_mut()) {
        *v = values
            .iter()
            .find(|(k, _)| k == l)
            .map(|(_, x)| *x)
            .unwrap_or_else(|| panic!("fixture lacks {}", l.name()));
    }
    DeviceCaps {
        limits,
        // ~(4 KiB - 1): every page size from 4 KiB up.
        page_size_cap: 0xffff_ffff_ffff_f000,
        cap_flags,
        local_ca_ack_delay,
    }
}

/// ConnectX-6 Dx, one port of an MT4125 (firmware 22.x).
fn connectx6_dx() -> DeviceCaps {
    caps(
        &[
            (Limit::MaxMrSize, u64::MAX),
            (Limit::MaxQp, 1 << 18),
            (Limit::MaxQpWr, 32_768),
            // min(max_wqe_sz_sq, 512) less the control segment, in 16-byte
            // data segments: 30; the receive side 32.
            (Limit::MaxSendSge, 30),
            (Limit::MaxRecvSge, 32),
            // MLX5_MAX_SGE_RD
            (Limit::MaxSgeRd, 30),
            (Limit::MaxCq, 1 << 24),
            (Limit::MaxCqe, (1 << 22) - 1),
            (Limit::MaxMr, 1 << 24),
            (Limit::MaxPd, 1 << 24),
            (Limit::MaxQpRdAtom, 16),
            // max_qp_rd_atom * max_qp
            (Limit::MaxResRdAtom, 16 << 18),
            (Limit::MaxQpInitRdAtom, 16),
            (Limit::AtomicCap, ATOMIC_HCA),
            (Limit::MaskedAtomicCap, ATOMIC_NONE),
            (Limit::MaxAh, i32::MAX as u64),
            // 1 << log_max_klm_list_size
            (Limit::MaxFastRegPageListLen, 1 << 16),
        ],
        MLX5_CAP_FLAGS,
        16,
    )
}

/// ConnectX-5, one port of an MT4121 (firmware 16.29): half the QPs of the
/// ConnectX-6 generation in that report, the rest alike.
fn connectx5() -> DeviceCaps {
    let mut c = connectx6_dx();
    for (l, v) in Limit::ALL.iter().zip(c.limits.iter_mut()) {
        match l {
            Limit::MaxQp => *v = 1 << 17,
            Limit::MaxResRdAtom => *v = 16 << 17,
            _ => {}
        }
    }
    c
}

/// rdma_rxe's own limits (drivers/infiniband/sw/rxe/rxe_param.h, 6.12),
/// the members of the testbed.
fn rxe() -> DeviceCaps {
    const DEFAULT_MAX_VALUE: u64 = 1 << 20;
    let mut c = caps(
        &[
            (Limit::MaxMrSize, u64::MAX),
            (Limit::MaxQp, DEFAULT_MAX_VALUE - 16),
            (Limit::MaxQpWr, DEFAULT_MAX_VALUE),
            (Limit::MaxSendSge, 32),
            (Limit::MaxRecvSge, 32),
            (Limit::MaxSgeRd, 32),
            (Limit::MaxCq, DEFAULT_MAX_VALUE),
            (Limit::MaxCqe, (1 << 15) - 1),
            (Limit::MaxMr, (DEFAULT_MAX_VALUE >> 1) - 1),
            (Limit::MaxPd, DEFAULT_MAX_VALUE),
            (Limit::MaxQpRdAtom, 128),
            (Limit::MaxResRdAtom, 0x3f000),
            (Limit::MaxQpInitRdAtom, 128),
            (Limit::AtomicCap, ATOMIC_HCA),
            (Limit::MaskedAtomicCap, ATOMIC_NONE),
            (Limit::MaxAh, (1 << 15) - 1),
            (Limit::MaxFastRegPageListLen, 512),
        ],
        CAP_BAD_PKEY_CNTR
            | CAP_BAD_QKEY_CNTR
            | CAP_AUTO_PATH_MIG
            | CAP_CHANGE_PHY_PORT
            | CAP_UD_AV_PORT_ENFORCE
            | CAP_PORT_ACTIVE_EVENT
            | CAP_SYS_IMAGE_GUID
            | CAP_RC_RNR_NAK_GEN
            | CAP_MEM_MGT_EXTENSIONS
            | CAP_MEM_WINDOW
            | CAP_MEM_WINDOW_TYPE_2B,
        15,
    );
    // RXE_PAGE_SIZE_CAP: 4 KiB up to 2 GiB.
    c.page_size_cap = 0xffff_f000;
    c
}

#[test]
fn two_connectx6_dx_ports_bond_as_one() {
    let one = connectx6_dx();
    let vdev = intersect(&[one, one], INHERITED_CAP_FLAGS);
    assert_eq!(
        vdev.limits, one.limits,
        "two equal members promise what each does"
    );
    assert_eq!(vdev.page_size_cap, one.page_size_cap);
    assert_eq!(vdev.local_ca_ack_delay, 16);
    // Of mlx5's flags only RC_RNR_NAK_GEN describes a QP's own behaviour;
    // MWs, XRC, checksum offloads and flow steering are not proxied.
    assert_eq!(vdev.cap_flags, CAP_RC_RNR_NAK_GEN);
    assert_eq!(weaker(&one, &vdev), None, "a third CX-6 Dx port may join");
}

#[test]
fn connectx6_dx_with_connectx5_bond_at_the_lower_limits() {
    let (dx, cx5) = (connectx6_dx(), connectx5());
    let vdev = intersect(&[dx, cx5], INHERITED_CAP_FLAGS);
    assert_eq!(
        vdev,
        intersect(&[cx5, dx], INHERITED_CAP_FLAGS),
        "order-free"
    );
    assert_eq!(vdev.get(Limit::MaxQp), 1 << 17);
    assert_eq!(vdev.get(Limit::MaxResRdAtom), 16 << 17);
    assert_eq!(vdev.get(Limit::AtomicCap), ATOMIC_HCA);
    assert_eq!(vdev.get(Limit::MaskedAtomicCap), ATOMIC_NONE);
    assert_eq!(vdev.get(Limit::MaxQpWr), 32_768);
    assert_eq!(vdev.get(Limit::MaxSendSge), 30);
    assert_eq!(vdev.get(Limit::MaxFastRegPageListLen), 1 << 16);
    assert_eq!(vdev.cap_flags, CAP_RC_RNR_NAK_GEN);
    // Both may join the bond the two of them froze; a CX-5 joining a bond
    // frozen from CX-6 Dx ports alone is refused, by name: half the QPs.
    assert_eq!(weaker(&dx, &vdev), None);
    assert_eq!(weaker(&cx5, &vdev), None);
    let dx_only = intersect(&[dx, dx], INHERITED_CAP_FLAGS);
    assert_eq!(weaker(&cx5, &dx_only), Some("max_qp"));
}

#[test]
fn mlx5_with_rxe_bonds_at_rxes_limits_and_flags() {
    let (dx, soft) = (connectx6_dx(), rxe());
    let vdev = intersect(&[dx, soft], INHERITED_CAP_FLAGS);
    assert_eq!(vdev.get(Limit::MaxQpWr), 32_768, "mlx5's");
    assert_eq!(vdev.get(Limit::MaxQp), 1 << 18, "mlx5's");
    assert_eq!(vdev.get(Limit::MaxCqe), (1 << 15) - 1, "rxe's");
    assert_eq!(vdev.get(Limit::MaxAh), 0x7fff, "rxe's");
    assert_eq!(vdev.page_size_cap, 0xffff_f000, "the page sizes both take");
    assert_eq!(vdev.get(Limit::MaxSendSge), 30);
    assert_eq!(vdev.get(Limit::MaxFastRegPageListLen), 512);
    // The slower ACK delay: timeouts derive from it.
    assert_eq!(vdev.local_ca_ack_delay, 16);
    // UD_AV_PORT_ENFORCE is rxe's alone, so the mixed bond does not have it.
    assert_eq!(vdev.cap_flags & CAP_UD_AV_PORT_ENFORCE, 0);
    assert_eq!(vdev.cap_flags & CAP_CURR_QP_STATE_MOD, 0);
    assert_eq!(weaker(&dx, &vdev), None);
    assert_eq!(weaker(&soft, &vdev), None);
}
