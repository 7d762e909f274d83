// SPDX-License-Identifier: GPL-2.0
//! QPN reuse: a live QP's number is never taken, a destroyed one's only
//! after its quarantine.

use mrbond_policy::policy::qpn::{QpEnd, QpnState, QUARANTINE_ABORTED_NS, QUARANTINE_NS};

const NOW: u64 = 5_000_000_000;

#[test]
fn a_live_qpn_is_never_claimable() {
    for now in [0, NOW, u64::MAX] {
        assert!(!QpnState::Live.claimable(now));
    }
}

#[test]
fn a_destroyed_qpn_is_claimable_once_its_quarantine_ends() {
    let s = QpnState::after(QpEnd::Destroyed, NOW);
    assert!(!s.claimable(NOW));
    assert!(!s.claimable(NOW + QUARANTINE_NS - 1));
    assert!(s.claimable(NOW + QUARANTINE_NS));
}

#[test]
fn an_aborted_exchange_keeps_the_qpn_out_past_the_peers_rep_retries() {
    let s = QpnState::after(QpEnd::ExchangeAborted, NOW);
    // 16 REP tries of about 4.6 s under rdma_cm.
    assert!(!s.claimable(NOW + 16 * 4_600_000_000));
    assert!(!s.claimable(NOW + QUARANTINE_ABORTED_NS - 1));
    assert!(s.claimable(NOW + QUARANTINE_ABORTED_NS));
    // And longer than an ordinary destroy's.
    assert!(!s.claimable(NOW + QUARANTINE_NS));
}

#[test]
fn a_quarantine_near_the_end_of_the_clock_saturates() {
    let s = QpnState::after(QpEnd::ExchangeAborted, u64::MAX - 1);
    assert_eq!(s, QpnState::Quarantined { until_ns: u64::MAX });
    assert!(!s.claimable(u64::MAX - 1));
}
