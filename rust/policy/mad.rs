// SPDX-License-Identifier: GPL-2.0

//! Wire formats the GSI proxy reads and writes, byte by byte (IBTA vol. 1,
//! ch. 12 and 13; big-endian fields at the offsets of the kernel's
//! `ibta_vol1_c12.h`, counted here from the MAD's first byte):
//! - the CM fields of a REQ or REP the device's QP1 sends, which tell which
//!   QP and exchange it speaks for ([`cm_exchange`]);
//! - the REJ that ends such an exchange when the QP's member dies
//!   ([`cm_rej`]);
//! - the network header that ib_mad expects in front of a MAD received on
//!   QP1, as rxe writes it ([`network_header`]; ib_mad reads the peer's
//!   address from it, `ib_init_ah_attr_from_wc()`). The proxy's QP1 has no
//!   wire: a request a member received is handed to it with a header made
//!   here.

/// A MAD (`IB_MGMT_MAD_SIZE`), and its common header.
pub const MAD_SIZE: usize = 256;
const MAD_HDR_LEN: usize = 24;
const BASE_VERSION: u8 = 1;
const METHOD_SEND: u8 = 0x03;
/// The connection manager's management class and its version.
pub const CLASS_CM: u8 = 0x07;
const CM_CLASS_VERSION: u8 = 2;
/// CM attribute IDs (`CM_*_ATTR_ID`).
pub const CM_REQ: u16 = 0x0010;
/// A REJ.
pub const CM_REJ: u16 = 0x0012;
/// A REP.
pub const CM_REP: u16 = 0x0013;
/// REJ reason `IB_CM_REJ_INVALID_GID`: the address the exchange used is
/// gone.
pub const REJ_INVALID_GID: u16 = 12;

/// The CM message of an exchange that the device sent last; its value is
/// a REJ's MessageRejected.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmSent {
    /// Our REQ is out: the active side, waiting for a REP.
    Req = 0,
    /// Our REP is out: the passive side, waiting for an RTU.
    Rep = 1,
}

/// What a REQ or REP the device sends says of its exchange.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CmExchange {
    /// The QP it speaks for (the message's local QPN).
    pub qpn: u32,
    /// Our communication ID.
    pub local_id: u32,
    /// The peer's (0 in a REQ: it has none yet).
    pub remote_id: u32,
    /// Which message it is.
    pub sent: CmSent,
}

fn be16_at(mad: &[u8], at: usize) -> Option<u16> {
    match mad.get(at..at.checked_add(2)?)? {
        [a, b] => Some(u16::from_be_bytes([*a, *b])),
        _ => None,
    }
}

fn be32_at(mad: &[u8], at: usize) -> Option<u32> {
    match mad.get(at..at.checked_add(4)?)? {
        [a, b, c, d] => Some(u32::from_be_bytes([*a, *b, *c, *d])),
        _ => None,
    }
}

/// A MAD's management class and attribute ID.
pub fn class_attr(mad: &[u8]) -> Option<(u8, u16)> {
    Some((*mad.get(1)?, be16_at(mad, 16)?))
}

/// The exchange a CM REQ or REP speaks for; `None` for any other MAD.
pub fn cm_exchange(mad: &[u8]) -> Option<CmExchange> {
    // Comm IDs first in both; the local QPN is a REQ's 32nd CM byte, a
    // REP's 12th, in the top 24 bits of a 32-bit field.
    let (sent, remote_id, qpn) = match class_attr(mad)? {
        (CLASS_CM, CM_REQ) => (CmSent::Req, 0, be32_at(mad, MAD_HDR_LEN + 32)?),
        (CLASS_CM, CM_REP) => (
            CmSent::Rep,
            be32_at(mad, MAD_HDR_LEN + 4)?,
            be32_at(mad, MAD_HDR_LEN + 12)?,
        ),
        _ => return None,
    };
    Some(CmExchange {
        qpn: qpn >> 8,
        local_id: be32_at(mad, MAD_HDR_LEN)?,
        remote_id,
        sent,
    })
}

/// A REJ as the peer of exchange `x` would send it, rejecting our last
/// message for `reason`: its local ID is our remote one and the other way
/// round.
pub fn cm_rej(x: &CmExchange, reason: u16) -> [u8; MAD_SIZE] {
    let mut m = [0u8; MAD_SIZE];
    m[0] = BASE_VERSION;
    m[1] = CLASS_CM;
    m[2] = CM_CLASS_VERSION;
    m[3] = METHOD_SEND;
    m[16..18].copy_from_slice(&CM_REJ.to_be_bytes());
    m[24..28].copy_from_slice(&x.remote_id.to_be_bytes());
    m[28..32].copy_from_slice(&x.local_id.to_be_bytes());
    // MessageRejected: the top 2 bits of the 8th CM byte.
    m[32] = (x.sent as u8) << 6;
    m[34..36].copy_from_slice(&reason.to_be_bytes());
    m
}

/// The GIDs of a REQ's primary path: the sender's (local) and ours
/// (remote), at its 56th and 72nd CM bytes.
pub fn cm_req_gids(mad: &[u8]) -> Option<([u8; 16], [u8; 16])> {
    let gid = |at: usize| -> Option<[u8; 16]> {
        mad.get(MAD_HDR_LEN.checked_add(at)?..MAD_HDR_LEN.checked_add(at)?.checked_add(16)?)?
            .try_into()
            .ok()
    };
    Some((gid(56)?, gid(72)?))
}

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
