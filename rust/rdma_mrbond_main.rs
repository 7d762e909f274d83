// SPDX-License-Identifier: GPL-2.0

//! rdma_mrbond: one virtual RDMA device bonded over RoCE ports of separate HCAs.
//!
//! This is the crate root; it only wires the module together. The layers, with
//! dependencies pointing one way:
//!
//! - `policy`: pure `core`-only decisions (placement, eligibility, failover
//!   planning, knob validation), shared verbatim with the host test crate;
//! - the safe Rust layer (`client`, …) holding state machines and kernel state;
//! - `ffi`: the only module with `unsafe`, over the C glue in `mrbond_glue.c`
//!   (ops tables and helpers for which the 6.12 kernel crate has no abstraction).

use kernel::prelude::*;

mod client;
mod ffi;
#[path = "policy/mod.rs"]
pub mod policy;

module! {
    type: RdmaMrbond,
    name: "rdma_mrbond",
    description: "Bond RoCE ports of separate HCAs into one virtual RDMA device",
    license: "GPL",
}

/// Module state. Teardown is by `Drop` in field order.
struct RdmaMrbond {
    /// Watches every RDMA device of the system for members to bond.
    _client: client::Registration,
}

impl kernel::Module for RdmaMrbond {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let client = client::Registration::new()?;
        pr_info!("loaded\n");
        Ok(Self { _client: client })
    }
}

impl Drop for RdmaMrbond {
    fn drop(&mut self) {
        pr_info!("unloading\n");
    }
}
