// SPDX-License-Identifier: GPL-2.0

//! The ECN/DCQCN/PFC knobs of a bond (issue 6).
//!
//! The policy core validates every value (`policy::knobs`) and decides
//! (`policy::congestion`); this module holds the settings, runs the PFC
//! fan-out and reports:
//!
//! - `state`: a bond's settings and each member's PFC status;
//! - `pfc`: PFC applied member by member, quiesced, under RTNL, and to
//!   members that join or come back (`apply_pending_pfc`);
//! - `report`: the knob snapshot with counters, for netlink and sysfs;
//! - `sysfs`: `mrbond/ecn/`, `mrbond/pfc/`, `members/<dev>/pfc_override`;
//! - `netlink`: ECN_SET, PFC_SET and the knob part of BOND_GET.
//!
//! Writes of either interface are validated by the option table
//! (`policy::options`) and applied by `crate::ctl::options`.

#![deny(unsafe_code)]

pub(crate) mod netlink;
mod pfc;
pub(crate) use pfc::{apply as apply_pfc, apply_pending as apply_pending_pfc};
mod report;
pub(crate) mod state;
pub(crate) mod sysfs;
