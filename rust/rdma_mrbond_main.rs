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
//! - `vdev`: the vdev's verbs (its `DeviceOps` table; `attrs` the device
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
//! `rdma` and `ffi` hold the module's `unsafe` (besides the one call here
//! that starts the glue); every other module denies `unsafe_code`.

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

/// Module state. `Drop` stops requests, destroys the bonds, then unregisters
/// the rest; the registry outlives every callback.
struct RdmaMrbond {
    glue: Option<ffi::Glue>,
    registry: Pin<KBox<ctl::registry::Registry>>,
    /// Dropped last: the points may be passed until the glue is gone.
    _inject: inject::Files,
}

impl kernel::Module for RdmaMrbond {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let inject = inject::Files::new();
        let registry = KBox::pin_init(ctl::registry::Registry::new(), GFP_KERNEL)?;
        // SAFETY: the registry lives in the module state and is dropped only
        // after the glue (see `Drop`).
        let glue = unsafe { ffi::Glue::init(registry.as_ref())? };
        pr_info!("loaded\n");
        Ok(Self {
            glue: Some(glue),
            registry,
            _inject: inject,
        })
    }
}

impl Drop for RdmaMrbond {
    fn drop(&mut self) {
        pr_info!("unloading\n");
        if let Some(glue) = self.glue.as_ref() {
            glue.stop();
        }
        self.registry.teardown();
        // Unregisters the ib_client; the registry is still alive for it.
        self.glue = None;
    }
}
