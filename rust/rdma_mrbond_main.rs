// SPDX-License-Identifier: GPL-2.0

//! rdma_mrbond: one virtual RDMA device bonded over RoCE ports of separate HCAs.
//!
//! This is the crate root; it only wires the module together. Each
//! directory is one layer, with dependencies pointing one way:
//!
//! - `policy`: pure `core`-only decisions (placement, eligibility, failover
//!   planning, the option table, the capability intersection), shared
//!   verbatim with the host test crate;
//! - `ctl`: the control plane (`registry` of devices and bonds, `bond`,
//!   `options` applying every sysfs or netlink write, `sysfs`, `text`), and
//!   `knobs` (ECN/DCQCN/PFC settings, the PFC fan-out, their reports);
//! - `vdev`: the vdev's verbs (its `DeviceOps` table; `handle` the
//!   control plane's handle of the device; `attrs` the device
//!   attributes, `ports` the port verbs and counters, `pd` the PDs, `qpns`
//!   the QPN table);
//! - `rdma`: the safe RDMA abstractions (an `ib_device_ops` table built
//!   from a trait, typed handles, the device container and its sysfs
//!   directories, the objects and their data path) over bindings generated
//!   from `<rdma/*.h>`;
//! - `ffi`: safe wrappers over `shim/`, the registrations 6.12's kernel
//!   crate has no abstraction for, through the ABI generated from their
//!   headers; `ffi::entry`, the C -> Rust trampolines (`mrbond_rs_*`).
//!
//! `inject` holds the test builds' fault-injection points.
//! `rdma` and `ffi` hold the module's `unsafe`; every other module denies
//! `unsafe_code`.

// `Bond`'s pin-initialiser has more fields than `pin_init!` expands within
// the default macro recursion limit.
#![recursion_limit = "256"]

use kernel::prelude::*;

mod ctl;
mod ffi;
mod inject;
mod knobs;
#[path = "policy/mod.rs"]
pub mod policy;
mod rdma;
mod vdev;

module! {
    type: RdmaMrbond,
    name: "rdma_mrbond",
    description: "Bond RoCE ports of separate HCAs into one virtual RDMA device",
    license: "GPL",
}

/// Module state. The glue owns the registry, the context of its
/// callbacks: dropping it stops requests, destroys the bonds, then
/// unregisters the rest before the registry goes.
struct RdmaMrbond {
    _glue: ffi::Glue<ctl::registry::Registry>,
    /// Dropped last: the points may be passed until the glue is gone.
    _inject: inject::Files,
}

impl kernel::Module for RdmaMrbond {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let inject = inject::Files::new();
        let registry = KBox::pin_init(ctl::registry::Registry::new(), GFP_KERNEL)?;
        let glue = ffi::Glue::new(registry)?;
        pr_info!("loaded\n");
        Ok(Self {
            _glue: glue,
            _inject: inject,
        })
    }
}

impl Drop for RdmaMrbond {
    fn drop(&mut self) {
        // The fields go after this, in order: the glue, then the points.
        pr_info!("unloading\n");
    }
}
