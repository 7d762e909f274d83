// SPDX-License-Identifier: GPL-2.0
//! The per-ULP memory-key rules.

use mrbond_policy::policy::ulp::{is_passive, key_rule, mr_member, KeyRule};
use mrbond_policy::policy::MemberIndex;

fn m(i: usize) -> Option<MemberIndex> {
    MemberIndex::new(i)
}

#[test]
fn ulps_whose_mrs_follow_their_qp_spread() {
    for ulp in ["nvme_rdma", "nvmet_rdma", "ib_srp", "rpcrdma"] {
        assert_eq!(key_rule(ulp.as_bytes()), KeyRule::Spread, "{ulp}");
    }
}

#[test]
fn other_and_unknown_ulps_pin_the_pd() {
    for ulp in [
        "ib_iser",
        "rds_rdma",
        "smc",
        "mrbond_kperf",
        "",
        "nvme_rdma2",
    ] {
        assert_eq!(key_rule(ulp.as_bytes()), KeyRule::PinPd, "{ulp}");
    }
}

#[test]
fn mr_member_prefers_task_hint_then_last_qp_then_home() {
    assert_eq!(mr_member(m(2), m(1), m(0)), m(2));
    assert_eq!(mr_member(None, m(1), m(0)), m(1));
    assert_eq!(mr_member(None, None, m(0)), m(0));
    assert_eq!(mr_member(None, None, None), None);
}

#[test]
fn only_target_ulps_are_passive() {
    for ulp in ["nvmet_rdma", "ib_srpt", "ib_isert", "mrbond_xperf_srv"] {
        assert!(is_passive(ulp.as_bytes()), "{ulp}");
    }
    for ulp in [
        "nvme_rdma",
        "ib_srp",
        "rpcrdma",
        "mrbond_kperf",
        "mrbond_xperf",
        "",
    ] {
        assert!(!is_passive(ulp.as_bytes()), "{ulp}");
    }
}
