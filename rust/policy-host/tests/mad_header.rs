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
