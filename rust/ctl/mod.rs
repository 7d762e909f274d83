// SPDX-License-Identifier: GPL-2.0

//! The control plane: which devices exist and which bonds are made of them
//! (`registry`), one bond's members, their eligibility and the snapshots it
//! reports (`bond`, with `bond::utilisation`, the members' transmit rates
//! that WRR weighs), and the requests that change them: `options` applies
//! every sysfs or netlink write after the policy's option table validated
//! it, `sysfs` the files of `mrbond/` and `members/<dev>/`, `text` the
//! names and pages they are written in.
//!
//! It runs in process context (requests, the module's ordered workqueue)
//! and never on the data path; the vdev's verbs read what it decided.

#![deny(unsafe_code)]

pub(crate) mod bond;
pub(crate) mod options;
pub(crate) mod registry;
pub(crate) mod sysfs;
pub(crate) mod text;
