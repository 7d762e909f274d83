//! Host build of the rdma_mrbond policy core.
//!
//! The policy source lives in `rust/policy/` and is compiled into the kernel
//! module unchanged; this crate compiles the same files for `cargo test`,
//! property tests, benchmarks and the simulator. The lints below are the
//! kernel build's constraints made errors here, so a host build that passes
//! clippy cannot hide a panic path, a float or a missing doc from the kernel.
#![no_std]
#![deny(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::arithmetic_side_effects,
    clippy::float_arithmetic,
    clippy::unreachable,
    clippy::todo,
    clippy::unimplemented,
    missing_docs,
    unsafe_code
)]

#[path = "../../policy/mod.rs"]
pub mod policy;
pub mod workload;

pub use policy::congestion::{
    pfc_outcome, pfc_plan, pfc_target, qp_traffic_class, status_groups, Counters, Errno,
    KnobStatus, PfcOutcome, PfcPlan, StatusGroup, Unsupported,
};
pub use policy::eligibility::{
    AdminState, Debounce, EligibilitySet, Inputs, LacpState, Reason, Status, Transition,
    Transitions, Usability,
};
pub use policy::failover::{
    plan_failover, plan_rebalance, Action, ActionKind, MemberView, PlanSummary, Planner,
    PlannerConfig, QpEntry, RebalanceConfig,
};
pub use policy::hash::{l34_hash, FlowKey};
pub use policy::knobs::{BondMode, ConfigError, Knob, KnobValues};
pub use policy::placement::{Pin, PinScope, PlaceError, PlaceRequest, Placer, Policy};
pub use policy::{MemberIndex, MemberMask, MAX_MEMBERS};
