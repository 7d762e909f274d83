// SPDX-License-Identifier: GPL-2.0

//! The static flow hash: bonding's `xmit_hash_policy=layer3+4` fold over a
//! RoCEv2 flow.
//!
//! Fold (as `bond_xmit_hash()` -> `bond_ip_hash()` in `drivers/net/bonding`):
//!
//! ```text
//! h  = ports ^ src ^ dst    ports = the UDP source and destination port
//!                                   as they sit in the header (4 bytes)
//!                           src/dst = the IPv4 address (4 bytes); for IPv6
//!                                   the XOR of its four 32-bit words
//! h ^= h >> 16
//! h ^= h >> 8
//! h >>= 1                   drops the lowest bit (even-port patterns)
//! member = usable[h % number_of_usable_members]
//! ```
//!
//! Every 4-byte group is read little-endian from wire order, which is what the
//! kernel computes on x86_64 and arm64 (it XORs `__be32` words loaded
//! natively), so a flow maps exactly as a layer3+4 bond on those hosts would map
//! it over the same number of slaves. The destination port of RoCEv2 is
//! always 4791, so the UDP source port (which RoCE derives from the flow label
//! or the QPNs) is what spreads flows between the same two addresses.
//!
//! The mapping is stable for a fixed usable set; when the set changes, flows
//! remap as bonding's do (modulo over the new count).

/// UDP destination port of every RoCEv2 packet (IANA).
pub const ROCE_V2_UDP_DPORT: u16 = 4791;

/// The flow a QP will carry, as far as it is known at placement time (fields
/// that are not known yet are zero, which still hashes deterministically).
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash, Debug)]
pub struct FlowKey {
    /// Source address in GID form, network byte order (IPv4 as `::ffff:a.b.c.d`).
    pub src: [u8; 16],
    /// Destination address in GID form, network byte order.
    pub dst: [u8; 16],
    /// RoCEv2 UDP source port.
    pub udp_sport: u16,
}

impl FlowKey {
    /// A flow between two IPv4 addresses (network byte order).
    pub const fn ipv4(src: [u8; 4], dst: [u8; 4], udp_sport: u16) -> Self {
        FlowKey {
            src: v4_mapped(src),
            dst: v4_mapped(dst),
            udp_sport,
        }
    }

    /// A flow between two GIDs (IPv6 or IPv4-mapped, network byte order).
    pub const fn from_gids(src: [u8; 16], dst: [u8; 16], udp_sport: u16) -> Self {
        FlowKey {
            src,
            dst,
            udp_sport,
        }
    }
}

const fn v4_mapped(a: [u8; 4]) -> [u8; 16] {
    let [a0, a1, a2, a3] = a;
    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, a0, a1, a2, a3]
}

/// The 32-bit word bonding XORs in for one address.
const fn addr_word(a: &[u8; 16]) -> u32 {
    let [a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15] = *a;
    let v4 = u32::from_le_bytes([a12, a13, a14, a15]);
    let mapped =
        (a0 | a1 | a2 | a3 | a4 | a5 | a6 | a7 | a8 | a9) == 0 && a10 == 0xff && a11 == 0xff;
    if mapped {
        v4
    } else {
        // ipv6_addr_hash(): XOR of the four words.
        u32::from_le_bytes([a0, a1, a2, a3])
            ^ u32::from_le_bytes([a4, a5, a6, a7])
            ^ u32::from_le_bytes([a8, a9, a10, a11])
            ^ v4
    }
}

/// Bonding's layer3+4 hash of a RoCEv2 flow (module docs give the fold).
pub const fn l34_hash(flow: &FlowKey) -> u32 {
    let [sh, sl] = flow.udp_sport.to_be_bytes();
    let [dh, dl] = ROCE_V2_UDP_DPORT.to_be_bytes();
    let ports = u32::from_le_bytes([sh, sl, dh, dl]);
    let mut h = ports ^ addr_word(&flow.src) ^ addr_word(&flow.dst);
    h ^= h >> 16;
    h ^= h >> 8;
    h >> 1
}

/// Position in a usable list of `count` members that `hash` maps to, or `None`
/// when `count` is zero.
pub const fn slot_for(hash: u32, count: u32) -> Option<u32> {
    hash.checked_rem(count)
}
