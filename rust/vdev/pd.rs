// SPDX-License-Identifier: GPL-2.0

//! The vdev's protection domains. A vdev PD gets one member PD per member,
//! made when a QP or MR on that member first needs it. Its QPs leave the
//! placement inputs behind: the member of its first QP (its home, where a
//! PD-bound ULP's later QPs go), of its last QP, and of the last QP each
//! task created. An MR binds to one of those when it is allocated, because
//! every FRWR ULP but RDS advertises `mr->rkey` before it posts REG_MR and
//! an rkey is valid only on the HCA that issued it.

#![deny(unsafe_code)]

use kernel::{current, new_mutex, prelude::*, sync::Mutex};

use crate::{
    ffi::MAX_MEMBERS,
    policy::{ulp, MemberIndex},
    rdma::pd::{MemberPd, NewPd},
};

/// Whether a PD may exist: one rkey valid on every member cannot, and a QP
/// of the PD may live on any member.
pub(crate) fn may_alloc(pd: &NewPd<'_>) -> Result {
    if pd.wants_global_rkey() {
        pr_warn!(
            "{} asked for an unsafe global rkey, refused: QPs of one PD live on several HCAs\n",
            pd.ulp()
        );
        return Err(crate::rdma::eopnotsupp());
    }
    Ok(())
}

/// The driver's data in a vdev PD.
#[pin_data]
pub(crate) struct VdevPd {
    /// Lock "mrbond:pd": the member PDs and the placement inputs. Taken
    /// inside the vdev's objects lock, the MR table's lock or the device's
    /// PD set, with nothing inside it but the member's own PD, MR and QP
    /// verbs and, while a QP is made on the member PD, the QPN table's
    /// lock.
    #[pin]
    inner: Mutex<PdInner>,
}

struct PdInner {
    member: [Option<MemberPd>; MAX_MEMBERS],
    /// The member of the PD's first QP.
    home: Option<usize>,
    /// The member of its last QP.
    last_qp: Option<usize>,
    /// The member of its last QP, and the task (pid) that created it.
    task_hint: Option<(usize, i32)>,
}

impl VdevPd {
    /// A PD with no member PD and no QP yet.
    pub(crate) fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            inner <- new_mutex!(
                PdInner {
                    member: [const { None }; MAX_MEMBERS],
                    home: None,
                    last_qp: None,
                    task_hint: None,
                },
                "mrbond:pd"
            ),
        }? Error)
    }

    /// `with` applied to the PD's object on member `slot`, which `alloc`
    /// makes if there is none yet. May sleep.
    pub(crate) fn with_member_pd<R>(
        &self,
        slot: usize,
        alloc: impl FnOnce() -> Result<MemberPd>,
        with: impl FnOnce(&MemberPd) -> R,
    ) -> Result<R> {
        let mut inner = self.inner.lock();
        let entry = inner.member.get_mut(slot).ok_or(EINVAL)?;
        let pd = match entry {
            Some(pd) => pd,
            None => entry.insert(alloc()?),
        };
        Ok(with(pd))
    }

    /// The member of the PD's first QP, `None` before it.
    pub(crate) fn home(&self) -> Option<usize> {
        self.inner.lock().home
    }

    /// The current task created a QP of the PD on member `slot`.
    pub(crate) fn note_qp(&self, slot: usize) {
        let task = current!().pid();
        let mut inner = self.inner.lock();
        inner.home.get_or_insert(slot);
        inner.last_qp = Some(slot);
        inner.task_hint = Some((slot, task));
    }

    /// The member a new MR of the PD, allocated by the current task,
    /// binds to; `None` before the PD's first QP.
    pub(crate) fn mr_member(&self) -> Option<usize> {
        let task = current!().pid();
        let inner = self.inner.lock();
        let hint = inner
            .task_hint
            .filter(|&(_, t)| t == task)
            .map(|(slot, _)| slot);
        let index = |slot: Option<usize>| slot.and_then(MemberIndex::new);
        ulp::mr_member(index(hint), index(inner.last_qp), index(inner.home)).map(|m| m.get())
    }

    /// Member `slot` is going away, its QPs and MRs gone already: frees
    /// the PD's object there and forgets the member as a placement input.
    pub(crate) fn detach(&self, slot: usize) {
        let mut inner = self.inner.lock();
        if let Some(pd) = inner.member.get_mut(slot) {
            *pd = None;
        }
        let gone = |m: &mut Option<usize>| {
            if *m == Some(slot) {
                *m = None;
            }
        };
        gone(&mut inner.home);
        gone(&mut inner.last_qp);
        if inner.task_hint.is_some_and(|(m, _)| m == slot) {
            inner.task_hint = None;
        }
    }
}
