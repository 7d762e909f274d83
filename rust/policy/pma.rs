// SPDX-License-Identifier: GPL-2.0

//! The performance management (PMA) MADs a bond answers for its ports,
//! byte by byte (IBTA vol. 1, ch. 16.1; the layouts of the kernel's
//! `include/rdma/ib_pma.h`, counted here from the MAD's first byte).
//!
//! The RDMA core reads `/sys/class/infiniband/<dev>/ports/N/counters/`
//! through a device's `process_mad`: ClassPortInfo once at registration (a
//! port whose PMA has the extended-width capability gets the 64-bit data
//! counters), then PortCounters and PortCountersExt at every read. A bond
//! port's counters are its members' own (a rail port's member, or the sum
//! over an active-backup bond's members), so the bond answers
//! ClassPortInfo itself and asks the members for the counters; what a
//! member has no PMA for, the bond does not answer either (the read fails
//! rather than show a zero that would pass for a measurement).

use super::mad::MAD_SIZE;

/// The performance management class and its version.
const CLASS_PERF: u8 = 0x04;
const PERF_CLASS_VERSION: u8 = 1;
const BASE_VERSION: u8 = 1;
const METHOD_GET: u8 = 0x01;
const METHOD_GET_RESP: u8 = 0x81;
/// Attribute IDs (`IB_PMA_*`).
const ATTR_CLASS_PORT_INFO: u16 = 0x0001;
const ATTR_PORT_COUNTERS: u16 = 0x0012;
const ATTR_PORT_COUNTERS_EXT: u16 = 0x001D;
/// `IB_PMA_CLASS_CAP_EXT_WIDTH`: PortCountersExt has 64-bit data counters.
const CAP_EXT_WIDTH: u16 = 1 << 9;
/// Common MAD header fields.
const HDR_LEN: usize = 24;
const STATUS: usize = 4;
const TID: usize = 8;
const ATTR_ID: usize = 16;
/// The attribute's data: after the header and the class's 40 reserved bytes.
const DATA: usize = HDR_LEN + 40;
/// PortSelect in PortCounters and PortCountersExt.
const PORT_SELECT: usize = DATA + 1;
/// The end of ClassPortInfo's BaseVersion, ClassVersion, CapabilityMask.
const PORT_INFO_END: usize = DATA + 4;

/// A PMA request the bond answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmaGet {
    /// ClassPortInfo: answered by the bond itself.
    ClassPortInfo,
    /// PortCounters or PortCountersExt: the members' counters.
    Counters(CounterSet),
}

/// Which counter attribute, and the layout of its fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CounterSet {
    /// PortCounters: error counters and 32-bit data counters.
    Basic,
    /// PortCountersExt: 64-bit data and packet counters.
    Extended,
}

/// A counter field: its offset from [`DATA`] and its width in bits; two
/// 4-bit counters share the byte at 19.
const BASIC_FIELDS: [(usize, u32); 17] = [
    (4, 16),  // SymbolErrorCounter
    (6, 8),   // LinkErrorRecoveryCounter
    (7, 8),   // LinkDownedCounter
    (8, 16),  // PortRcvErrors
    (10, 16), // PortRcvRemotePhysicalErrors
    (12, 16), // PortRcvSwitchRelayErrors
    (14, 16), // PortXmitDiscards
    (16, 8),  // PortXmitConstraintErrors
    (17, 8),  // PortRcvConstraintErrors
    (19, 4),  // LocalLinkIntegrityErrors (bits 7:4)
    (19, 0),  // ExcessiveBufferOverrunErrors (bits 3:0), see `add_field`
    (22, 16), // VL15Dropped
    (24, 32), // PortXmitData
    (28, 32), // PortRcvData
    (32, 32), // PortXmitPkts
    (36, 32), // PortRcvPkts
    (40, 32), // PortXmitWait
];
const EXT_FIELDS: [(usize, u32); 8] = [
    (8, 64),
    (16, 64),
    (24, 64),
    (32, 64),
    (40, 64),
    (48, 64),
    (56, 64),
    (64, 64),
];

fn be16_at(mad: &[u8], at: usize) -> Option<u16> {
    match mad.get(at..at.checked_add(2)?)? {
        [a, b] => Some(u16::from_be_bytes([*a, *b])),
        _ => None,
    }
}

/// The PMA GET `mad` is, if the bond answers it.
pub fn pma_get(mad: &[u8]) -> Option<PmaGet> {
    let (&[base, class, version, method], _) = mad.split_first_chunk::<4>()?;
    if base != BASE_VERSION || class != CLASS_PERF || version != PERF_CLASS_VERSION {
        return None;
    }
    if method != METHOD_GET {
        return None;
    }
    match be16_at(mad, ATTR_ID)? {
        ATTR_CLASS_PORT_INFO => Some(PmaGet::ClassPortInfo),
        ATTR_PORT_COUNTERS => Some(PmaGet::Counters(CounterSet::Basic)),
        ATTR_PORT_COUNTERS_EXT => Some(PmaGet::Counters(CounterSet::Extended)),
        _ => None,
    }
}

/// A reply to `request` with its header (GetResp, status 0) and no data.
pub fn empty_reply(request: &[u8; MAD_SIZE]) -> [u8; MAD_SIZE] {
    let mut out = [0u8; MAD_SIZE];
    if let (Some(dst), Some(src)) = (out.get_mut(..HDR_LEN), request.get(..HDR_LEN)) {
        dst.copy_from_slice(src);
    }
    if let Some(m) = out.get_mut(3) {
        *m = METHOD_GET_RESP;
    }
    if let Some(s) = out.get_mut(STATUS..TID) {
        // Status and ClassSpecific: a plain success.
        s.fill(0);
    }
    out
}

/// The bond's ClassPortInfo: extended-width counters, which its members'
/// answers carry (a member without them has its PortCountersExt refused).
pub fn class_port_info(request: &[u8; MAD_SIZE]) -> [u8; MAD_SIZE] {
    let mut out = empty_reply(request);
    let cap = CAP_EXT_WIDTH.to_be_bytes();
    if let Some(info) = out.get_mut(DATA..PORT_INFO_END) {
        info.copy_from_slice(&[BASE_VERSION, PERF_CLASS_VERSION, cap[0], cap[1]]);
    }
    out
}

/// `request` as a member answers it: for its own port `port`.
pub fn for_member_port(request: &[u8; MAD_SIZE], port: u8) -> [u8; MAD_SIZE] {
    let mut out = *request;
    if let Some(p) = out.get_mut(PORT_SELECT) {
        *p = port;
    }
    out
}

/// The reply the bond sends for its port `port`: `sum` (the members'
/// counters added up, see [`add_counters`]) under `request`'s header.
pub fn counters_reply(request: &[u8; MAD_SIZE], sum: &[u8; MAD_SIZE], port: u8) -> [u8; MAD_SIZE] {
    let mut out = empty_reply(request);
    if let (Some(dst), Some(src)) = (out.get_mut(DATA..), sum.get(DATA..)) {
        dst.copy_from_slice(src);
    }
    if let Some(p) = out.get_mut(PORT_SELECT) {
        *p = port;
    }
    out
}

/// Adds one field of `add` to `sum`, saturating as PMA counters do.
fn add_field(sum: &mut [u8; MAD_SIZE], add: &[u8; MAD_SIZE], at: usize, bits: u32) {
    let width: usize = match bits {
        0 | 4 | 8 => 1,
        16 => 2,
        32 => 4,
        _ => 8,
    };
    let Some(range) = DATA
        .checked_add(at)
        .and_then(|start| Some(start..start.checked_add(width)?))
    else {
        return;
    };
    let (Some(s), Some(a)) = (sum.get_mut(range.clone()), add.get(range)) else {
        return;
    };
    let read = |b: &[u8]| {
        b.iter()
            .fold(0u64, |v, &x| v.checked_shl(8).unwrap_or(0) | u64::from(x))
    };
    let (sv, av) = (read(s), read(a));
    let nibbles = |v: u64| (v >> 4 & 0xf, v & 0xf);
    let total = match bits {
        // The two 4-bit counters of one byte: bits 7:4 (4), bits 3:0 (0).
        4 => {
            let ((sh, sl), (ah, _)) = (nibbles(sv), nibbles(av));
            sh.saturating_add(ah).min(0xf) << 4 | sl
        }
        0 => {
            let ((sh, sl), (_, al)) = (nibbles(sv), nibbles(av));
            sh << 4 | sl.saturating_add(al).min(0xf)
        }
        64 => sv.saturating_add(av),
        _ => sv.saturating_add(av).min(
            1u64.checked_shl(bits)
                .map_or(u64::MAX, |m| m.saturating_sub(1)),
        ),
    };
    // Big-endian, the last byte the lowest.
    for (b, shift) in s.iter_mut().rev().zip((0u32..).step_by(8)) {
        *b = total.checked_shr(shift).unwrap_or(0) as u8;
    }
}

/// Adds a member's counters (the data of its reply) to `sum`, field by
/// field, saturating; the reserved bytes and PortSelect stay as they are.
pub fn add_counters(set: CounterSet, sum: &mut [u8; MAD_SIZE], member: &[u8; MAD_SIZE]) {
    let fields: &[(usize, u32)] = match set {
        CounterSet::Basic => &BASIC_FIELDS,
        CounterSet::Extended => &EXT_FIELDS,
    };
    for &(at, bits) in fields {
        add_field(sum, member, at, bits);
    }
}
