// SPDX-License-Identifier: GPL-2.0

//! Warnings let out at most once per interval, as `pr_warn_ratelimited`
//! does (a macro 6.12's kernel crate lacks): a misconfiguration or a dead
//! member can fail every connection attempt, each of which would log.

use core::sync::atomic::{AtomicI64, Ordering};

use kernel::time::Ktime;

/// How often one kind of warning is let out, at most.
const INTERVAL_MS: i64 = 5000;

/// One kind of warning's last time out.
pub(crate) struct RateLimit(AtomicI64);

impl RateLimit {
    /// Never let out yet.
    pub(crate) const fn new() -> Self {
        Self(AtomicI64::new(i64::MIN))
    }

    /// Whether a warning may go out now (and so counts as the last one).
    pub(crate) fn allow(&self) -> bool {
        let now = Ktime::ktime_get().to_ms();
        let last = self.0.load(Ordering::Relaxed);
        now.saturating_sub(last) >= INTERVAL_MS
            && self
                .0
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }
}
