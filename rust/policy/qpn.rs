// SPDX-License-Identifier: GPL-2.0

//! QPN reuse on a device whose QPs take their numbers from its members.
//!
//! A bond QP's number is its member QP's, since that is what the peer
//! addresses. The members hand out the same QPN sequences, so a number must
//! be unique over the bond, and a destroyed QP's number stays out of use
//! for a while: the peer's `ib_cm` refuses a REQ from a QPN it still holds
//! a connection for (its stale-connection check), and a peer whose REP
//! retries still run refuses it as stale.

/// How long a destroyed QP's number stays out of use.
pub const QUARANTINE_NS: u64 = 10_000_000_000;

/// How long, if the bond ended the QP's connection exchange: the peer may
/// keep its half until its REP retries run out (under rdma_cm 16 tries of
/// about 4.6 s).
pub const QUARANTINE_ABORTED_NS: u64 = 90_000_000_000;

/// How a QP's life ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpEnd {
    /// Destroyed by its ULP.
    Destroyed,
    /// Destroyed after the bond ended its connection exchange with a REJ
    /// (its member died before the connection was established).
    ExchangeAborted,
}

/// What the bond knows of a QPN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpnState {
    /// A live QP has it.
    Live,
    /// Out of use until `until_ns` (monotonic clock).
    Quarantined {
        /// When the number may be taken again.
        until_ns: u64,
    },
}

impl QpnState {
    /// The state a QP that ends at `now_ns` leaves its number in.
    pub fn after(end: QpEnd, now_ns: u64) -> Self {
        let period = match end {
            QpEnd::Destroyed => QUARANTINE_NS,
            QpEnd::ExchangeAborted => QUARANTINE_ABORTED_NS,
        };
        Self::Quarantined {
            until_ns: now_ns.saturating_add(period),
        }
    }

    /// Whether a new QP may take the number at `now_ns`; a number that is
    /// not claimable is a collision.
    pub fn claimable(self, now_ns: u64) -> bool {
        match self {
            Self::Live => false,
            Self::Quarantined { until_ns } => now_ns >= until_ns,
        }
    }
}
