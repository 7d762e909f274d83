// SPDX-License-Identifier: GPL-2.0

//! The RDMA abstractions 6.12's kernel crate lacks, over the bindings
//! generated from `<rdma/*.h>` ([`bindings`]): the `ib_device_ops` table a
//! driver builds from a trait, and the typed handles its verbs receive, in
//! the manner of `kernel::net::phy`, and the container of each device
//! ([`container`]): its allocation, registration, port bindings, member slots
//! and `.dealloc_driver`.

pub(crate) mod ah;
pub(crate) mod av;
pub(crate) mod bindings;
pub(crate) mod cm;
pub(crate) mod container;
pub(crate) mod cq;
pub(crate) mod device;
pub(crate) mod dma;
pub(crate) mod gsi;
pub(crate) mod gsi_member;
pub(crate) mod gsi_send;
pub(crate) mod ib_mad;
pub(crate) mod irq_lock;
pub(crate) mod member;
pub(crate) mod member_device;
pub(crate) mod mr;
pub(crate) mod mr_pages;
pub(crate) mod pd;
pub(crate) mod qp;
pub(crate) mod qp_path;
pub(crate) mod qp_ring;
pub(crate) mod qp_set;
pub(crate) mod ratelimit;
pub(crate) mod rcu;
pub(crate) mod set;
pub(crate) mod sysfs;
pub(crate) mod tfo_channel;
pub(crate) mod tfo_move;
pub(crate) mod wr;
pub(crate) mod xarray;

use kernel::error::Error;

/// `-EOPNOTSUPP`, which the RDMA core expects for a verb or an option a
/// driver does not offer (6.12's `kernel::error::code` lacks it).
pub(crate) fn eopnotsupp() -> Error {
    Error::from_errno(-(kernel::bindings::EOPNOTSUPP as i32))
}

/// `ENETDOWN`, which 6.12's kernel crate does not name: the member an
/// object needs is gone.
pub(crate) fn enetdown() -> Error {
    Error::from_errno(-(kernel::bindings::ENETDOWN as i32))
}

/// `ENETUNREACH`, which 6.12's kernel crate does not name: a member has no
/// address for the connection.
pub(crate) fn enetunreach() -> Error {
    Error::from_errno(-(kernel::bindings::ENETUNREACH as i32))
}
