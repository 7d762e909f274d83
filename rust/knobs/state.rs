// SPDX-License-Identifier: GPL-2.0

//! A bond's ECN/DCQCN/PFC settings and each member's PFC status.
//!
//! Per-member entries are kept by slot and remember the member they belong
//! to: a member that takes a freed slot starts from a clean entry.

use kernel::{new_mutex, prelude::*, sync::Mutex};

use crate::{
    ctl::text::Name,
    ffi::MAX_MEMBERS,
    policy::{
        congestion::{self, KnobStatus},
        knobs::{ConfigError, Knob, KnobValues},
    },
};

/// One member slot's knob state.
#[derive(Clone, Copy)]
pub(crate) struct MemberKnobs {
    /// The member this entry belongs to.
    owner: Option<Name>,
    /// PFC bitmap of this member instead of the bond's.
    pub(crate) pfc_override: Option<u8>,
    /// Where the member's PFC stands.
    pfc: KnobStatus,
    /// The netdev `pfc` was recorded for, 0 if none: PFC is the netdev's,
    /// so a member on another netdev starts afresh.
    netdev: u32,
}

impl MemberKnobs {
    const EMPTY: MemberKnobs = MemberKnobs {
        owner: None,
        pfc_override: None,
        pfc: KnobStatus::Unset,
        netdev: 0,
    };

    fn owned_by(&self, name: &Name) -> bool {
        self.owner
            .as_ref()
            .is_some_and(|o| o.as_bytes() == name.as_bytes())
    }
}

/// What the knob settings lock protects.
pub(crate) struct KnobsState {
    /// Validated values of every knob (ECN, DCQCN; PFC lives in `pfc`).
    values: KnobValues,
    /// The bond's PFC bitmap; `None` until the first write (PFC left alone).
    pfc: Option<u8>,
    /// Per member slot.
    members: [MemberKnobs; MAX_MEMBERS],
}

impl KnobsState {
    /// The value of a knob.
    pub(crate) fn value(&self, knob: Knob) -> u32 {
        self.values.get(knob)
    }

    /// Validates every change, then stores them all; a refusal changes
    /// nothing.
    pub(crate) fn set_ecn(&mut self, changes: &[Option<(Knob, u64)>]) -> Result<(), ConfigError> {
        let mut next = self.values;
        for &(knob, value) in changes.iter().flatten() {
            if !knob.is_ecn() {
                return Err(ConfigError::UnknownKnob);
            }
            next.set(knob, value)?;
        }
        self.values = next;
        Ok(())
    }

    /// The bond's PFC bitmap.
    pub(crate) fn pfc_bitmap(&self) -> Option<u8> {
        self.pfc
    }

    /// Sets the bond's PFC bitmap (validated by the caller).
    pub(crate) fn set_pfc_bitmap(&mut self, bitmap: u8) {
        self.pfc = Some(bitmap);
    }

    /// The entry of a member PFC was never applied to: `pending` once the
    /// bond has a bitmap (the evaluation pass applies it as soon as the
    /// member's device is there), else `unset`.
    fn fresh(&self, owner: Option<Name>) -> MemberKnobs {
        MemberKnobs {
            owner,
            pfc: if self.pfc.is_some() {
                KnobStatus::Pending
            } else {
                KnobStatus::Unset
            },
            ..MemberKnobs::EMPTY
        }
    }

    /// The entry of `name` in `slot` (a fresh one if it is not theirs).
    pub(crate) fn member(&self, slot: usize, name: &Name) -> MemberKnobs {
        match self.members.get(slot) {
            Some(m) if m.owned_by(name) => *m,
            _ => self.fresh(None),
        }
    }

    fn member_mut(&mut self, slot: usize, name: &Name) -> Option<&mut MemberKnobs> {
        let fresh = self.fresh(Some(*name));
        let m = self.members.get_mut(slot)?;
        if !m.owned_by(name) {
            *m = fresh;
        }
        Some(m)
    }

    /// Sets or clears a member's PFC override (validated by the caller).
    pub(crate) fn set_pfc_override(&mut self, slot: usize, name: &Name, value: Option<u8>) {
        if let Some(m) = self.member_mut(slot, name) {
            m.pfc_override = value;
        }
    }

    /// Records where the PFC of a member on `netdev` (0: unknown) stands.
    pub(crate) fn set_pfc_status(
        &mut self,
        slot: usize,
        name: &Name,
        netdev: u32,
        status: KnobStatus,
    ) {
        if let Some(m) = self.member_mut(slot, name) {
            m.pfc = status;
            m.netdev = netdev;
        }
    }

    /// Where the PFC of a member now on `netdev` stands.
    pub(crate) fn pfc_status(&self, slot: usize, name: &Name, netdev: u32) -> KnobStatus {
        let m = self.member(slot, name);
        if m.netdev != 0 && netdev != 0 && m.netdev != netdev {
            self.fresh(None).pfc
        } else {
            m.pfc
        }
    }

    /// The PFC bitmap the member should have, `None` to leave it alone.
    pub(crate) fn pfc_target(&self, slot: usize, name: &Name) -> Option<u8> {
        congestion::pfc_target(self.pfc, self.member(slot, name).pfc_override)
    }

    /// The traffic class of a bond QP whose ULP asks for `requested`.
    pub(crate) fn qp_traffic_class(&self, requested: u8) -> u8 {
        self.values.qp_traffic_class(requested)
    }
}

/// The knobs of one bond.
///
/// Lock order: `apply`, then RTNL or the bond's `state`, then `settings`.
#[pin_data]
pub(crate) struct Knobs {
    /// Serialises PFC fan-outs (sysfs and netlink); held across RTNL.
    #[pin]
    pub(crate) apply: Mutex<()>,
    /// Settings and statuses; held briefly, never across a call into C
    /// that takes RTNL.
    #[pin]
    pub(crate) settings: Mutex<KnobsState>,
}

impl Knobs {
    /// Every knob at its default, PFC unset.
    pub(crate) fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            apply <- new_mutex!((), "mrbond:knobs_apply"),
            settings <- new_mutex!(
                KnobsState {
                    values: KnobValues::DEFAULTS,
                    pfc: None,
                    members: [MemberKnobs::EMPTY; MAX_MEMBERS],
                },
                "mrbond:knobs"
            ),
        })
    }

    /// The traffic class of a bond QP (for the data path).
    pub(crate) fn qp_traffic_class(&self, requested: u8) -> u8 {
        self.settings.lock().qp_traffic_class(requested)
    }
}
