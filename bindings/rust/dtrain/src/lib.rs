//! Safe Rust API of libdtrain: distributed training collectives, data
//! parallelism and optimizers on slices.
//!
//! A [`Comm`] is a communicator; its collectives and point-to-point calls take
//! slices of an [`Element`] type (`f32`, `f64`, `i32`, `i64`, `i8`, `u8`,
//! [`F16`], [`Bf16`]), described to the library as one-dimensional DLPack
//! tensors. Every call returns [`Result`]; an [`Error`] carries the
//! [`Status`] and the library's message.
//!
//! Ownership follows the C API: a [`Comm`] owns its handle and destroys it on
//! drop; a [`Request`] of a non-blocking call borrows its buffers and its
//! communicator until it is waited for or dropped; a communicator made by
//! [`Comm::split`] borrows its parent; an [`Optimizer`] borrows its parameter
//! and gradient slices mutably until it is dropped, and so does a [`Ddp`]
//! (data parallelism) its gradient slices and its communicator (over CUDA
//! gradients, [`Ddp::new_device`], it keeps their [`DeviceTensor`]s). A [`Zero`]
//! (ZeRO stages 0–3) owns its parameters and gradients, lends them out as
//! slices borrowed from it, and borrows its communicator. A
//! [`PipelineSchedule`] is plain data: each rank's pipeline actions in order,
//! and so is a [`Plan`], the planner's ranked configurations.
//!
//! ```
//! use dtrain::{Comm, ReduceOp};
//!
//! # fn main() -> Result<(), dtrain::Error> {
//! let comm = Comm::new()?; // with no launcher variables: a world of one
//! let grads = [1.0f32, 2.0, 3.0];
//! let mut sum = [0.0f32; 3];
//! comm.allreduce(&grads, &mut sum, ReduceOp::Sum)?;
//! assert_eq!(sum, grads);
//! # Ok(()) }
//! ```
//!
//! Linking: `dtrain-sys` finds libdtrain through `DTRAIN_LIB_DIR` (or
//! pkg-config); at run time the dynamic loader must find `libdtrain.so.0`.

mod abort;
mod collectives;
mod comm;
mod cp;
mod ddp;
mod device;
mod element;
mod error;
mod half;
mod log;
mod mesh;
mod moe;
mod nonblocking;
mod operation;
mod optimizer;
mod options;
mod p2p;
mod pipeline;
mod pipeline_executor;
mod plan;
mod request;
mod start;
mod stats;
mod tensor;
pub mod tp;
mod version;
mod zero;

pub use dtrain_sys as sys;

pub use abort::AbortHandle;
pub use comm::Comm;
pub use cp::{attention_merge, cp_positions, cp_shard, cp_unshard, AttentionSpec, CpLayout, SavedAttention, Sharding};
pub use ddp::{
    broadcast_parameters, broadcast_parameters_device, BucketState, Compression, Ddp, DdpOptions,
    GradientSource,
};
pub use device::{CudaStream, DeviceTensor};
pub use element::{DataType, Element};
pub use error::{error_last, status_string, Error, Result, Status};
pub use half::{Bf16, F16};
pub use log::{set_log_handler, set_log_level, LogHandler, LogLevel};
pub use mesh::{Mesh, CUSTOMARY_DIMS};
pub use moe::{
    balance_loss, route, route_backward, z_loss, Activation, DropPolicy, ExpertGradients, Experts, MoeOptions,
    MoePlan, Routing, Scoring, DENSE_GRAD_DIMS, EXPERT_GRAD_DIMS,
};
pub use optimizer::{Optimizer, OptimizerKind, OptimizerOptions, StepInfo};
pub use options::{Backend, Options, ReduceOp};
pub use p2p::P2pOp;
pub use stats::{OpKind, OpStats};
pub use pipeline::{
    ActionKind, PipelineAction, PipelineSchedule, PipelineScheduleOptions, ScheduleKind,
};
pub use pipeline_executor::{Pipeline, PipelineStepInfo, StageFn, StageFunctions};
pub use plan::{
    cluster_load, cluster_preset, plan_evaluate, zero_memory, Plan, PlanCluster, PlanConfig, PlanEstimate, PlanFormat,
    PlanMemory, PlanModel, PlanOptions, PlanReason, PlanRejection, PlanSummary, PlanTime, Recompute,
};
pub use request::Request;
pub use tensor::tensor_check;
pub use version::{build_info, version, Version, HEADER_VERSION};
pub use zero::{Zero, ZeroMemory, ZeroOptions};
