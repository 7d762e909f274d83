// SPDX-License-Identifier: GPL-2.0

//! Wire formats the GSI proxy writes, byte by byte: the network header that
//! ib_mad expects in front of a MAD received on QP1, as rxe writes it (ib_mad
//! reads the peer's address from it, `ib_init_ah_attr_from_wc()`). The
//! proxy's QP1 has no wire: a request a member received is handed to it with
//! a header made here.

/// The network header area in front of a received MAD: a GRH's 40 bytes,
/// an IPv4 header in the last 20 of them.
pub const GRH_LEN: usize = 40;

/// Where the IPv4 header starts in the area (`union rdma_network_hdr`).
const IPV4_AT: usize = 20;

/// Which header [`network_header`] wrote (`enum rdma_network_type`'s IPv4
/// and IPv6 RoCEv2 kinds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NetworkType {
    /// Both GIDs are IPv4-mapped: an IPv4 header.
    Ipv4,
    /// A GRH (IPv6 header).
    Ipv6,
}

/// The IPv4 address of an IPv4-mapped GID (`::ffff:a.b.c.d`), if it is one.
pub fn ipv4_mapped(gid: &[u8; 16]) -> Option<[u8; 4]> {
    match gid {
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a, b, c, d] => Some([*a, *b, *c, *d]),
        _ => None,
    }
}

/// The Internet checksum of `bytes` (RFC 1071), as stored big-endian.
pub fn ip_checksum(bytes: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    for pair in bytes.chunks(2) {
        let word = match pair {
            [hi, lo] => u16::from_be_bytes([*hi, *lo]),
            [hi] => u16::from_be_bytes([*hi, 0]),
            _ => 0,
        };
        sum = sum.wrapping_add(u32::from(word));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff).wrapping_add(sum >> 16);
    }
    // The fold leaves at most 16 bits.
    !u16::try_from(sum).unwrap_or(u16::MAX)
}

/// The network header of a MAD received from GID `src` by GID `dst`: an
/// IPv4 header (UDP, TTL 64, checksummed) in the last 20 bytes when both are
/// IPv4-mapped, else a GRH (version 6, hop limit 64).
pub fn network_header(src: &[u8; 16], dst: &[u8; 16]) -> ([u8; GRH_LEN], NetworkType) {
    let mut h = [0u8; GRH_LEN];
    if let (Some(s), Some(d)) = (ipv4_mapped(src), ipv4_mapped(dst)) {
        let mut ip = [0u8; 20];
        ip[0] = 0x45; // version 4, 5 words
        ip[2..4].copy_from_slice(&20u16.to_be_bytes()); // total length
        ip[8] = 64; // TTL
        ip[9] = 17; // UDP
        ip[12..16].copy_from_slice(&s);
        ip[16..20].copy_from_slice(&d);
        let check = ip_checksum(&ip);
        ip[10..12].copy_from_slice(&check.to_be_bytes());
        h[IPV4_AT..].copy_from_slice(&ip);
        return (h, NetworkType::Ipv4);
    }
    h[0] = 0x60; // version 6, no class or flow
    h[7] = 64; // hop limit
    h[8..24].copy_from_slice(src);
    h[24..40].copy_from_slice(dst);
    (h, NetworkType::Ipv6)
}
