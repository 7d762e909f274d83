// SPDX-License-Identifier: GPL-2.0
//! The client side of the "rdma_mrbond" generic netlink family, shared by
//! the `mrbondctl` command line and `mrbond-exporter`: the UAPI's numbers
//! and names ([`attrs`]), request builders and reply decoders ([`msg`]),
//! the transport ([`nl`]) and the renderers ([`output`], [`knob_output`]).

pub mod apply;
pub mod attrs;
pub mod cli;
pub mod cm_order;
pub mod config;
pub mod error;
pub mod keywords;
pub mod knob_args;
pub mod knob_output;
pub mod knob_show;
pub mod msg;
pub mod nl;
pub mod output;
pub mod sys;
