// SPDX-License-Identifier: GPL-2.0

//! ECN, DCQCN and PFC decisions: the traffic class of bond QPs, the status of
//! every knob on every member, and what one member's PFC change amounts to.
//!
//! - ECN marking and the default traffic class are applied by the bond itself,
//!   in the address vector of the QPs it places ([`qp_traffic_class`]), so
//!   they are `applied` on every member.
//! - No driver of Linux 6.12 offers a kernel interface for DCQCN parameters
//!   (rxe has no congestion control; mlx5 exposes them only through its own
//!   debugfs `cc_params`), so every DCQCN parameter is `unsupported` on every
//!   member, with that reason, and never reported as a silent success.
//! - PFC goes through the member netdev's dcbnl `ieee_setpfc`, one member at
//!   a time: [`pfc_plan`] decides from a probe whether a member needs a
//!   change, [`pfc_outcome`] judges the set and its read-back; a failure is
//!   rolled back on that member and the fan-out goes on with the next
//!   ([`CONTINUE_AFTER_FAILURE`]).

use super::knobs::{Knob, KnobValues};

/// The two ECN bits of a traffic class byte.
pub const ECN_MASK: u8 = 0b11;
/// ECN-capable transport, ECT(0), as RoCE NICs mark it (switches set CE).
pub const ECT0: u8 = 0b10;

/// The IPv4 TOS / GRH traffic class a bond QP uses when its ULP asks for
/// `requested`: the bond's `default_tclass` replaces a request of 0 (as
/// rdma_cm's `default_roce_tos` does), the DSCP bits are kept, and the ECN
/// bits become ECT(0) when `ecn` is on, not-ECT when it is off.
pub const fn qp_traffic_class(requested: u8, default_tclass: u8, ecn: bool) -> u8 {
    let base = if requested == 0 {
        default_tclass
    } else {
        requested
    };
    let dscp = base & !ECN_MASK;
    if ecn {
        dscp | ECT0
    } else {
        dscp
    }
}

impl KnobValues {
    /// The traffic class a bond QP uses when its ULP asks for `requested`
    /// (see [`qp_traffic_class`]).
    pub fn qp_traffic_class(&self, requested: u8) -> u8 {
        let default = u8::try_from(self.get(Knob::Tclass)).unwrap_or(0);
        qp_traffic_class(requested, default, self.get(Knob::EcnEnable) != 0)
    }
}

/// A positive errno value, as the kernel's `-errno` returns carry it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Errno(pub u16);

impl Errno {
    /// `EIO`.
    pub const EIO: Errno = Errno(5);
    /// `ENODEV`.
    pub const ENODEV: Errno = Errno(19);
    /// `EINVAL`.
    pub const EINVAL: Errno = Errno(22);
    /// `EPROTO`: the device did not keep the value it accepted.
    pub const EPROTO: Errno = Errno(71);
    /// `EOPNOTSUPP`.
    pub const EOPNOTSUPP: Errno = Errno(95);

    /// From a kernel return value (`-errno`); `None` for 0 or a positive value.
    pub const fn from_ret(ret: i32) -> Option<Errno> {
        if ret < 0 && ret >= -4095 {
            Some(Errno(ret.unsigned_abs() as u16))
        } else {
            None
        }
    }

    /// The errno's symbolic name, for the common ones.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            1 => "EPERM",
            5 => "EIO",
            11 => "EAGAIN",
            12 => "ENOMEM",
            16 => "EBUSY",
            19 => "ENODEV",
            22 => "EINVAL",
            34 => "ERANGE",
            71 => "EPROTO",
            95 => "EOPNOTSUPP",
            110 => "ETIMEDOUT",
            _ => return None,
        })
    }
}

impl core::fmt::Display for Errno {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self.name() {
            Some(n) => write!(f, "-{}", n),
            None => write!(f, "-{}", self.0),
        }
    }
}

/// Why a knob cannot be applied on a member.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Unsupported {
    /// No driver of Linux 6.12 has a kernel interface for DCQCN parameters.
    DcqcnNoKernelInterface,
    /// The member netdev has no dcbnl `ieee_getpfc`/`ieee_setpfc`.
    NoDcbnlSetpfc,
}

impl Unsupported {
    /// Stable number for netlink (`enum rdma_mrbond_unsupported_reason`).
    pub const fn id(self) -> u32 {
        match self {
            Unsupported::DcqcnNoKernelInterface => 0,
            Unsupported::NoDcbnlSetpfc => 1,
        }
    }

    /// The reason from its netlink number.
    pub const fn from_id(id: u32) -> Option<Unsupported> {
        match id {
            0 => Some(Unsupported::DcqcnNoKernelInterface),
            1 => Some(Unsupported::NoDcbnlSetpfc),
            _ => None,
        }
    }

    /// Text for sysfs and logs.
    pub const fn text(self) -> &'static str {
        match self {
            Unsupported::DcqcnNoKernelInterface => "no kernel interface for DCQCN parameters",
            Unsupported::NoDcbnlSetpfc => "no dcbnl ieee_setpfc",
        }
    }
}

/// Status of one knob on one member.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum KnobStatus {
    /// The bond leaves the knob alone (PFC before the first write).
    #[default]
    Unset,
    /// Wanted, not applied yet (being applied, or the member was absent).
    Pending,
    /// In effect on the member.
    Applied,
    /// The member offers no way to apply it.
    Unsupported(Unsupported),
    /// Applying it failed with this errno; the member keeps its old value.
    Failed(Errno),
}

impl KnobStatus {
    /// Stable number for netlink (`enum rdma_mrbond_knob_state`).
    pub const fn id(self) -> u32 {
        match self {
            KnobStatus::Unset => 0,
            KnobStatus::Pending => 1,
            KnobStatus::Applied => 2,
            KnobStatus::Unsupported(_) => 3,
            KnobStatus::Failed(_) => 4,
        }
    }
}

impl core::fmt::Display for KnobStatus {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            KnobStatus::Unset => f.write_str("unset"),
            KnobStatus::Pending => f.write_str("pending"),
            KnobStatus::Applied => f.write_str("applied"),
            KnobStatus::Unsupported(r) => write!(f, "unsupported({})", r.text()),
            KnobStatus::Failed(e) => write!(f, "failed({})", e),
        }
    }
}

/// The knobs whose per-member status is reported, in id order: DCQCN, the
/// default traffic class, ECN marking and PFC.
pub const REPORTED: [Knob; 21] = [
    Knob::NpEnable,
    Knob::NpMinTimeBetweenCnps,
    Knob::NpCnpDscp,
    Knob::NpCnp802pPrio,
    Knob::RpEnable,
    Knob::RpClampTgtRate,
    Knob::RpRpgTimeReset,
    Knob::RpRpgByteReset,
    Knob::RpRpgThreshold,
    Knob::RpRpgAiRate,
    Knob::RpRpgHaiRate,
    Knob::RpRpgGd,
    Knob::RpRpgMinDecFac,
    Knob::RpRpgMinRate,
    Knob::RpDceTcpG,
    Knob::RpDceTcpRtt,
    Knob::RpInitialAlphaValue,
    Knob::RpRateReduceMonitorPeriod,
    Knob::Tclass,
    Knob::EcnEnable,
    Knob::PfcEnable,
];

/// Status of `knob` on a member whose PFC status is `pfc`; `None` for knobs
/// that are not per-member (weight, delays).
pub const fn member_knob_status(knob: Knob, pfc: KnobStatus) -> Option<KnobStatus> {
    if knob.is_congestion_control() {
        return Some(KnobStatus::Unsupported(Unsupported::DcqcnNoKernelInterface));
    }
    match knob {
        Knob::EcnEnable | Knob::Tclass => Some(KnobStatus::Applied),
        Knob::PfcEnable => Some(pfc),
        _ => None,
    }
}

/// Knobs that share one status on a member: bit `Knob::id()` of `knobs`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct StatusGroup {
    /// One bit per knob id.
    pub knobs: u32,
    /// Their common status.
    pub status: KnobStatus,
}

/// Most distinct statuses one member can show (see [`status_groups`]).
pub const MAX_GROUPS: usize = 4;

/// The per-member status of every [`REPORTED`] knob, folded into groups of
/// equal status in order of first appearance: a compact and lossless form
/// for netlink replies.
pub fn status_groups(pfc: KnobStatus) -> [Option<StatusGroup>; MAX_GROUPS] {
    let mut out: [Option<StatusGroup>; MAX_GROUPS] = [None; MAX_GROUPS];
    for knob in REPORTED {
        let Some(status) = member_knob_status(knob, pfc) else {
            continue;
        };
        let bit = 1u32.checked_shl(u32::from(knob.id())).unwrap_or(0);
        for slot in out.iter_mut() {
            match slot {
                Some(g) if g.status == status => {
                    g.knobs |= bit;
                    break;
                }
                Some(_) => continue,
                None => {
                    *slot = Some(StatusGroup { knobs: bit, status });
                    break;
                }
            }
        }
    }
    out
}

/// The PFC bitmap a member should have: its override, else the bond's;
/// `None` leaves the member alone.
pub const fn pfc_target(bond: Option<u8>, member_override: Option<u8>) -> Option<u8> {
    match member_override {
        Some(o) => Some(o),
        None => bond,
    }
}

/// After a failure on one member the fan-out goes on with the next one: every
/// member sits on its own rail and switch, so one member's refusal says
/// nothing about the others, and each member is left in a known state
/// (applied, or rolled back to its old value).
pub const CONTINUE_AFTER_FAILURE: bool = true;

/// What to do with one member, decided from a probe of its current `pfc_en`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum PfcPlan {
    /// No target: the bond leaves PFC alone on this member.
    Leave,
    /// Record this status without touching the member.
    Report(KnobStatus),
    /// Quiesce the member and change `pfc_en` to this value.
    Apply(u8),
}

/// Decides from the probe (`Ok(current pfc_en)` or the errno of the read) of
/// a member with PFC `target`. A member that already has the value is not
/// touched: on mlx5 every `pfc_en` change bounces the link.
pub const fn pfc_plan(target: Option<u8>, probe: Result<u8, Errno>) -> PfcPlan {
    let Some(target) = target else {
        return PfcPlan::Leave;
    };
    match probe {
        Err(Errno::EOPNOTSUPP) => {
            PfcPlan::Report(KnobStatus::Unsupported(Unsupported::NoDcbnlSetpfc))
        }
        Err(e) => PfcPlan::Report(KnobStatus::Failed(e)),
        Ok(current) if current == target => PfcPlan::Report(KnobStatus::Applied),
        Ok(_) => PfcPlan::Apply(target),
    }
}

/// How one member's change ended.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum PfcOutcome {
    /// The member reads back the value it was given.
    Applied,
    /// Restore the value read before the change; report this errno.
    RollBack(Errno),
}

/// Judges `ieee_setpfc` and the `ieee_getpfc` read-back after it. A device
/// that accepts the value and then reads back another one failed with
/// `EPROTO`.
pub const fn pfc_outcome(
    wanted: u8,
    set: Result<(), Errno>,
    readback: Result<u8, Errno>,
) -> PfcOutcome {
    match (set, readback) {
        (Err(e), _) => PfcOutcome::RollBack(e),
        (Ok(()), Err(e)) => PfcOutcome::RollBack(e),
        (Ok(()), Ok(v)) if v == wanted => PfcOutcome::Applied,
        (Ok(()), Ok(_)) => PfcOutcome::RollBack(Errno::EPROTO),
    }
}

/// The status a member ends with.
pub const fn outcome_status(outcome: PfcOutcome) -> KnobStatus {
    match outcome {
        PfcOutcome::Applied => KnobStatus::Applied,
        PfcOutcome::RollBack(e) => KnobStatus::Failed(e),
    }
}

/// Congestion counters the bond sums over its members, with mlx5's names
/// (`rdma statistic` / `hw_counters`), then IEEE 802.3x global PAUSE frames
/// (ethtool), then PFC frames per priority (dcbnl `ieee_pfc`: requests
/// sent, indications received). PAUSE and PFC are counted apart: a link
/// runs one or the other.
pub const COUNTER_NAMES: [&core::ffi::CStr; COUNTER_COUNT] = [
    c"np_ecn_marked_roce_packets",
    c"np_cnp_sent",
    c"rp_cnp_handled",
    c"rp_cnp_ignored",
    c"tx_pause_frames",
    c"rx_pause_frames",
    c"tx_pfc_prio0",
    c"tx_pfc_prio1",
    c"tx_pfc_prio2",
    c"tx_pfc_prio3",
    c"tx_pfc_prio4",
    c"tx_pfc_prio5",
    c"tx_pfc_prio6",
    c"tx_pfc_prio7",
    c"rx_pfc_prio0",
    c"rx_pfc_prio1",
    c"rx_pfc_prio2",
    c"rx_pfc_prio3",
    c"rx_pfc_prio4",
    c"rx_pfc_prio5",
    c"rx_pfc_prio6",
    c"rx_pfc_prio7",
];

/// [`COUNTER_NAMES`] as `&str`.
// Evaluated at build time: an index out of range fails the build.
#[allow(clippy::indexing_slicing)]
pub const COUNTERS: [&str; COUNTER_COUNT] = {
    let mut names = [""; COUNTER_COUNT];
    let mut i = 0;
    while i < COUNTER_COUNT {
        names[i] = match COUNTER_NAMES[i].to_str() {
            Ok(name) => name,
            Err(_) => panic!("a counter name is not UTF-8"),
        };
        i += 1;
    }
    names
};

/// Number of [`COUNTERS`].
pub const COUNTER_COUNT: usize = 22;

/// Index in [`COUNTERS`] of `tx_pause_frames` (`rx_pause_frames` follows).
pub const PAUSE_COUNTERS: usize = 4;
/// Index in [`COUNTERS`] of `tx_pfc_prio0`; `rx_pfc_prio0` is 8 after it.
pub const PFC_COUNTERS: usize = 6;
/// Priorities of PFC.
pub const PFC_PRIOS: usize = 8;

/// Counter values of one member or of the bond: `None` where unavailable.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Counters(pub [Option<u64>; COUNTER_COUNT]);

impl Counters {
    /// Adds a member's counters to a sum: a counter is available in the sum
    /// when at least one member has it (a member without it adds nothing,
    /// rather than a zero that would pass for a measurement).
    pub fn add(&mut self, member: &Counters) {
        for (sum, v) in self.0.iter_mut().zip(member.0.iter()) {
            if let Some(v) = v {
                *sum = Some(sum.unwrap_or(0).saturating_add(*v));
            }
        }
    }

    /// Bit i set when counter i is available.
    pub fn available_mask(&self) -> u32 {
        let mut mask = 0u32;
        for (i, v) in self.0.iter().enumerate() {
            if v.is_some() {
                mask |= 1u32.checked_shl(i as u32).unwrap_or(0);
            }
        }
        mask
    }
}
