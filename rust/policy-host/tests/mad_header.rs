// SPDX-License-Identifier: GPL-2.0
//! The network header the GSI proxy writes in front of a received MAD.

use mrbond_policy::policy::mad::{ip_checksum, ipv4_mapped, network_header, NetworkType};

fn mapped(a: [u8; 4]) -> [u8; 16] {
    let mut g = [0u8; 16];
    g[10] = 0xff;
    g[11] = 0xff;
    g[12..].copy_from_slice(&a);
    g
}

#[test]
fn ipv4_mapped_gids_only() {
    assert_eq!(
        ipv4_mapped(&mapped([198, 18, 30, 2])),
        Some([198, 18, 30, 2])
    );
    let mut v6 = mapped([1, 2, 3, 4]);
    v6[0] = 0xfe;
    assert_eq!(ipv4_mapped(&v6), None);
    assert_eq!(ipv4_mapped(&[0u8; 16]), None);
}

#[test]
fn ipv4_header_checksums_to_zero() {
    let (h, kind) = network_header(&mapped([198, 18, 30, 1]), &mapped([198, 18, 30, 2]));
    assert_eq!(kind, NetworkType::Ipv4);
    assert!(
        h[..20].iter().all(|&b| b == 0),
        "the first 20 bytes stay clear"
    );
    let ip = &h[20..];
    assert_eq!(ip[0], 0x45);
    assert_eq!(&ip[2..4], &[0, 20]);
    assert_eq!((ip[8], ip[9]), (64, 17));
    assert_eq!(&ip[12..16], &[198, 18, 30, 1]);
    assert_eq!(&ip[16..20], &[198, 18, 30, 2]);
    // A header with its checksum in place sums to all ones.
    assert_eq!(ip_checksum(ip), 0);
}

#[test]
fn ipv4_checksum_known_value() {
    // RFC 1071's worked example bytes, as a sanity check of the fold.
    let bytes = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
    assert_eq!(ip_checksum(&bytes), !0xddf2u16);
}

#[test]
fn ipv6_gids_get_a_grh() {
    let mut src = [0u8; 16];
    src[0] = 0xfe;
    src[1] = 0x80;
    src[15] = 1;
    let mut dst = src;
    dst[15] = 2;
    let (h, kind) = network_header(&src, &dst);
    assert_eq!(kind, NetworkType::Ipv6);
    assert_eq!(&h[..8], &[0x60, 0, 0, 0, 0, 0, 0, 64]);
    assert_eq!(&h[8..24], &src);
    assert_eq!(&h[24..40], &dst);
}

fn cm_mad(attr: u16) -> [u8; 256] {
    let mut m = [0u8; 256];
    m[0] = 1;
    m[1] = 0x07;
    m[2] = 2;
    m[3] = 0x03;
    m[16..18].copy_from_slice(&attr.to_be_bytes());
    m
}

#[test]
fn req_and_rep_name_their_qp_and_ids() {
    use mrbond_policy::policy::mad::{cm_exchange, CmExchange, CmSent};
    let mut req = cm_mad(0x0010);
    req[24..28].copy_from_slice(&0x1122_3344u32.to_be_bytes());
    // Local QPN 0x000abc in the top 24 bits, the next field's 8 below.
    req[56..60].copy_from_slice(&0x000a_bc07u32.to_be_bytes());
    assert_eq!(
        cm_exchange(&req),
        Some(CmExchange {
            qpn: 0xabc,
            local_id: 0x1122_3344,
            remote_id: 0,
            sent: CmSent::Req
        })
    );
    let mut rep = cm_mad(0x0013);
    rep[24..28].copy_from_slice(&7u32.to_be_bytes());
    rep[28..32].copy_from_slice(&9u32.to_be_bytes());
    rep[36..40].copy_from_slice(&0x0000_2aff_u32.to_be_bytes());
    assert_eq!(
        cm_exchange(&rep),
        Some(CmExchange {
            qpn: 0x2a,
            local_id: 7,
            remote_id: 9,
            sent: CmSent::Rep
        })
    );
    // An RTU, a non-CM MAD and a short buffer say nothing.
    assert_eq!(cm_exchange(&cm_mad(0x0014)), None);
    let mut sa = cm_mad(0x0010);
    sa[1] = 0x03;
    assert_eq!(cm_exchange(&sa), None);
    assert_eq!(cm_exchange(&req[..40]), None);
}

#[test]
fn rej_swaps_the_ids_and_names_the_message() {
    use mrbond_policy::policy::mad::{cm_rej, CmExchange, CmSent, REJ_INVALID_GID};
    let x = CmExchange {
        qpn: 5,
        local_id: 0xaaaa_0001,
        remote_id: 0xbbbb_0002,
        sent: CmSent::Rep,
    };
    let m = cm_rej(&x, REJ_INVALID_GID);
    assert_eq!(&m[..4], &[1, 0x07, 2, 0x03]);
    assert_eq!(&m[16..18], &[0x00, 0x12]);
    assert_eq!(
        &m[24..28],
        &0xbbbb_0002u32.to_be_bytes(),
        "the peer's ID is the REJ's local one"
    );
    assert_eq!(&m[28..32], &0xaaaa_0001u32.to_be_bytes());
    assert_eq!(m[32] >> 6, 1, "MessageRejected: REP");
    assert_eq!(&m[34..36], &[0, 12]);
    let req = CmExchange {
        sent: CmSent::Req,
        ..x
    };
    assert_eq!(cm_rej(&req, REJ_INVALID_GID)[32] >> 6, 0);
}

#[test]
fn req_gids_at_their_offsets() {
    use mrbond_policy::policy::mad::cm_req_gids;
    let mut req = cm_mad(0x0010);
    req[80..96].copy_from_slice(&[1; 16]);
    req[96..112].copy_from_slice(&[2; 16]);
    assert_eq!(cm_req_gids(&req), Some(([1; 16], [2; 16])));
    assert_eq!(cm_req_gids(&req[..100]), None);
}
