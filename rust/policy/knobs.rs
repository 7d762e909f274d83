// SPDX-License-Identifier: GPL-2.0

//! Validation of user-supplied knob values into typed errors with static text.
//!
//! Every value that reaches the module from netlink or sysfs passes through
//! here once; the module then fans the validated value out to each member
//! through the member's own interface. Errors carry a `&'static str` for logs
//! and the same text NUL-terminated (`message_nul`) for `NL_SET_ERR_MSG`.
//!
//! ECN/DCQCN knobs use mlx5's names (OFED `ecn/roce_np`, `ecn/roce_rp`) and
//! ranges. Where NVIDIA's DCQCN parameter page gives a range it is used; the
//! ones it leaves open are bounded here as follows, and may be widened once
//! checked against firmware: `min_time_between_cnps` 0..=4095 us,
//! `rpg_time_reset` and `dce_tcp_rtt` 1..=131071 us, `rpg_byte_reset`
//! 1..=32767 (64 B units), `rpg_threshold` 1..=31, `rpg_gd` 1..=15 (a shift),
//! `rpg_min_dec_fac` 1..=100 % (0 would allow a cut to zero rate),
//! `initial_alpha_value` 0..=1023, rates 1..=1 600 000 Mb/s (and at most the
//! member's link speed, see [`check_rate_for_link`]),
//! `rate_reduce_monitor_period` 1..=i32::MAX (OFED parses it with `%d`).

use super::MAX_MEMBERS;

/// Why a value was refused.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ConfigError {
    /// The value is outside the knob's range.
    OutOfRange(Knob),
    /// No knob has that name or id.
    UnknownKnob,
    /// Not one of `wrr`, `lqf`, `hash`, `rr`, `pinned`.
    UnknownPolicy,
    /// Not one of `rail`, `active-backup`.
    UnknownMode,
    /// Not one of `up`, `drain`, `down`.
    UnknownAdminState,
    /// 802.3ad across HCAs is refused for data (brief section 2).
    Mode8023adRefused,
    /// More than [`MAX_MEMBERS`] members.
    TooManyMembers,
    /// A bond needs at least one member.
    NoMembers,
    /// The member slot is already in use.
    MemberExists,
    /// No member in that slot.
    NoSuchMember,
    /// A rate knob exceeds the member's link speed.
    RateAboveLink(Knob),
    /// The member has no ECN/DCQCN machinery (rxe).
    CongestionControlUnsupported,
    /// A request that changes nothing.
    NothingToSet,
    /// A PFC override given and cleared in the same request.
    ConflictingOverride,
    /// Not a number (decimal, or hexadecimal with `0x`).
    NotANumber,
}

macro_rules! texts {
    ($s:expr) => {
        ($s, concat!($s, "\0"))
    };
}

impl ConfigError {
    /// Static text for logs and extack.
    pub const fn message(&self) -> &'static str {
        self.texts().0
    }

    /// The same text with a trailing NUL, for C callers.
    pub const fn message_nul(&self) -> &'static [u8] {
        self.texts().1.as_bytes()
    }

    const fn texts(&self) -> (&'static str, &'static str) {
        match self {
            ConfigError::OutOfRange(k) => k.range_texts(),
            ConfigError::UnknownKnob => texts!("mrbond: unknown knob"),
            ConfigError::UnknownPolicy => {
                texts!("mrbond: unknown policy (wrr, lqf, hash, rr, pinned)")
            }
            ConfigError::UnknownMode => texts!("mrbond: unknown mode (rail, active-backup)"),
            ConfigError::UnknownAdminState => texts!("mrbond: unknown admin state (up, drain, down)"),
            ConfigError::Mode8023adRefused => texts!(
                "mrbond: 802.3ad across HCAs loses packets; use mode rail with the bond as LACP source"
            ),
            ConfigError::TooManyMembers => texts!("mrbond: at most 16 members"),
            ConfigError::NoMembers => texts!("mrbond: a bond needs at least one member"),
            ConfigError::MemberExists => texts!("mrbond: member slot already in use"),
            ConfigError::NoSuchMember => texts!("mrbond: not a member of this bond"),
            ConfigError::RateAboveLink(_) => texts!("mrbond: rate exceeds the member's link speed"),
            ConfigError::CongestionControlUnsupported => {
                texts!("mrbond: member has no ECN/DCQCN support (rxe)")
            }
            ConfigError::NothingToSet => texts!("mrbond: nothing to set"),
            ConfigError::ConflictingOverride => {
                texts!("mrbond: give a PFC override or clear it, not both")
            }
            ConfigError::NotANumber => {
                texts!("mrbond: not a number (decimal, or hexadecimal with 0x)")
            }
        }
    }
}

macro_rules! knobs {
    ($( $(#[doc = $doc:literal])* $v:ident = $name:literal, $min:literal ..= $max:literal, default $def:literal; )*) => {
        /// A validated knob. The discriminant is a stable id for netlink.
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
        #[repr(u16)]
        pub enum Knob {
            $( $(#[doc = $doc])* $v, )*
        }

        impl Knob {
            /// Every knob, in id order.
            pub const ALL: &'static [Knob] = &[ $( Knob::$v, )* ];

            /// The knob's user-visible name.
            pub const fn name(self) -> &'static str {
                match self { $( Knob::$v => $name, )* }
            }

            /// Smallest accepted value.
            pub const fn min(self) -> u32 {
                match self { $( Knob::$v => $min, )* }
            }

            /// Largest accepted value.
            pub const fn max(self) -> u32 {
                match self { $( Knob::$v => $max, )* }
            }

            /// Every knob's default, in id order.
            pub const DEFAULT_VALUES: [u32; Knob::ALL.len()] = [ $( $def, )* ];

            /// Value used until the user sets one.
            pub const fn default_value(self) -> u32 {
                match self { $( Knob::$v => $def, )* }
            }

            const fn range_texts(self) -> (&'static str, &'static str) {
                match self {
                    $( Knob::$v => texts!(concat!(
                        "mrbond: ", $name, " out of range (", $min, "..", $max, ")"
                    )), )*
                }
            }
        }
    };
}

knobs! {
    /// ECN notification point (CNP generation) on/off.
    NpEnable = "np_enable", 0..=1, default 1;
    /// Least time between two CNPs of one flow, us.
    NpMinTimeBetweenCnps = "np_min_time_between_cnps", 0..=4095, default 4;
    /// DSCP of CNP packets.
    NpCnpDscp = "np_cnp_dscp", 0..=63, default 48;
    /// 802.1p priority of CNP packets.
    NpCnp802pPrio = "np_cnp_802p_prio", 0..=7, default 6;
    /// DCQCN reaction point (rate limiting) on/off.
    RpEnable = "rp_enable", 0..=1, default 1;
    /// Clamp the target rate on rate decrease.
    RpClampTgtRate = "rp_clamp_tgt_rate", 0..=1, default 0;
    /// Rate-increase timer, us.
    RpRpgTimeReset = "rp_rpg_time_reset", 1..=131071, default 300;
    /// Rate-increase byte counter, 64 B units.
    RpRpgByteReset = "rp_rpg_byte_reset", 1..=32767, default 32767;
    /// Fast-recovery rounds before additive increase.
    RpRpgThreshold = "rp_rpg_threshold", 1..=31, default 1;
    /// Additive increase step, Mb/s.
    RpRpgAiRate = "rp_rpg_ai_rate", 1..=1600000, default 5;
    /// Hyper increase step, Mb/s.
    RpRpgHaiRate = "rp_rpg_hai_rate", 1..=1600000, default 50;
    /// Alpha update gain as a shift (g = 1/2^gd).
    RpRpgGd = "rp_rpg_gd", 1..=15, default 11;
    /// Least rate decrease factor, percent.
    RpRpgMinDecFac = "rp_rpg_min_dec_fac", 1..=100, default 50;
    /// Least rate, Mb/s.
    RpRpgMinRate = "rp_rpg_min_rate", 1..=1600000, default 1;
    /// DCTCP-style alpha gain, fixed point /1024.
    RpDceTcpG = "rp_dce_tcp_g", 0..=1023, default 1019;
    /// DCTCP-style alpha update period, us.
    RpDceTcpRtt = "rp_dce_tcp_rtt", 1..=131071, default 1;
    /// Alpha after the first CNP, fixed point /1024.
    RpInitialAlphaValue = "rp_initial_alpha_value", 0..=1023, default 1023;
    /// Least time between two rate reductions, us.
    RpRateReduceMonitorPeriod = "rp_rate_reduce_monitor_period", 1..=2147483647, default 4;
    /// Default traffic class (IPv4 TOS / GRH traffic class byte) of bond QPs
    /// whose ULP asks for 0; 0 means none, as rdma_cm's `default_roce_tos`.
    Tclass = "tclass", 0..=255, default 0;
    /// Mark bond QPs' packets ECN-capable (ECT(0)) in the traffic class.
    EcnEnable = "ecn_enable", 0..=1, default 1;
    /// PFC enable bitmap, one bit per priority (dcbnl `pfc_en`); 0 leaves PFC alone.
    PfcEnable = "pfc_enable", 0..=255, default 0;
    /// Member admin weight for wrr and the failover planner.
    Weight = "weight", 1..=1000, default 100;
    /// Bond updelay, ms.
    UpdelayMs = "updelay_ms", 0..=600000, default 0;
    /// Bond downdelay, ms.
    DowndelayMs = "downdelay_ms", 0..=600000, default 0;
    /// Member capacity against which WRR measures its utilisation, Mb/s;
    /// 0 takes the link speed (a rail limited elsewhere sets its own).
    CapacityMbps = "capacity_mbps", 0..=3200000, default 0;
}

/// Number of knobs.
pub const KNOB_COUNT: usize = Knob::ALL.len();

impl Knob {
    /// The knob with netlink id `id`.
    pub fn from_id(id: u16) -> Option<Knob> {
        Knob::ALL.get(usize::from(id)).copied()
    }

    /// The knob's netlink id.
    pub const fn id(self) -> u16 {
        self as u16
    }

    /// The knob named `name` (a trailing newline or NUL is ignored).
    pub fn from_name(name: &[u8]) -> Option<Knob> {
        let name = trim(name);
        Knob::ALL
            .iter()
            .copied()
            .find(|k| k.name().as_bytes() == name)
    }

    /// Whether the knob is a rate in Mb/s bounded by the link speed.
    pub const fn is_rate(self) -> bool {
        matches!(
            self,
            Knob::RpRpgAiRate | Knob::RpRpgHaiRate | Knob::RpRpgMinRate
        )
    }

    /// Whether the knob needs ECN/DCQCN support in the member.
    pub const fn is_congestion_control(self) -> bool {
        matches!(
            self,
            Knob::NpEnable
                | Knob::NpMinTimeBetweenCnps
                | Knob::NpCnpDscp
                | Knob::NpCnp802pPrio
                | Knob::RpEnable
                | Knob::RpClampTgtRate
                | Knob::RpRpgTimeReset
                | Knob::RpRpgByteReset
                | Knob::RpRpgThreshold
                | Knob::RpRpgAiRate
                | Knob::RpRpgHaiRate
                | Knob::RpRpgGd
                | Knob::RpRpgMinDecFac
                | Knob::RpRpgMinRate
                | Knob::RpDceTcpG
                | Knob::RpDceTcpRtt
                | Knob::RpInitialAlphaValue
                | Knob::RpRateReduceMonitorPeriod
        )
    }

    /// Whether the knob belongs to the ECN settings of a bond (`ecn-set`,
    /// sysfs `ecn/`): marking, the default traffic class and DCQCN.
    pub const fn is_ecn(self) -> bool {
        matches!(self, Knob::EcnEnable | Knob::Tclass) || self.is_congestion_control()
    }

    /// Checks `value` against the knob's range. Takes `u64` so that a wide
    /// netlink attribute is refused rather than truncated.
    pub const fn validate(self, value: u64) -> Result<u32, ConfigError> {
        if value < self.min() as u64 || value > self.max() as u64 {
            Err(ConfigError::OutOfRange(self))
        } else {
            Ok(value as u32)
        }
    }
}

/// Refuses a rate knob above the member's link speed.
pub const fn check_rate_for_link(
    knob: Knob,
    value: u32,
    link_speed_mbps: u32,
) -> Result<(), ConfigError> {
    if knob.is_rate() && value > link_speed_mbps {
        Err(ConfigError::RateAboveLink(knob))
    } else {
        Ok(())
    }
}

/// Desired knob values of one bond (validated; re-applied when a member joins).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct KnobValues {
    values: [u32; KNOB_COUNT],
}

impl Default for KnobValues {
    fn default() -> Self {
        Self::DEFAULTS
    }
}

impl KnobValues {
    /// Every knob at its default.
    pub const DEFAULTS: KnobValues = KnobValues {
        values: Knob::DEFAULT_VALUES,
    };

    /// Validates and stores a value; returns it as stored.
    pub fn set(&mut self, knob: Knob, value: u64) -> Result<u32, ConfigError> {
        let v = knob.validate(value)?;
        let slot = self
            .values
            .get_mut(usize::from(knob.id()))
            .ok_or(ConfigError::UnknownKnob)?;
        *slot = v;
        Ok(v)
    }

    /// The stored value.
    pub fn get(&self, knob: Knob) -> u32 {
        self.values
            .get(usize::from(knob.id()))
            .copied()
            .unwrap_or(knob.default_value())
    }
}

/// Validates a default traffic class byte.
pub const fn validate_tclass(value: u64) -> Result<u8, ConfigError> {
    match Knob::Tclass.validate(value) {
        Ok(v) => Ok(v as u8),
        Err(e) => Err(e),
    }
}

/// Validates a PFC priority bitmap (u8 domain: a wider value is refused).
pub const fn validate_pfc_bitmap(value: u64) -> Result<u8, ConfigError> {
    match Knob::PfcEnable.validate(value) {
        Ok(v) => Ok(v as u8),
        Err(e) => Err(e),
    }
}

/// Validates a member admin weight.
pub const fn validate_weight(value: u64) -> Result<u16, ConfigError> {
    match Knob::Weight.validate(value) {
        Ok(v) => Ok(v as u16),
        Err(e) => Err(e),
    }
}

/// Validates a member capacity in Mb/s (0: its link speed).
pub const fn validate_capacity_mbps(value: u64) -> Result<u32, ConfigError> {
    Knob::CapacityMbps.validate(value)
}

/// Validates a member count.
pub const fn validate_member_count(count: usize) -> Result<usize, ConfigError> {
    if count == 0 {
        Err(ConfigError::NoMembers)
    } else if count > MAX_MEMBERS {
        Err(ConfigError::TooManyMembers)
    } else {
        Ok(count)
    }
}

/// Bond mode (brief section 2).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum BondMode {
    /// Every member on its own rail; QPs spread by policy.
    #[default]
    Rail,
    /// One active member hosts every QP.
    ActiveBackup,
}

impl BondMode {
    /// The user-visible name.
    pub const fn name(self) -> &'static str {
        match self {
            BondMode::Rail => "rail",
            BondMode::ActiveBackup => "active-backup",
        }
    }
}

/// The value of a write: trailing NULs dropped (netlink strings), then at
/// most one trailing newline (what `echo` adds and the kernel's `kstrto*`
/// accept), so that every sysfs file takes the same input.
pub fn trim(mut s: &[u8]) -> &[u8] {
    while let Some((0, rest)) = s.split_last() {
        s = rest;
    }
    s.strip_suffix(b"\n").unwrap_or(s)
}

/// Parses an unsigned number as sysfs writes it: decimal, or hexadecimal
/// after `0x` (PFC bitmaps), with an optional trailing newline.
pub fn parse_number(input: &[u8]) -> Result<u64, ConfigError> {
    // An optional `+`, as `kstrtou64` takes.
    let s = trim(input);
    let s = s.strip_prefix(b"+").unwrap_or(s);
    let (digits, radix) = match s {
        [b'0', b'x' | b'X', rest @ ..] => (rest, 16u64),
        _ => (s, 10u64),
    };
    if digits.is_empty() {
        return Err(ConfigError::NotANumber);
    }
    let mut v: u64 = 0;
    for &c in digits {
        let d = match c {
            b'0'..=b'9' => c.wrapping_sub(b'0'),
            b'a'..=b'f' if radix == 16 => c.wrapping_sub(b'a').wrapping_add(10),
            b'A'..=b'F' if radix == 16 => c.wrapping_sub(b'A').wrapping_add(10),
            _ => return Err(ConfigError::NotANumber),
        };
        v = v
            .checked_mul(radix)
            .and_then(|v| v.checked_add(u64::from(d)))
            .ok_or(ConfigError::NotANumber)?;
    }
    Ok(v)
}

/// Parses and validates a knob value written to sysfs.
pub fn parse_knob(knob: Knob, input: &[u8]) -> Result<u32, ConfigError> {
    knob.validate(parse_number(input)?)
}

/// Parses a member's PFC override: `none` clears it, else a bitmap.
pub fn parse_pfc_override(input: &[u8]) -> Result<Option<u8>, ConfigError> {
    if trim(input) == b"none" {
        return Ok(None);
    }
    validate_pfc_bitmap(parse_number(input)?).map(Some)
}

/// Parses a mode name. `802.3ad` (and bonding's aliases) get their own error,
/// because the user expects it to work and needs to hear why not.
pub fn parse_mode(name: &[u8]) -> Result<BondMode, ConfigError> {
    match trim(name) {
        b"rail" => Ok(BondMode::Rail),
        b"active-backup" => Ok(BondMode::ActiveBackup),
        b"802.3ad" | b"lacp" | b"4" => Err(ConfigError::Mode8023adRefused),
        _ => Err(ConfigError::UnknownMode),
    }
}
