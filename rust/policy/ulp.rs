// SPDX-License-Identifier: GPL-2.0

//! Memory-key rules per kernel ULP.
//!
//! An rkey is valid only on the HCA that issued it, and every FRWR ULP but
//! RDS reads `mr->rkey` before it posts the REG_MR, so an MR's member must
//! be fixed when the MR is allocated. Whether that can follow QP placement
//! depends on how the ULP pairs MRs with QPs (design memo §4.2):
//!
//! * [`KeyRule::Spread`]: each MR is allocated right after its QP, in the
//!   same task, and used only on that QP (core rdma_rw, nvme-rdma, nvmet-rdma,
//!   SRP, xprtrdma). QPs are placed by the policy; an MR binds to the member
//!   of the allocating task's last QP on the PD.
//! * [`KeyRule::PinPd`]: MRs are allocated later, by another task, or shared
//!   by connections (iSER, RDS, SMC and any ULP we do not know). Every QP of
//!   a PD goes to the member of the PD's first QP, so any MR of the PD fits.

use super::MemberIndex;

/// How a ULP's QPs and MRs may be spread over members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyRule {
    /// QPs by policy; each MR on its QP's member.
    Spread,
    /// Every QP and MR of a PD on the PD's home member.
    PinPd,
}

/// ULPs (their `KBUILD_MODNAME`, as `pd->res.kern_name`) whose MRs follow
/// their QP.
const SPREAD_ULPS: [&[u8]; 4] = [b"nvme_rdma", b"nvmet_rdma", b"ib_srp", b"rpcrdma"];

/// Target ULPs: their QPs are created for connection requests that
/// arrived, on the device port rdma_cm bound the connection to. The last
/// is the benchmark's server (selftests/rdma_mrbond/xperf), which names its
/// PDs so because it answers requests as nvmet does.
const PASSIVE_ULPS: [&[u8]; 4] = [b"nvmet_rdma", b"ib_srpt", b"ib_isert", b"mrbond_xperf_srv"];

/// Whether every QP of the ULP `kern_name` answers a connection request.
///
/// On a rail bond such a QP must live on the member whose rail the request
/// came in on (the port the connection is bound to): the peer's QP is on
/// that rail, and rails do not reach each other.
pub fn is_passive(kern_name: &[u8]) -> bool {
    PASSIVE_ULPS.contains(&kern_name)
}

/// The key rule of the ULP called `kern_name`.
pub fn key_rule(kern_name: &[u8]) -> KeyRule {
    if SPREAD_ULPS.contains(&kern_name) {
        KeyRule::Spread
    } else {
        KeyRule::PinPd
    }
}

/// The member a new MR binds to: the member of the allocating task's last
/// QP on the PD, else the PD's last QP's, else the PD's home; `None` when
/// the PD has no QP yet (the MR's member would be a guess).
pub fn mr_member(
    task_hint: Option<MemberIndex>,
    last_qp: Option<MemberIndex>,
    home: Option<MemberIndex>,
) -> Option<MemberIndex> {
    task_hint.or(last_qp).or(home)
}
