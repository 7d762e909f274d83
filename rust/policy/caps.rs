// SPDX-License-Identifier: GPL-2.0

//! The vdev's device attributes from its members': what every one of them
//! can do.
//!
//! One vdev object (QP, CQ, MR, ...) lives on a single member and must fit on
//! any of them, so each limit is the minimum over the members, the page sizes
//! and the inherited capability flags their intersection, and the ACK delay
//! (timeouts derive from it) the slowest member's. The core copies the
//! attributes once, at registration, and ULPs read that copy: a member that
//! joins later must therefore cover them, or it is refused ([`weaker`]).
//!
//! Objects whose verbs the vdev lacks (SRQ, MW, multicast, raw QPs, ODP, ...)
//! are not limits here: the driver reports them as 0, so ULPs never try them.

/// A limit of `struct ib_device_attr` the vdev reports as the members'
/// minimum. `atomic_cap` orders as IB_ATOMIC_NONE < HCA < GLOB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// `max_mr_size`
    MaxMrSize,
    /// `max_qp`
    MaxQp,
    /// `max_qp_wr`
    MaxQpWr,
    /// `max_send_sge`
    MaxSendSge,
    /// `max_recv_sge`
    MaxRecvSge,
    /// `max_sge_rd`
    MaxSgeRd,
    /// `max_cq`
    MaxCq,
    /// `max_cqe`
    MaxCqe,
    /// `max_mr`
    MaxMr,
    /// `max_pd`
    MaxPd,
    /// `max_qp_rd_atom`
    MaxQpRdAtom,
    /// `max_res_rd_atom`
    MaxResRdAtom,
    /// `max_qp_init_rd_atom`
    MaxQpInitRdAtom,
    /// `atomic_cap`
    AtomicCap,
    /// `masked_atomic_cap`
    MaskedAtomicCap,
    /// `max_ah`
    MaxAh,
    /// `max_fast_reg_page_list_len`
    MaxFastRegPageListLen,
}

/// `IB_DEVICE_UD_AV_PORT_ENFORCE` (`enum ib_device_cap_flags`).
pub const CAP_UD_AV_PORT_ENFORCE: u64 = 1 << 6;
/// `IB_DEVICE_CURR_QP_STATE_MOD`.
pub const CAP_CURR_QP_STATE_MOD: u64 = 1 << 7;
/// `IB_DEVICE_RC_RNR_NAK_GEN`.
pub const CAP_RC_RNR_NAK_GEN: u64 = 1 << 12;

/// The member capability flags a vdev inherits unchanged, because they
/// only describe how a member's own QPs behave and every vdev QP lives on
/// one member. Every other flag is dropped until the data path implements
/// it (MWs, XRC, SRQ resize, flush/atomic write, APM, raw packet, checksum
/// offloads, flow steering). A member's `kernel_cap_flags` (mlx5's
/// `IBK_SG_GAPS_REG`, `IBK_INTEGRITY_HANDOVER`) are never inherited: the
/// vdev's MRs are its own, and it sets its own kernel flags.
pub const INHERITED_CAP_FLAGS: u64 =
    CAP_UD_AV_PORT_ENFORCE | CAP_CURR_QP_STATE_MOD | CAP_RC_RNR_NAK_GEN;

/// How many [`Limit`]s there are.
pub const LIMIT_COUNT: usize = 17;

impl Limit {
    /// Every limit, in `struct ib_device_attr` order.
    pub const ALL: [Limit; LIMIT_COUNT] = [
        Limit::MaxMrSize,
        Limit::MaxQp,
        Limit::MaxQpWr,
        Limit::MaxSendSge,
        Limit::MaxRecvSge,
        Limit::MaxSgeRd,
        Limit::MaxCq,
        Limit::MaxCqe,
        Limit::MaxMr,
        Limit::MaxPd,
        Limit::MaxQpRdAtom,
        Limit::MaxResRdAtom,
        Limit::MaxQpInitRdAtom,
        Limit::AtomicCap,
        Limit::MaskedAtomicCap,
        Limit::MaxAh,
        Limit::MaxFastRegPageListLen,
    ];

    /// The `struct ib_device_attr` field, as the refusal of a member names it.
    pub const fn name(self) -> &'static str {
        match self {
            Limit::MaxMrSize => "max_mr_size",
            Limit::MaxQp => "max_qp",
            Limit::MaxQpWr => "max_qp_wr",
            Limit::MaxSendSge => "max_send_sge",
            Limit::MaxRecvSge => "max_recv_sge",
            Limit::MaxSgeRd => "max_sge_rd",
            Limit::MaxCq => "max_cq",
            Limit::MaxCqe => "max_cqe",
            Limit::MaxMr => "max_mr",
            Limit::MaxPd => "max_pd",
            Limit::MaxQpRdAtom => "max_qp_rd_atom",
            Limit::MaxResRdAtom => "max_res_rd_atom",
            Limit::MaxQpInitRdAtom => "max_qp_init_rd_atom",
            Limit::AtomicCap => "atomic_cap",
            Limit::MaskedAtomicCap => "masked_atomic_cap",
            Limit::MaxAh => "max_ah",
            Limit::MaxFastRegPageListLen => "max_fast_reg_page_list_len",
        }
    }
}

/// The attributes of one device that the intersection reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceCaps {
    /// One value per [`Limit`], in [`Limit::ALL`] order; a negative `int`
    /// limit (never seen in a driver) is read as 0.
    pub limits: [u64; LIMIT_COUNT],
    /// `page_size_cap`: the page sizes an MR may use.
    pub page_size_cap: u64,
    /// `device_cap_flags`, of which [`intersect`] keeps the inherited ones.
    pub cap_flags: u64,
    /// `local_ca_ack_delay`.
    pub local_ca_ack_delay: u8,
}

impl DeviceCaps {
    /// Nothing: what a bond without members reports.
    pub const NONE: DeviceCaps = DeviceCaps {
        limits: [0; LIMIT_COUNT],
        page_size_cap: 0,
        cap_flags: 0,
        local_ca_ack_delay: 0,
    };

    /// The value of `limit`.
    pub fn get(&self, limit: Limit) -> u64 {
        let mut v = 0;
        for (l, x) in Limit::ALL.iter().zip(self.limits.iter()) {
            if *l == limit {
                v = *x;
            }
        }
        v
    }

    /// Lowers `limit` to at most `max`.
    pub fn clamp(&mut self, limit: Limit, max: u64) {
        for (l, x) in Limit::ALL.iter().zip(self.limits.iter_mut()) {
            if *l == limit {
                *x = (*x).min(max);
            }
        }
    }
}

/// What the vdev can promise over `members`, keeping of their capability
/// flags only those in `inherited` (flags that describe how a member's own
/// QPs behave). No member: [`DeviceCaps::NONE`].
pub fn intersect(members: &[DeviceCaps], inherited: u64) -> DeviceCaps {
    let Some((first, rest)) = members.split_first() else {
        return DeviceCaps::NONE;
    };
    let mut caps = *first;
    caps.cap_flags &= inherited;
    for m in rest {
        for (v, x) in caps.limits.iter_mut().zip(m.limits.iter()) {
            *v = (*v).min(*x);
        }
        caps.page_size_cap &= m.page_size_cap;
        caps.cap_flags &= m.cap_flags;
        caps.local_ca_ack_delay = caps.local_ca_ack_delay.max(m.local_ca_ack_delay);
    }
    caps
}

/// The first attribute in which `member` falls short of the frozen `vdev`
/// attributes (whose flags are the inherited ones), by its field name; `None`
/// if the member covers them all.
pub fn weaker(member: &DeviceCaps, vdev: &DeviceCaps) -> Option<&'static str> {
    for ((l, m), v) in Limit::ALL
        .iter()
        .zip(member.limits.iter())
        .zip(vdev.limits.iter())
    {
        if m < v {
            return Some(l.name());
        }
    }
    if vdev.page_size_cap & !member.page_size_cap != 0 {
        return Some("page_size_cap");
    }
    if vdev.cap_flags & !member.cap_flags != 0 {
        return Some("device_cap_flags");
    }
    if member.local_ca_ack_delay > vdev.local_ca_ack_delay {
        return Some("local_ca_ack_delay");
    }
    None
}
