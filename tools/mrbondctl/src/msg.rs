// SPDX-License-Identifier: GPL-2.0
//! rdma_mrbond messages: building request attributes and decoding replies
//! and notifications into [`Bond`] / [`Member`].
//!
//! Attribute layout follows `Documentation/netlink/specs/rdma_mrbond.yaml`:
//! every request is in the "bond" attribute set, members travel as
//! (multi-attr) `member` nests of the "member" set.

use neli::consts::genl::NlAttrType;
use neli::genl::{AttrTypeBuilder, Genlmsghdr, GenlmsghdrBuilder, Nlattr, NlattrBuilder};
use neli::types::{Buffer, GenlBuffer};
use neli::{Size, ToBytes};

use crate::attrs::{
    AdminState, BondAttr, Cmd, KnobStatusAttr, MemberAttr, Mode, PfcAttr, Policy, COUNTER_NAMES,
    ECN_KNOBS, FAMILY_VERSION,
};
use crate::error::Error;

/// A generic netlink message of the rdma_mrbond family.
pub type GenlMsg = Genlmsghdr<Cmd, BondAttr>;

/// One member as given on the command line (`member IBDEV weight N`, or
/// `member set`'s settings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberSpec {
    /// RDMA device name.
    pub ibdev: String,
    /// Admin weight (kernel accepts 1..1000).
    pub weight: Option<u32>,
    /// Admin state (member set only).
    pub admin: Option<AdminState>,
    /// Capacity in Mb/s for utilisation, 0 = link speed (member set only).
    pub capacity_mbps: Option<u32>,
}

impl MemberSpec {
    /// Member `ibdev`, nothing else given.
    pub fn new(ibdev: &str) -> Self {
        MemberSpec {
            ibdev: ibdev.to_string(),
            weight: None,
            admin: None,
            capacity_mbps: None,
        }
    }
}

/// A member as reported by BOND_GET or MEMBER_CHANGE_NTF; absent attributes
/// are `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Member {
    pub ibdev: String,
    pub netdev_ifindex: Option<u32>,
    pub weight: Option<u32>,
    /// Raw `enum rdma_mrbond_admin_state`.
    pub admin: Option<u32>,
    /// Raw `enum rdma_mrbond_usability`.
    pub usability: Option<u32>,
    /// Raw `enum rdma_mrbond_reason`.
    pub reason: Option<u32>,
    pub qps: Option<u32>,
    pub outstanding: Option<u64>,
    pub transitions: Option<u64>,
    pub lacp_slave: bool,
    pub link_up: Option<bool>,
    pub tx_enabled: Option<bool>,
    /// Status of every knob, knobs of equal status together.
    pub knob_status: Vec<KnobStatus>,
    /// Congestion counters; `None` when the kernel sent no counters nest.
    pub counters: Option<Counters>,
    pub pfc_override: Option<u32>,
    /// Transmit utilisation, permille of capacity; `None` while unknown.
    pub utilisation: Option<u32>,
    /// Capacity for utilisation, Mb/s; 0 = the link speed.
    pub capacity_mbps: Option<u32>,
    /// QPs placed on the member since it joined.
    pub placements: Option<u64>,
    /// WRs of its QPs completed with a flush error.
    pub flushed_wr: Option<u64>,
    /// Posts refused because a key was another member's.
    pub wrong_member_key: Option<u64>,
}

/// One `knob-status` nest: the knobs (bit = knob id) sharing a status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KnobStatus {
    pub knobs: u32,
    /// Raw `enum rdma_mrbond_knob_state`.
    pub state: Option<u32>,
    /// Raw `enum rdma_mrbond_unsupported_reason`.
    pub reason: Option<u32>,
    pub errno: Option<u32>,
}

/// A `counters` nest, by attribute number - 1; `None` is unavailable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counters(pub [Option<u64>; COUNTER_NAMES.len()]);

/// ECN settings (`ecn` nest), by knob id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ecn(pub [Option<u32>; ECN_KNOBS]);

/// A bond as reported by BOND_GET / BOND_NEW, or the bond part of a
/// MEMBER_CHANGE_NTF; absent attributes are `None`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bond {
    pub ibdev_index: Option<u32>,
    pub name: String,
    /// Raw `enum rdma_mrbond_mode`.
    pub mode: Option<u32>,
    /// Raw `enum rdma_mrbond_policy`.
    pub policy: Option<u32>,
    pub lacp_source: Option<u32>,
    pub members: Vec<Member>,
    pub usable_members: Option<u32>,
    pub placements: Option<u64>,
    pub placement_failures: Option<u64>,
    /// `None` when the kernel has no knob support (no `ecn` nest).
    pub ecn: Option<Ecn>,
    /// PFC bitmap; `None` while unset.
    pub pfc_bitmap: Option<u32>,
    /// Sums over members; `None` when no counters nest was sent.
    pub counters: Option<Counters>,
    /// bond-change-ntf: `enum rdma_mrbond_bond_change` bits.
    pub changes: Option<u32>,
}

// ---------------------------------------------------------------------------
// Requests

fn attr<T, P>(ty: T, payload: P) -> Result<Nlattr<T, Buffer>, Error>
where
    T: NlAttrType,
    P: Size + ToBytes,
{
    let ty = AttrTypeBuilder::default()
        .nla_type(ty)
        .build()
        .map_err(Error::local)?;
    NlattrBuilder::default()
        .nla_type(ty)
        .nla_payload(payload)
        .build()
        .map_err(Error::local)
}

/// A `member` nest (NLA_F_NESTED set) with ibdev and the optional fields.
fn member_nest(m: &MemberSpec) -> Result<Nlattr<BondAttr, Buffer>, Error> {
    let mut nest = attr(BondAttr::Member, Buffer::new())?
        .nest(&attr(MemberAttr::Ibdev, m.ibdev.as_str())?)
        .map_err(Error::local)?;
    if let Some(w) = m.weight {
        nest = nest
            .nest(&attr(MemberAttr::Weight, w)?)
            .map_err(Error::local)?;
    }
    if let Some(a) = m.admin {
        nest = nest
            .nest(&attr(MemberAttr::Admin, a.value())?)
            .map_err(Error::local)?;
    }
    if let Some(c) = m.capacity_mbps {
        nest = nest
            .nest(&attr(MemberAttr::CapacityMbps, c)?)
            .map_err(Error::local)?;
    }
    Ok(nest)
}

fn genl(cmd: Cmd, attrs: GenlBuffer<BondAttr, Buffer>) -> Result<GenlMsg, Error> {
    GenlmsghdrBuilder::default()
        .cmd(cmd)
        .version(FAMILY_VERSION)
        .attrs(attrs)
        .build()
        .map_err(Error::local)
}

/// BOND_NEW: name, [mode], [policy], [lacp-source], member...
pub fn bond_new(
    name: &str,
    mode: Option<Mode>,
    policy: Option<Policy>,
    lacp_source: Option<u32>,
    members: &[MemberSpec],
) -> Result<GenlMsg, Error> {
    let mut a = GenlBuffer::new();
    a.push(attr(BondAttr::Name, name)?);
    if let Some(m) = mode {
        a.push(attr(BondAttr::Mode, m.value())?);
    }
    if let Some(p) = policy {
        a.push(attr(BondAttr::Policy, p.value())?);
    }
    if let Some(ifindex) = lacp_source {
        a.push(attr(BondAttr::LacpSource, ifindex)?);
    }
    for m in members {
        a.push(member_nest(m)?);
    }
    genl(Cmd::BondNew, a)
}

/// BOND_DEL: name.
pub fn bond_del(name: &str) -> Result<GenlMsg, Error> {
    genl(
        Cmd::BondDel,
        [attr(BondAttr::Name, name)?].into_iter().collect(),
    )
}

/// BOND_GET: `Some(name)` for the do request, `None` for the dump request.
pub fn bond_get(name: Option<&str>) -> Result<GenlMsg, Error> {
    let mut a = GenlBuffer::new();
    if let Some(n) = name {
        a.push(attr(BondAttr::Name, n)?);
    }
    genl(Cmd::BondGet, a)
}

/// BOND_SET: name, policy.
pub fn bond_set(name: &str, policy: Policy) -> Result<GenlMsg, Error> {
    genl(
        Cmd::BondSet,
        [
            attr(BondAttr::Name, name)?,
            attr(BondAttr::Policy, policy.value())?,
        ]
        .into_iter()
        .collect(),
    )
}

/// ECN_SET: name, ecn nest with the given (knob id, value) pairs.
pub fn ecn_set(name: &str, values: &[(usize, u32)]) -> Result<GenlMsg, Error> {
    let mut nest = attr(BondAttr::Ecn, Buffer::new())?;
    for &(id, v) in values {
        let ty = u16::try_from(id + 1).map_err(Error::local)?;
        nest = nest.nest(&attr(ty, v)?).map_err(Error::local)?;
    }
    genl(
        Cmd::EcnSet,
        [attr(BondAttr::Name, name)?, nest].into_iter().collect(),
    )
}

/// What PFC_SET does to one member's override.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PfcOverride {
    /// Use this bitmap instead of the bond's.
    Set(u32),
    /// Drop the override.
    Clear,
}

/// PFC_SET: name, [pfc nest with the bitmap], [member nest with an override].
pub fn pfc_set(
    name: &str,
    bitmap: Option<u32>,
    member: Option<(&str, PfcOverride)>,
) -> Result<GenlMsg, Error> {
    let mut a = GenlBuffer::new();
    a.push(attr(BondAttr::Name, name)?);
    if let Some(b) = bitmap {
        a.push(
            attr(BondAttr::Pfc, Buffer::new())?
                .nest(&attr(PfcAttr::EnableBitmap, b)?)
                .map_err(Error::local)?,
        );
    }
    if let Some((ibdev, o)) = member {
        let nest = attr(BondAttr::Member, Buffer::new())?
            .nest(&attr(MemberAttr::Ibdev, ibdev)?)
            .map_err(Error::local)?;
        let nest = match o {
            PfcOverride::Set(v) => nest.nest(&attr(MemberAttr::PfcOverride, v)?),
            PfcOverride::Clear => nest.nest(&attr(MemberAttr::PfcOverrideClear, Buffer::new())?),
        }
        .map_err(Error::local)?;
        a.push(nest);
    }
    genl(Cmd::PfcSet, a)
}

/// MEMBER_ADD / MEMBER_DEL / MEMBER_SET: name, member nest.
pub fn member_op(cmd: Cmd, name: &str, member: &MemberSpec) -> Result<GenlMsg, Error> {
    genl(
        cmd,
        [attr(BondAttr::Name, name)?, member_nest(member)?]
            .into_iter()
            .collect(),
    )
}

// ---------------------------------------------------------------------------
// Replies

fn bad_len(what: &str, len: usize) -> Error {
    Error::Local(format!(
        "malformed reply: attribute {what} has length {len}"
    ))
}

fn get_u32(what: &str, p: &[u8]) -> Result<u32, Error> {
    let b: [u8; 4] = p.try_into().map_err(|_| bad_len(what, p.len()))?;
    Ok(u32::from_ne_bytes(b))
}

/// u64 counters: 8 bytes (nla_put_u64_64bit), or 4 if the kernel used
/// nla_put_uint for a small value.
fn get_u64(what: &str, p: &[u8]) -> Result<u64, Error> {
    match p.len() {
        8 => p
            .try_into()
            .map(u64::from_ne_bytes)
            .map_err(|_| bad_len(what, 8)),
        4 => get_u32(what, p).map(u64::from),
        n => Err(bad_len(what, n)),
    }
}

fn get_u8(what: &str, p: &[u8]) -> Result<u8, Error> {
    p.first().copied().ok_or_else(|| bad_len(what, 0))
}

/// NLA_NUL_STRING/NLA_STRING payload: up to the first NUL.
fn get_string(p: &[u8]) -> String {
    let end = p.iter().position(|&b| b == 0).unwrap_or(p.len());
    String::from_utf8_lossy(&p[..end]).into_owned()
}

/// Decodes one `member` nest. Unknown attributes are ignored (newer kernel).
pub fn parse_member(nest: &Nlattr<BondAttr, Buffer>) -> Result<Member, Error> {
    let handle = nest
        .get_attr_handle::<MemberAttr>()
        .map_err(|e| Error::Local(format!("malformed member nest: {e}")))?;
    let mut m = Member::default();
    for a in handle.iter() {
        let p = a.nla_payload().as_ref();
        match *a.nla_type().nla_type() {
            MemberAttr::Ibdev => m.ibdev = get_string(p),
            MemberAttr::NetdevIfindex => m.netdev_ifindex = Some(get_u32("netdev-ifindex", p)?),
            MemberAttr::Weight => m.weight = Some(get_u32("weight", p)?),
            MemberAttr::Admin => m.admin = Some(get_u32("admin", p)?),
            MemberAttr::Usability => m.usability = Some(get_u32("usability", p)?),
            MemberAttr::Reason => m.reason = Some(get_u32("reason", p)?),
            MemberAttr::Qps => m.qps = Some(get_u32("qps", p)?),
            MemberAttr::Outstanding => m.outstanding = Some(get_u64("outstanding", p)?),
            MemberAttr::Transitions => m.transitions = Some(get_u64("transitions", p)?),
            MemberAttr::LacpSlave => m.lacp_slave = true,
            MemberAttr::LinkUp => m.link_up = Some(get_u8("link-up", p)? != 0),
            MemberAttr::TxEnabled => m.tx_enabled = Some(get_u8("tx-enabled", p)? != 0),
            MemberAttr::KnobStatus => m.knob_status.push(parse_knob_status(a)?),
            MemberAttr::Counters => m.counters = Some(parse_counters(a)?),
            MemberAttr::PfcOverride => m.pfc_override = Some(get_u32("pfc-override", p)?),
            MemberAttr::Utilisation => m.utilisation = Some(get_u32("utilisation", p)?),
            MemberAttr::CapacityMbps => m.capacity_mbps = Some(get_u32("capacity-mbps", p)?),
            MemberAttr::Placements => m.placements = Some(get_u64("placements", p)?),
            MemberAttr::FlushedWr => m.flushed_wr = Some(get_u64("flushed-wr", p)?),
            MemberAttr::WrongMemberKey => {
                m.wrong_member_key = Some(get_u64("wrong-member-key", p)?)
            }
            MemberAttr::PfcOverrideClear | MemberAttr::UnrecognizedConst(_) => {}
        }
    }
    Ok(m)
}

type Handle<'a, T> = neli::attr::AttrHandle<'a, GenlBuffer<T, Buffer>, Nlattr<T, Buffer>>;

fn nested<'a, T: NlAttrType, U: NlAttrType>(
    nest: &'a Nlattr<U, Buffer>,
    what: &str,
) -> Result<Handle<'a, T>, Error> {
    nest.get_attr_handle::<T>()
        .map_err(|e| Error::Local(format!("malformed {what} nest: {e}")))
}

/// Decodes a `knob-status` nest.
fn parse_knob_status<T: NlAttrType>(nest: &Nlattr<T, Buffer>) -> Result<KnobStatus, Error> {
    let mut k = KnobStatus::default();
    for a in nested::<KnobStatusAttr, _>(nest, "knob-status")?.iter() {
        let p = a.nla_payload().as_ref();
        match *a.nla_type().nla_type() {
            KnobStatusAttr::Knobs => k.knobs = get_u32("knobs", p)?,
            KnobStatusAttr::State => k.state = Some(get_u32("state", p)?),
            KnobStatusAttr::Reason => k.reason = Some(get_u32("reason", p)?),
            KnobStatusAttr::Errno => k.errno = Some(get_u32("errno", p)?),
            KnobStatusAttr::UnrecognizedConst(_) => {}
        }
    }
    Ok(k)
}

/// Decodes a `counters` nest (attribute numbers 1..=6).
fn parse_counters<T: NlAttrType>(nest: &Nlattr<T, Buffer>) -> Result<Counters, Error> {
    let mut c = Counters::default();
    for a in nested::<u16, _>(nest, "counters")?.iter() {
        let ty = usize::from(*a.nla_type().nla_type());
        if let Some(slot) = ty.checked_sub(1).and_then(|i| c.0.get_mut(i)) {
            *slot = Some(get_u64("counter", a.nla_payload().as_ref())?);
        }
    }
    Ok(c)
}

/// Decodes the `ecn` nest (attribute number = knob id + 1).
fn parse_ecn<T: NlAttrType>(nest: &Nlattr<T, Buffer>) -> Result<Ecn, Error> {
    let mut e = Ecn::default();
    for a in nested::<u16, _>(nest, "ecn")?.iter() {
        let ty = usize::from(*a.nla_type().nla_type());
        if let Some(slot) = ty.checked_sub(1).and_then(|i| e.0.get_mut(i)) {
            *slot = Some(get_u32("ecn", a.nla_payload().as_ref())?);
        }
    }
    Ok(e)
}

/// Decodes the `pfc` nest: the bitmap, if set.
fn parse_pfc<T: NlAttrType>(nest: &Nlattr<T, Buffer>) -> Result<Option<u32>, Error> {
    let mut bitmap = None;
    for a in nested::<PfcAttr, _>(nest, "pfc")?.iter() {
        if *a.nla_type().nla_type() == PfcAttr::EnableBitmap {
            bitmap = Some(get_u32("enable-bitmap", a.nla_payload().as_ref())?);
        }
    }
    Ok(bitmap)
}

/// Decodes a BOND_GET / BOND_NEW reply or a MEMBER_CHANGE_NTF. Unknown
/// attributes (and pad attributes) are ignored.
pub fn parse_bond(msg: &GenlMsg) -> Result<Bond, Error> {
    let mut b = Bond::default();
    for a in msg.attrs().iter() {
        let p = a.nla_payload().as_ref();
        match *a.nla_type().nla_type() {
            BondAttr::IbdevIndex => b.ibdev_index = Some(get_u32("ibdev-index", p)?),
            BondAttr::Name => b.name = get_string(p),
            BondAttr::Mode => b.mode = Some(get_u32("mode", p)?),
            BondAttr::Policy => b.policy = Some(get_u32("policy", p)?),
            BondAttr::LacpSource => b.lacp_source = Some(get_u32("lacp-source", p)?),
            BondAttr::Member => b.members.push(parse_member(a)?),
            BondAttr::UsableMembers => b.usable_members = Some(get_u32("usable-members", p)?),
            BondAttr::Placements => b.placements = Some(get_u64("placements", p)?),
            BondAttr::PlacementFailures => {
                b.placement_failures = Some(get_u64("placement-failures", p)?)
            }
            BondAttr::Ecn => b.ecn = Some(parse_ecn(a)?),
            BondAttr::Pfc => b.pfc_bitmap = parse_pfc(a)?,
            BondAttr::Counters => b.counters = Some(parse_counters(a)?),
            BondAttr::Changes => b.changes = Some(get_u32("changes", p)?),
            BondAttr::UnrecognizedConst(_) => {}
        }
    }
    Ok(b)
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io::Cursor;

    use neli::FromBytesWithInput;

    use super::*;

    /// Serialises the generic netlink part (genlmsghdr + attributes).
    pub(crate) fn genl_bytes(msg: &GenlMsg) -> Vec<u8> {
        let mut c = Cursor::new(Vec::new());
        msg.to_bytes(&mut c).expect("serialises");
        c.into_inner()
    }

    fn nla(ty: u16, payload: &[u8]) -> Vec<u8> {
        let len = 4 + payload.len();
        let mut v = Vec::new();
        v.extend_from_slice(&(len as u16).to_ne_bytes());
        v.extend_from_slice(&ty.to_ne_bytes());
        v.extend_from_slice(payload);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v
    }

    /// A canned BOND_GET reply (genlmsghdr + attributes) as the kernel
    /// would lay it out: nests flagged NLA_F_NESTED, u64 counters 8 bytes,
    /// a pad attribute (type 0) that must be ignored, an attribute from
    /// the future (type 42) that must be ignored too.
    pub(crate) fn canned_bond_get_reply() -> Vec<u8> {
        let mut m0 = Vec::new();
        m0.extend(nla(1, b"rxe0\0"));
        m0.extend(nla(2, &3u32.to_ne_bytes()));
        m0.extend(nla(3, &100u32.to_ne_bytes()));
        m0.extend(nla(4, &0u32.to_ne_bytes())); // admin up
        m0.extend(nla(5, &0u32.to_ne_bytes())); // usable
        m0.extend(nla(6, &0u32.to_ne_bytes())); // ready
        m0.extend(nla(7, &7u32.to_ne_bytes()));
        m0.extend(nla(8, &12u64.to_ne_bytes()));
        m0.extend(nla(9, &1u64.to_ne_bytes()));
        m0.extend(nla(10, &[]));
        m0.extend(nla(11, &[1]));
        m0.extend(nla(12, &[1]));
        m0.extend(nla(17, &375u32.to_ne_bytes()));
        m0.extend(nla(18, &0u32.to_ne_bytes()));
        m0.extend(nla(19, &9u64.to_ne_bytes()));
        m0.extend(nla(20, &40u64.to_ne_bytes()));
        m0.extend(nla(21, &2u64.to_ne_bytes()));

        let mut m1 = Vec::new();
        m1.extend(nla(1, b"rxe1\0"));
        m1.extend(nla(2, &4u32.to_ne_bytes()));
        m1.extend(nla(3, &50u32.to_ne_bytes()));
        m1.extend(nla(4, &1u32.to_ne_bytes())); // admin drain
        m1.extend(nla(5, &2u32.to_ne_bytes())); // unusable
        m1.extend(nla(6, &7u32.to_ne_bytes())); // lacp-not-distributing
        m1.extend(nla(7, &0u32.to_ne_bytes()));
        m1.extend(nla(8, &0u32.to_ne_bytes())); // 4-byte u64 (nla_put_uint)
        m1.extend(nla(9, &(1u64 << 33).to_ne_bytes()));
        m1.extend(nla(18, &100u32.to_ne_bytes()));

        let mut v = vec![u8::from(Cmd::BondGet), 1, 0, 0];
        v.extend(nla(1, &5u32.to_ne_bytes()));
        v.extend(nla(2, b"mrbond0\0"));
        v.extend(nla(3, &1u32.to_ne_bytes())); // active-backup
        v.extend(nla(4, &1u32.to_ne_bytes())); // lqf
        v.extend(nla(5, &9u32.to_ne_bytes()));
        v.extend(nla(0x8000 | 6, &m0));
        v.extend(nla(0x8000 | 6, &m1));
        v.extend(nla(7, &1u32.to_ne_bytes()));
        v.extend(nla(0, &[0; 4])); // pad
        v.extend(nla(8, &123_456u64.to_ne_bytes()));
        v.extend(nla(9, &2u64.to_ne_bytes()));
        v.extend(nla(42, &[1, 2, 3]));
        v
    }

    pub(crate) fn canned_bond() -> Bond {
        let bytes = canned_bond_get_reply();
        let msg = GenlMsg::from_bytes_with_input(&mut Cursor::new(&bytes), bytes.len())
            .expect("canned reply parses");
        parse_bond(&msg).expect("canned reply decodes")
    }

    // Expected bytes are written out little-endian.
    #[cfg(target_endian = "little")]
    #[test]
    fn bond_new_request_layout() {
        let members = [
            MemberSpec {
                weight: Some(100),
                ..MemberSpec::new("rxe0")
            },
            MemberSpec::new("mlx5_1"),
        ];
        let msg = bond_new(
            "mrbond0",
            Some(Mode::ActiveBackup),
            Some(Policy::Lqf),
            Some(7),
            &members,
        )
        .expect("builds");

        // Hand-computed, little-endian (x86_64/aarch64 test hosts).
        #[rustfmt::skip]
        let expected: Vec<u8> = vec![
            // genlmsghdr: cmd BOND_NEW (2), version 1, reserved
            2, 1, 0, 0,
            // NAME (2): len 4+8 = 12, "mrbond0\0"
            12, 0, 2, 0, b'm', b'r', b'b', b'o', b'n', b'd', b'0', 0,
            // MODE (3): u32 1 (active-backup)
            8, 0, 3, 0, 1, 0, 0, 0,
            // POLICY (4): u32 1 (lqf)
            8, 0, 4, 0, 1, 0, 0, 0,
            // LACP_SOURCE (5): u32 ifindex 7
            8, 0, 5, 0, 7, 0, 0, 0,
            // MEMBER (6 | NLA_F_NESTED): len 4 + 12 + 8 = 24
            24, 0, 6, 0x80,
                // IBDEV (1): len 4+5 = 9, "rxe0\0" + 3 pad
                9, 0, 1, 0, b'r', b'x', b'e', b'0', 0, 0, 0, 0,
                // WEIGHT (3): u32 100
                8, 0, 3, 0, 100, 0, 0, 0,
            // MEMBER (6 | NLA_F_NESTED): len 4 + 12 = 16
            16, 0, 6, 0x80,
                // IBDEV (1): len 4+7 = 11, "mlx5_1\0" + 1 pad
                11, 0, 1, 0, b'm', b'l', b'x', b'5', b'_', b'1', 0, 0,
        ];
        assert_eq!(genl_bytes(&msg), expected);
    }

    // Expected bytes are written out little-endian.
    #[cfg(target_endian = "little")]
    #[test]
    fn bond_new_omits_unset_optionals() {
        let msg = bond_new("b", None, None, None, &[MemberSpec::new("r")]).expect("builds");
        #[rustfmt::skip]
        let expected: Vec<u8> = vec![
            2, 1, 0, 0,
            6, 0, 2, 0, b'b', 0, 0, 0,
            12, 0, 6, 0x80,
                6, 0, 1, 0, b'r', 0, 0, 0,
        ];
        assert_eq!(genl_bytes(&msg), expected);
    }

    // Expected bytes are written out little-endian.
    #[cfg(target_endian = "little")]
    #[test]
    fn member_set_request_layout() {
        let m = MemberSpec {
            ibdev: "rxe1".into(),
            weight: Some(1000),
            admin: Some(AdminState::Drain),
            capacity_mbps: Some(100),
        };
        let msg = member_op(Cmd::MemberSet, "mrbond1", &m).expect("builds");
        #[rustfmt::skip]
        let expected: Vec<u8> = vec![
            7, 1, 0, 0,
            12, 0, 2, 0, b'm', b'r', b'b', b'o', b'n', b'd', b'1', 0,
            40, 0, 6, 0x80,
                9, 0, 1, 0, b'r', b'x', b'e', b'1', 0, 0, 0, 0,
                8, 0, 3, 0, 0xe8, 0x03, 0, 0,
                8, 0, 4, 0, 1, 0, 0, 0,
                8, 0, 18, 0, 100, 0, 0, 0,
        ];
        assert_eq!(genl_bytes(&msg), expected);
    }

    // Expected bytes are written out little-endian.
    #[cfg(target_endian = "little")]
    #[test]
    fn small_requests() {
        assert_eq!(
            genl_bytes(&bond_get(None).expect("builds")),
            vec![1, 1, 0, 0]
        );
        assert_eq!(
            genl_bytes(&bond_del("x").expect("builds")),
            vec![3, 1, 0, 0, 6, 0, 2, 0, b'x', 0, 0, 0]
        );
        assert_eq!(
            genl_bytes(&bond_set("x", Policy::Pinned).expect("builds")),
            vec![4, 1, 0, 0, 6, 0, 2, 0, b'x', 0, 0, 0, 8, 0, 4, 0, 4, 0, 0, 0]
        );
    }

    #[test]
    fn parse_canned_bond_get_reply() {
        let b = canned_bond();
        assert_eq!(b.name, "mrbond0");
        assert_eq!(b.ibdev_index, Some(5));
        assert_eq!(b.mode, Some(Mode::ActiveBackup.value()));
        assert_eq!(b.policy, Some(Policy::Lqf.value()));
        assert_eq!(b.lacp_source, Some(9));
        assert_eq!(b.usable_members, Some(1));
        assert_eq!(b.placements, Some(123_456));
        assert_eq!(b.placement_failures, Some(2));
        assert_eq!(
            b.members,
            vec![
                Member {
                    ibdev: "rxe0".into(),
                    netdev_ifindex: Some(3),
                    weight: Some(100),
                    admin: Some(0),
                    usability: Some(0),
                    reason: Some(0),
                    qps: Some(7),
                    outstanding: Some(12),
                    transitions: Some(1),
                    lacp_slave: true,
                    link_up: Some(true),
                    tx_enabled: Some(true),
                    knob_status: vec![],
                    counters: None,
                    pfc_override: None,
                    utilisation: Some(375),
                    capacity_mbps: Some(0),
                    placements: Some(9),
                    flushed_wr: Some(40),
                    wrong_member_key: Some(2),
                },
                Member {
                    ibdev: "rxe1".into(),
                    netdev_ifindex: Some(4),
                    weight: Some(50),
                    admin: Some(1),
                    usability: Some(2),
                    reason: Some(7),
                    qps: Some(0),
                    outstanding: Some(0),
                    transitions: Some(1 << 33),
                    lacp_slave: false,
                    link_up: None,
                    tx_enabled: None,
                    knob_status: vec![],
                    counters: None,
                    pfc_override: None,
                    utilisation: None,
                    capacity_mbps: Some(100),
                    ..Member::default()
                },
            ]
        );
    }

    // Expected bytes are written out little-endian.
    #[cfg(target_endian = "little")]
    #[test]
    fn knob_requests_layout() {
        #[rustfmt::skip]
        let ecn: Vec<u8> = vec![
            9, 1, 0, 0,
            6, 0, 2, 0, b'b', 0, 0, 0,
            // ECN (10 | NLA_F_NESTED): enable (id 19 -> attr 20) = 0, rp_rpg_gd (11 -> 12) = 16
            20, 0, 10, 0x80,
                8, 0, 20, 0, 0, 0, 0, 0,
                8, 0, 12, 0, 16, 0, 0, 0,
        ];
        assert_eq!(
            genl_bytes(&ecn_set("b", &[(19, 0), (11, 16)]).expect("builds")),
            ecn
        );
        #[rustfmt::skip]
        let pfc: Vec<u8> = vec![
            10, 1, 0, 0,
            6, 0, 2, 0, b'b', 0, 0, 0,
            // PFC (11 | NESTED): enable-bitmap 0x08
            12, 0, 11, 0x80,
                8, 0, 1, 0, 8, 0, 0, 0,
            // MEMBER (6 | NESTED): ibdev "r", pfc-override-clear (16)
            16, 0, 6, 0x80,
                6, 0, 1, 0, b'r', 0, 0, 0,
                4, 0, 16, 0,
        ];
        assert_eq!(
            genl_bytes(&pfc_set("b", Some(8), Some(("r", PfcOverride::Clear))).expect("builds")),
            pfc
        );
    }

    #[test]
    fn knob_attributes_decode() {
        let mut ks = Vec::new();
        ks.extend(nla(1, &(1u32 << 20).to_ne_bytes()));
        ks.extend(nla(2, &4u32.to_ne_bytes()));
        ks.extend(nla(4, &5u32.to_ne_bytes()));
        let mut counters = Vec::new();
        counters.extend(nla(5, &3u64.to_ne_bytes()));
        let mut m = Vec::new();
        m.extend(nla(1, b"rxe1\0"));
        m.extend(nla(0x8000 | 13, &ks));
        m.extend(nla(0x8000 | 14, &counters));
        m.extend(nla(15, &0x0cu32.to_ne_bytes()));
        let mut ecn = Vec::new();
        ecn.extend(nla(20, &1u32.to_ne_bytes()));
        let mut pfc = Vec::new();
        pfc.extend(nla(1, &8u32.to_ne_bytes()));
        let mut v = vec![u8::from(Cmd::BondGet), 1, 0, 0];
        v.extend(nla(2, b"mrbond0\0"));
        v.extend(nla(0x8000 | 6, &m));
        v.extend(nla(0x8000 | 10, &ecn));
        v.extend(nla(0x8000 | 11, &pfc));
        v.extend(nla(0x8000 | 12, &counters));
        let msg = GenlMsg::from_bytes_with_input(&mut Cursor::new(&v), v.len()).expect("parses");
        let b = parse_bond(&msg).expect("decodes");
        assert_eq!(b.pfc_bitmap, Some(8));
        assert_eq!(b.ecn.as_ref().map(|e| e.0[19]), Some(Some(1)));
        assert_eq!(b.counters.as_ref().map(|c| c.0[4]), Some(Some(3)));
        let m = &b.members[0];
        assert_eq!(
            m.knob_status,
            vec![KnobStatus {
                knobs: 1 << 20,
                state: Some(4),
                reason: None,
                errno: Some(5)
            }]
        );
        assert_eq!(m.pfc_override, Some(0x0c));
        assert_eq!(m.counters.as_ref().map(|c| c.0[0]), Some(None));
    }

    #[test]
    fn malformed_u32_is_an_error_not_a_panic() {
        let mut v = vec![u8::from(Cmd::BondGet), 1, 0, 0];
        v.extend(nla(1, &[1, 2]));
        let msg = GenlMsg::from_bytes_with_input(&mut Cursor::new(&v), v.len()).expect("parses");
        let err = parse_bond(&msg).err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("malformed reply: attribute ibdev-index has length 2")
        );
    }
}
