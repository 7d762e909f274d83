// SPDX-License-Identifier: GPL-2.0

//! The `ib_client` that sees every RDMA device: the source of member add/remove
//! events.

use kernel::prelude::*;

use crate::ffi::{ClientRegistration, IbDevice};

/// Keeps the `ib_client` registered for as long as it lives.
pub(crate) struct Registration {
    _client: ClientRegistration,
}

impl Registration {
    /// Registers the client; the RDMA core then reports every existing device
    /// through [`device_added`] before this returns.
    pub(crate) fn new() -> Result<Self> {
        Ok(Self {
            _client: ClientRegistration::register()?,
        })
    }
}

/// Called by the RDMA core for every device, present or future.
pub(crate) fn device_added(dev: &IbDevice<'_>) -> Result {
    pr_info!(
        "sees RDMA device {} ({} port(s), driver id {})\n",
        dev.name(),
        dev.port_count(),
        dev.driver_id()
    );
    Ok(())
}

/// Called by the RDMA core before a device it reported goes away.
pub(crate) fn device_removed(dev: &IbDevice<'_>) {
    pr_info!("RDMA device {} removed\n", dev.name());
}
