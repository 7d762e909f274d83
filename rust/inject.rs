// SPDX-License-Identifier: GPL-2.0

//! Fault-injection points of test builds (`make MRBOND_FAULT_INJECT=1`,
//! which passes `--cfg MRBOND_FAULT_INJECT`): a race test arms a point
//! through debugfs (`rdma_mrbond/inject/<point>/armed_ms`), and the next
//! pass through it sleeps that long once, so that the test opens its
//! window deterministically instead of gambling on timing; `hits` counts
//! the passes that slept. In other builds every point does nothing.

#![deny(unsafe_code)]

use core::{
    ffi::CStr,
    sync::atomic::{AtomicI32, Ordering},
};

use kernel::prelude::*;

use crate::ffi;

/// Longest sleep a point takes: a window, not a hang.
const MAX_MS: i32 = 30_000;

/// The fault-injection points.
#[derive(Clone, Copy)]
pub(crate) enum Inject {
    /// `map_mr_sg`: the member MR read, not yet mapped.
    MapMrSg,
    /// `alloc_mr`: the member chosen, its MR not yet allocated.
    AllocMr,
    /// `destroy_cq`: called, the CQ still where a detach kicks it.
    CqDestroy,
    /// A CQ's callback work: running, its CQ not yet read.
    CqKickWork,
    /// A member's detach: a member QP taken from its path, not yet
    /// destroyed.
    DetachQp,
    /// A QP's `IB_EVENT_QP_FATAL` work: running, its QP not yet read.
    QpFatalWork,
    /// A member's attach fails (`EIO`), once.
    AttachFail,
    /// A member's failure: its QPs not yet moved to ERR.
    MemberFail,
    /// A CM REQ's send work of QP1: before it picks the member.
    GsiReqOut,
    /// A member's REQ handler: before it hands the REQ to QP1.
    CmReqIn,
    /// A member's attach: one of its REQ listeners just went live.
    CmListen,
    /// Following a rename: a member renamed in the bond's state, its sysfs
    /// directory not yet replaced.
    RenameFollow,
}

const COUNT: usize = 12;

impl Inject {
    const ALL: [Inject; COUNT] = [
        Self::MapMrSg,
        Self::AllocMr,
        Self::CqDestroy,
        Self::CqKickWork,
        Self::DetachQp,
        Self::QpFatalWork,
        Self::AttachFail,
        Self::MemberFail,
        Self::GsiReqOut,
        Self::CmReqIn,
        Self::CmListen,
        Self::RenameFollow,
    ];

    /// The point's debugfs directory, as the selftests name it.
    const fn name(self) -> &'static CStr {
        match self {
            Self::MapMrSg => c"map_mr_sg",
            Self::AllocMr => c"alloc_mr",
            Self::CqDestroy => c"cq_destroy",
            Self::CqKickWork => c"cq_kick_work",
            Self::DetachQp => c"detach_qp",
            Self::QpFatalWork => c"qp_fatal_work",
            Self::AttachFail => c"attach_fail",
            Self::MemberFail => c"member_fail",
            Self::GsiReqOut => c"gsi_req_out",
            Self::CmReqIn => c"cm_req_in",
            Self::CmListen => c"cm_listen",
            Self::RenameFollow => c"rename_follow",
        }
    }

    /// The name, for the log.
    fn label(self) -> &'static str {
        self.name().to_str().unwrap_or("?")
    }

    fn state(self) -> Option<&'static PointState> {
        POINTS.get(self as usize)
    }
}

/// A point's debugfs files.
struct PointState {
    /// Taken (swapped to 0) by the next pass.
    armed_ms: AtomicI32,
    /// Passes that waited.
    hits: AtomicI32,
}

static POINTS: [PointState; COUNT] = [const {
    PointState {
        armed_ms: AtomicI32::new(0),
        hits: AtomicI32::new(0),
    }
}; COUNT];

/// The delay armed at `point`, taken; 0 if none (always in other builds).
fn take(point: Inject) -> u32 {
    if !cfg!(MRBOND_FAULT_INJECT) {
        return 0;
    }
    let Some(s) = point.state() else {
        return 0;
    };
    let ms = s.armed_ms.swap(0, Ordering::AcqRel);
    if ms <= 0 {
        return 0;
    }
    s.hits.fetch_add(1, Ordering::AcqRel);
    pr_info!("inject: {}: taken ({})\n", point.label(), ms);
    u32::try_from(ms.min(MAX_MS)).unwrap_or(0)
}

fn resumed(point: Inject) {
    pr_info!("inject: {}: resumed\n", point.label());
}

/// Passes `point`, sleeping if it is armed. Process context.
pub(crate) fn inject(point: Inject) {
    let ms = take(point);
    if ms != 0 {
        ffi::sleep_ms(ms);
        resumed(point);
    }
}

/// Passes `point` in any context: busy-waits where it may not sleep.
pub(crate) fn inject_any(point: Inject) {
    let ms = take(point);
    if ms != 0 {
        ffi::wait_ms_any_context(ms);
        resumed(point);
    }
}

/// `EIO` once where `point` is armed to fail. Process context.
pub(crate) fn inject_fail(point: Inject) -> Result {
    match take(point) {
        0 => Ok(()),
        _ => Err(EIO),
    }
}

/// The points' debugfs files, removed on drop; none in other builds.
pub(crate) struct Files {
    _dir: Option<ffi::DebugfsDir>,
}

impl Files {
    /// `rdma_mrbond/inject/<point>/{armed_ms,hits}` in a test build.
    pub(crate) fn new() -> Self {
        if !cfg!(MRBOND_FAULT_INJECT) {
            return Self { _dir: None };
        }
        let top = ffi::DebugfsDir::new(c"rdma_mrbond");
        let dir = top.subdir(c"inject");
        for point in Inject::ALL {
            let Some(s) = point.state() else { continue };
            let d = dir.subdir(point.name());
            d.atomic_file(c"armed_ms", 0o600, &s.armed_ms);
            d.atomic_file(c"hits", 0o400, &s.hits);
        }
        pr_info!("fault injection build: rdma_mrbond/inject\n");
        Self { _dir: Some(top) }
    }
}
