//! The parallelism planner (`dtrain/plan.h`): every way of training a
//! transformer on a cluster, ranked by estimated step time, with memory per
//! GPU and step time broken down, and why the others were rejected.
//!
//! ```
//! use dtrain::{cluster_preset, Plan, PlanModel, PlanOptions};
//!
//! # fn main() -> Result<(), dtrain::Error> {
//! let model = PlanModel::new(8, 1024, 16, 32000, 1024);
//! let plan = Plan::new(&model, &cluster_preset("h100", 1)?, &PlanOptions::new(64))?;
//! let best = plan.ranked(0)?;
//! assert_eq!(best.config.dp * best.config.tp * best.config.pp * best.config.cp * best.config.ep, 8);
//! # Ok(()) }
//! ```

use std::ffi::{CStr, CString};
use std::mem::MaybeUninit;
use std::path::Path;
use std::ptr::NonNull;

use dtrain_sys as sys;

use crate::element::DataType;
use crate::error::{check, Error, Result, Status};
use crate::optimizer::OptimizerOptions;
use crate::pipeline::ScheduleKind;
use crate::zero::ZeroMemory;

/// A decoder-only transformer (`dt_plan_model`); `None`: the library's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlanModel {
    pub layers: i32,
    pub hidden: i32,
    pub heads: i32,
    pub vocab: i32,
    pub seq_len: i32,
    /// Grouped-query attention; `None`: `heads`.
    pub kv_heads: Option<i32>,
    /// `None`: `4 * hidden`.
    pub ffn_hidden: Option<i32>,
    /// Mixture of experts; `None`: dense.
    pub experts: Option<i32>,
    pub top_k: Option<i32>,
}

impl PlanModel {
    /// A dense model with multi-head attention and a 4h MLP.
    pub fn new(layers: i32, hidden: i32, heads: i32, vocab: i32, seq_len: i32) -> PlanModel {
        PlanModel {
            layers,
            hidden,
            heads,
            vocab,
            seq_len,
            kv_heads: None,
            ffn_hidden: None,
            experts: None,
            top_k: None,
        }
    }

    fn to_raw(self) -> Result<sys::dt_plan_model> {
        let mut raw = MaybeUninit::<sys::dt_plan_model>::zeroed();
        // SAFETY: dt_plan_model_init fills every field of this version.
        check(unsafe { sys::dt_plan_model_init(raw.as_mut_ptr(), sys::DT_PLAN_MODEL_VERSION) })?;
        // SAFETY: zeroed and then initialised by the library.
        let mut raw = unsafe { raw.assume_init() };
        raw.layers = self.layers;
        raw.hidden = self.hidden;
        raw.heads = self.heads;
        raw.vocab = self.vocab;
        raw.seq_len = self.seq_len;
        let undef = sys::DT_UNDEF as i32;
        raw.kv_heads = self.kv_heads.unwrap_or(undef);
        raw.ffn_hidden = self.ffn_hidden.unwrap_or(undef);
        raw.experts = self.experts.unwrap_or(undef);
        raw.top_k = self.top_k.unwrap_or(undef);
        Ok(raw)
    }
}

/// Identical nodes of GPUs (`dt_plan_cluster`): bytes, FLOP/s, bytes/s, seconds;
/// `overlap` is the share of data- and context-parallel communication that
/// compute hides, in [0, 1] (1 for GPUs, 0 for CPU ranks without a spare core).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanCluster {
    pub nodes: i32,
    pub gpus_per_node: i32,
    pub gpu_memory: f64,
    pub peak_flops: f64,
    pub memory_bandwidth: f64,
    pub gemm_efficiency: f64,
    pub intra_bandwidth: f64,
    pub intra_latency: f64,
    pub inter_bandwidth: f64,
    pub inter_latency: f64,
    pub overlap: f64,
}

impl PlanCluster {
    fn raw_out() -> sys::dt_plan_cluster {
        // SAFETY: every field is a number; zero is a valid value of each.
        let mut raw: sys::dt_plan_cluster = unsafe { std::mem::zeroed() };
        raw.version = sys::DT_PLAN_CLUSTER_VERSION;
        raw
    }

    fn from_raw(r: &sys::dt_plan_cluster) -> PlanCluster {
        PlanCluster {
            nodes: r.nodes,
            gpus_per_node: r.gpus_per_node,
            gpu_memory: r.gpu_memory,
            peak_flops: r.peak_flops,
            memory_bandwidth: r.memory_bandwidth,
            gemm_efficiency: r.gemm_efficiency,
            intra_bandwidth: r.intra_bandwidth,
            intra_latency: r.intra_latency,
            inter_bandwidth: r.inter_bandwidth,
            inter_latency: r.inter_latency,
            overlap: r.overlap,
        }
    }

    fn to_raw(self) -> sys::dt_plan_cluster {
        sys::dt_plan_cluster {
            version: sys::DT_PLAN_CLUSTER_VERSION,
            nodes: self.nodes,
            gpus_per_node: self.gpus_per_node,
            gpu_memory: self.gpu_memory,
            peak_flops: self.peak_flops,
            memory_bandwidth: self.memory_bandwidth,
            gemm_efficiency: self.gemm_efficiency,
            intra_bandwidth: self.intra_bandwidth,
            intra_latency: self.intra_latency,
            inter_bandwidth: self.inter_bandwidth,
            inter_latency: self.inter_latency,
            overlap: self.overlap,
        }
    }
}

fn c_string(text: &str, what: &str) -> Result<CString> {
    CString::new(text)
        .map_err(|_| Error::new(Status::InvalidArgument, format!("{what} holds a NUL byte")))
}

fn c_path(path: &Path) -> Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes()).map_err(|_| {
        Error::new(
            Status::InvalidArgument,
            format!("path {} holds a NUL byte", path.display()),
        )
    })
}

/// `nodes` nodes of a preset kind: "a100", "h100" or "h200" (8 GPUs each).
pub fn cluster_preset(name: &str, nodes: i32) -> Result<PlanCluster> {
    let name = c_string(name, "name")?;
    let mut raw = PlanCluster::raw_out();
    // SAFETY: a NUL-terminated name and a valid out pointer with its version set.
    check(unsafe { sys::dt_plan_cluster_preset(&mut raw, name.as_ptr(), nodes) })?;
    Ok(PlanCluster::from_raw(&raw))
}

/// A cluster file ("key = value" lines; see `dtrain/plan.h`).
pub fn cluster_load(path: impl AsRef<Path>) -> Result<PlanCluster> {
    let path = c_path(path.as_ref())?;
    let mut raw = PlanCluster::raw_out();
    // SAFETY: a NUL-terminated path and a valid out pointer with its version set.
    check(unsafe { sys::dt_plan_cluster_load(&mut raw, path.as_ptr()) })?;
    Ok(PlanCluster::from_raw(&raw))
}

/// Activation recomputation (`dt_plan_recompute`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Recompute {
    #[default]
    None,
    /// The attention core.
    Selective,
    /// Whole layers from their inputs.
    Full,
}

impl Recompute {
    fn to_raw(self) -> sys::dt_plan_recompute {
        match self {
            Recompute::None => sys::DT_PLAN_RECOMPUTE_NONE,
            Recompute::Selective => sys::DT_PLAN_RECOMPUTE_SELECTIVE,
            Recompute::Full => sys::DT_PLAN_RECOMPUTE_FULL,
        }
    }

    fn from_raw(raw: sys::dt_plan_recompute) -> Result<Recompute> {
        match raw {
            sys::DT_PLAN_RECOMPUTE_NONE => Ok(Recompute::None),
            sys::DT_PLAN_RECOMPUTE_SELECTIVE => Ok(Recompute::Selective),
            sys::DT_PLAN_RECOMPUTE_FULL => Ok(Recompute::Full),
            other => Err(Error::new(
                Status::Internal,
                format!("unknown recompute {other}"),
            )),
        }
    }
}

/// Why a configuration was rejected (`dt_plan_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlanReason {
    Accepted,
    Gpus,
    HeadsTp,
    FfnTp,
    LayersPp,
    SeqCp,
    ExpertsEp,
    Batch,
    Schedule,
    Memory,
}

const REASONS: [(PlanReason, sys::dt_plan_reason); 10] = [
    (PlanReason::Accepted, sys::DT_PLAN_ACCEPTED),
    (PlanReason::Gpus, sys::DT_PLAN_REJECT_GPUS),
    (PlanReason::HeadsTp, sys::DT_PLAN_REJECT_HEADS_TP),
    (PlanReason::FfnTp, sys::DT_PLAN_REJECT_FFN_TP),
    (PlanReason::LayersPp, sys::DT_PLAN_REJECT_LAYERS_PP),
    (PlanReason::SeqCp, sys::DT_PLAN_REJECT_SEQ_CP),
    (PlanReason::ExpertsEp, sys::DT_PLAN_REJECT_EXPERTS_EP),
    (PlanReason::Batch, sys::DT_PLAN_REJECT_BATCH),
    (PlanReason::Schedule, sys::DT_PLAN_REJECT_SCHEDULE),
    (PlanReason::Memory, sys::DT_PLAN_REJECT_MEMORY),
];

impl PlanReason {
    /// Every reason to reject, in the C API's order.
    pub fn rejections() -> impl Iterator<Item = PlanReason> {
        REASONS.iter().skip(1).map(|(reason, _)| *reason)
    }

    fn to_raw(self) -> sys::dt_plan_reason {
        REASONS
            .iter()
            .find(|(reason, _)| *reason == self)
            .map(|(_, raw)| *raw)
            .unwrap_or(sys::DT_PLAN_ACCEPTED)
    }

    fn from_raw(raw: sys::dt_plan_reason) -> Result<PlanReason> {
        REASONS
            .iter()
            .find(|(_, r)| *r == raw)
            .map(|(reason, _)| *reason)
            .ok_or_else(|| Error::new(Status::Internal, format!("unknown plan reason {raw}")))
    }
}

/// Output formats of [`Plan::write`] (`dt_plan_format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PlanFormat {
    Table,
    Json,
    Svg,
}

/// What a search covers (`dt_plan_options`); bit masks as in `dtrain/plan.h`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanOptions {
    pub global_batch: i64,
    /// `DT_PLAN_DIM_*` bits searched.
    pub dimensions: u32,
    /// Bit s: ZeRO stage s.
    pub zero_stages: u32,
    /// Bit k: schedule kind k (default GPipe, 1F1B, interleaved; bit 3, ZB-H1, only when set).
    pub schedules: u32,
    /// Bit k: [`Recompute`] k.
    pub recompute: u32,
    pub max_micro_batch: Option<i32>,
    pub max_virtual_stages: Option<i32>,
    pub sequence_parallel: bool,
    /// `None`: 0.9.
    pub memory_fraction: Option<f64>,
    /// `None`: 100.
    pub keep: Option<usize>,
}

impl PlanOptions {
    /// Everything searched, for a global batch of `global_batch` sequences.
    pub fn new(global_batch: i64) -> PlanOptions {
        PlanOptions {
            global_batch,
            dimensions: 0xF,
            zero_stages: 0xF,
            schedules: 0x7,
            recompute: 0x7,
            max_micro_batch: None,
            max_virtual_stages: None,
            sequence_parallel: true,
            memory_fraction: None,
            keep: None,
        }
    }

    fn to_raw(self) -> Result<sys::dt_plan_options> {
        let mut raw = MaybeUninit::<sys::dt_plan_options>::zeroed();
        // SAFETY: dt_plan_options_init fills every field of this version.
        check(unsafe {
            sys::dt_plan_options_init(raw.as_mut_ptr(), sys::DT_PLAN_OPTIONS_VERSION)
        })?;
        // SAFETY: zeroed and then initialised by the library.
        let mut raw = unsafe { raw.assume_init() };
        raw.global_batch = self.global_batch;
        raw.dimensions = self.dimensions;
        raw.zero_stages = self.zero_stages;
        raw.schedules = self.schedules;
        raw.recompute = self.recompute;
        let undef = sys::DT_UNDEF as i32;
        raw.max_micro_batch = self.max_micro_batch.unwrap_or(undef);
        raw.max_virtual_stages = self.max_virtual_stages.unwrap_or(undef);
        raw.sequence_parallel = i32::from(self.sequence_parallel);
        raw.memory_fraction = self.memory_fraction.unwrap_or(0.0);
        raw.keep = self.keep.unwrap_or(0);
        Ok(raw)
    }
}

/// One way of running a step (`dt_plan_config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PlanConfig {
    pub dp: i32,
    pub tp: i32,
    pub pp: i32,
    pub cp: i32,
    pub ep: i32,
    pub zero_stage: i32,
    pub schedule: ScheduleKind,
    pub virtual_stages: i32,
    pub micro_batch: i32,
    pub recompute: Recompute,
}

impl Default for PlanConfig {
    fn default() -> PlanConfig {
        PlanConfig {
            dp: 1,
            tp: 1,
            pp: 1,
            cp: 1,
            ep: 1,
            zero_stage: 0,
            schedule: ScheduleKind::OneFOneB,
            virtual_stages: 1,
            micro_batch: 1,
            recompute: Recompute::None,
        }
    }
}

impl PlanConfig {
    fn to_raw(self) -> Result<sys::dt_plan_config> {
        let mut raw = MaybeUninit::<sys::dt_plan_config>::zeroed();
        // SAFETY: dt_plan_config_init fills every field of this version.
        check(unsafe { sys::dt_plan_config_init(raw.as_mut_ptr(), sys::DT_PLAN_CONFIG_VERSION) })?;
        // SAFETY: zeroed and then initialised by the library.
        let mut raw = unsafe { raw.assume_init() };
        raw.dp = self.dp;
        raw.tp = self.tp;
        raw.pp = self.pp;
        raw.cp = self.cp;
        raw.ep = self.ep;
        raw.zero_stage = self.zero_stage;
        raw.schedule = self.schedule.to_raw();
        raw.virtual_stages = self.virtual_stages;
        raw.micro_batch = self.micro_batch;
        raw.recompute = self.recompute.to_raw();
        Ok(raw)
    }

    fn from_raw(r: &sys::dt_plan_config) -> Result<PlanConfig> {
        Ok(PlanConfig {
            dp: r.dp,
            tp: r.tp,
            pp: r.pp,
            cp: r.cp,
            ep: r.ep,
            zero_stage: r.zero_stage,
            schedule: ScheduleKind::from_raw(r.schedule)?,
            virtual_stages: r.virtual_stages,
            micro_batch: r.micro_batch,
            recompute: Recompute::from_raw(r.recompute)?,
        })
    }
}

/// Bytes per GPU on the pipeline stage that needs most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PlanMemory {
    pub parameters: i64,
    pub gradients: i64,
    pub optimizer_state: i64,
    pub master_weights: i64,
    pub activations: i64,
    pub activations_without_recompute: i64,
    pub communication: i64,
    pub total: i64,
}

/// Seconds per step on the critical path.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PlanTime {
    pub compute: f64,
    pub recompute: f64,
    pub bubble: f64,
    pub tp: f64,
    pub cp: f64,
    pub ep: f64,
    pub pp: f64,
    pub dp: f64,
    pub optimizer: f64,
    pub step: f64,
}

/// A configuration's estimate (`dt_plan_estimate`).
#[derive(Debug, Clone, PartialEq)]
pub struct PlanEstimate {
    /// [`PlanReason::Accepted`], or why [`plan_evaluate`] rejected it.
    pub reason: PlanReason,
    /// The library's explanation of a rejection.
    pub rejection: Option<String>,
    pub config: PlanConfig,
    pub micro_batches: i64,
    pub memory: PlanMemory,
    pub time: PlanTime,
    pub model_flops: f64,
    pub hardware_flops: f64,
    pub mfu: f64,
    pub tflops_per_gpu: f64,
}

impl PlanEstimate {
    fn raw_out() -> sys::dt_plan_estimate {
        // SAFETY: every field is a number or a C enum whose zero value exists.
        let mut raw: sys::dt_plan_estimate = unsafe { std::mem::zeroed() };
        raw.version = sys::DT_PLAN_ESTIMATE_VERSION;
        raw
    }

    fn from_raw(e: &sys::dt_plan_estimate, rejection: Option<String>) -> Result<PlanEstimate> {
        Ok(PlanEstimate {
            reason: PlanReason::from_raw(e.reason)?,
            rejection,
            config: PlanConfig::from_raw(&e.config)?,
            micro_batches: e.micro_batches,
            memory: PlanMemory {
                parameters: e.mem_parameters,
                gradients: e.mem_gradients,
                optimizer_state: e.mem_optimizer_state,
                master_weights: e.mem_master_weights,
                activations: e.mem_activations,
                activations_without_recompute: e.mem_activations_without_recompute,
                communication: e.mem_communication,
                total: e.mem_total,
            },
            time: PlanTime {
                compute: e.time_compute,
                recompute: e.time_recompute,
                bubble: e.time_bubble,
                tp: e.time_tp,
                cp: e.time_cp,
                ep: e.time_ep,
                pp: e.time_pp,
                dp: e.time_dp,
                optimizer: e.time_optimizer,
                step: e.time_step,
            },
            model_flops: e.model_flops,
            hardware_flops: e.hardware_flops,
            mfu: e.mfu,
            tflops_per_gpu: e.tflops_per_gpu,
        })
    }
}

/// A search's totals (`dt_plan_summary`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PlanSummary {
    pub evaluated: i64,
    pub feasible: i64,
    pub kept: usize,
    pub seconds: f64,
}

/// The configurations rejected for one reason (`dt_plan_rejection`).
#[derive(Debug, Clone, PartialEq)]
pub struct PlanRejection {
    pub reason: PlanReason,
    pub count: i64,
    pub example: PlanConfig,
    pub message: String,
}

/// A finished search: the fastest configurations and the rejections.
pub struct Plan {
    handle: NonNull<sys::dt_plan>,
}

impl Plan {
    /// Searches every configuration `options` allows.
    pub fn new(model: &PlanModel, cluster: &PlanCluster, options: &PlanOptions) -> Result<Plan> {
        let (model, cluster, options) = (model.to_raw()?, cluster.to_raw(), options.to_raw()?);
        let mut handle = std::ptr::null_mut();
        // SAFETY: valid pointers to initialised structs; the handle comes back through `handle`.
        check(unsafe { sys::dt_plan_create(&mut handle, &model, &cluster, &options) })?;
        NonNull::new(handle)
            .map(|handle| Plan { handle })
            .ok_or_else(|| Error::new(Status::Internal, "dt_plan_create returned NULL"))
    }

    /// How many configurations were looked at, feasible and kept.
    pub fn summary(&self) -> Result<PlanSummary> {
        let mut raw = sys::dt_plan_summary {
            version: sys::DT_PLAN_SUMMARY_VERSION,
            evaluated: 0,
            feasible: 0,
            kept: 0,
            seconds: 0.0,
        };
        // SAFETY: a live handle and a valid out pointer with its version set.
        check(unsafe { sys::dt_plan_info(self.handle.as_ptr(), &mut raw) })?;
        Ok(PlanSummary {
            evaluated: raw.evaluated,
            feasible: raw.feasible,
            kept: raw.kept,
            seconds: raw.seconds,
        })
    }

    /// The estimate ranked `index` (0: the fastest).
    pub fn ranked(&self, index: usize) -> Result<PlanEstimate> {
        let mut raw = PlanEstimate::raw_out();
        // SAFETY: a live handle and a valid out pointer with its version set.
        check(unsafe { sys::dt_plan_ranked(self.handle.as_ptr(), index, &mut raw) })?;
        PlanEstimate::from_raw(&raw, None)
    }

    /// The configurations rejected for `reason`; `None` when there were none.
    pub fn rejection(&self, reason: PlanReason) -> Result<Option<PlanRejection>> {
        // SAFETY: every field is a number, a C enum with a zero value or a pointer.
        let mut raw: sys::dt_plan_rejection = unsafe { std::mem::zeroed() };
        raw.version = sys::DT_PLAN_REJECTION_VERSION;
        // SAFETY: a live handle and a valid out pointer with its version set.
        check(unsafe { sys::dt_plan_rejected(self.handle.as_ptr(), reason.to_raw(), &mut raw) })?;
        if raw.count == 0 {
            return Ok(None);
        }
        // SAFETY: the message is NUL-terminated text owned by the plan, copied at once.
        let message = unsafe { CStr::from_ptr(raw.message) }
            .to_string_lossy()
            .into_owned();
        Ok(Some(PlanRejection {
            reason,
            count: raw.count,
            example: PlanConfig::from_raw(&raw.example)?,
            message,
        }))
    }

    /// Writes the `top` fastest (0: all kept) to `path` ("-": standard output).
    pub fn write(&self, path: impl AsRef<Path>, format: PlanFormat, top: usize) -> Result<()> {
        let path = c_path(path.as_ref())?;
        let format = match format {
            PlanFormat::Table => sys::DT_PLAN_TABLE,
            PlanFormat::Json => sys::DT_PLAN_JSON,
            PlanFormat::Svg => sys::DT_PLAN_SVG,
        };
        // SAFETY: a live handle and a NUL-terminated path.
        check(unsafe { sys::dt_plan_write(self.handle.as_ptr(), path.as_ptr(), format, top) })
    }
}

impl std::fmt::Debug for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.summary() {
            Ok(s) => write!(
                f,
                "Plan {{ evaluated: {}, feasible: {}, kept: {} }}",
                s.evaluated, s.feasible, s.kept
            ),
            Err(_) => f.write_str("Plan"),
        }
    }
}

impl Drop for Plan {
    fn drop(&mut self) {
        // SAFETY: the handle is live and dropped once.
        unsafe { sys::dt_plan_destroy(self.handle.as_ptr()) };
    }
}

/// One configuration's estimate. A rejected configuration is not an error:
/// its `reason` and `rejection` say why, and for [`PlanReason::Memory`] the
/// rest holds what it would take. Errors are for bad arguments.
pub fn plan_evaluate(
    model: &PlanModel,
    cluster: &PlanCluster,
    options: &PlanOptions,
    config: &PlanConfig,
) -> Result<PlanEstimate> {
    let (m, c, o, g) = (
        model.to_raw()?,
        cluster.to_raw(),
        options.to_raw()?,
        config.to_raw()?,
    );
    let mut raw = PlanEstimate::raw_out();
    // SAFETY: valid pointers to initialised structs and an out pointer with its version set.
    let status = unsafe { sys::dt_plan_evaluate(&m, &c, &o, &g, &mut raw) };
    match check(status) {
        Ok(()) => PlanEstimate::from_raw(&raw, None),
        Err(error) if raw.reason != sys::DT_PLAN_ACCEPTED => {
            PlanEstimate::from_raw(&raw, Some(error.message))
        }
        Err(error) => Err(error),
    }
}

/// What a [`Zero`](crate::Zero) over units of `unit_elements` elements will
/// hold on `rank` of `ranks` right after creation, in `stage`, for
/// parameters of `dtype` and `optimizer`.
pub fn zero_memory(
    unit_elements: &[i64],
    stage: i32,
    ranks: i32,
    rank: i32,
    dtype: DataType,
    optimizer: &OptimizerOptions,
) -> Result<ZeroMemory> {
    let optim = optimizer.to_raw()?;
    let mut raw = ZeroMemory::raw();
    // SAFETY: the slice outlives the call; the other pointers are valid.
    check(unsafe {
        sys::dt_plan_zero_memory(
            unit_elements.as_ptr(),
            unit_elements.len(),
            stage,
            ranks,
            rank,
            dtype.to_dlpack(),
            &optim,
            &mut raw,
        )
    })?;
    Ok(ZeroMemory::from_raw(&raw))
}
