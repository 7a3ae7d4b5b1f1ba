//! Pipeline schedules as data: every rank's forwards, backwards, sends and
//! receives in one training step, in order (see `dtrain/pipeline.h`).

use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};

use dtrain_sys as sys;

use crate::error::{check, Error, Result, Status};

/// The algorithm of a [`PipelineSchedule`] (`dt_pipeline_schedule_kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ScheduleKind {
    /// Every forward, then every backward.
    GPipe,
    /// Warm-up forwards, then one forward and one backward at a time.
    #[default]
    OneFOneB,
    /// 1F1B over several model chunks per rank (Megatron's interleaving).
    Interleaved1F1B,
    /// Zero-bubble H1: backward split into input and weight gradients, the
    /// weight gradients filling the bubble.
    ZbH1,
}

impl ScheduleKind {
    pub(crate) fn to_raw(self) -> sys::dt_pipeline_schedule_kind {
        match self {
            ScheduleKind::GPipe => sys::DT_PIPELINE_GPIPE,
            ScheduleKind::OneFOneB => sys::DT_PIPELINE_1F1B,
            ScheduleKind::Interleaved1F1B => sys::DT_PIPELINE_INTERLEAVED_1F1B,
            ScheduleKind::ZbH1 => sys::DT_PIPELINE_ZB_H1,
        }
    }

    pub(crate) fn from_raw(raw: sys::dt_pipeline_schedule_kind) -> Result<ScheduleKind> {
        match raw {
            sys::DT_PIPELINE_GPIPE => Ok(ScheduleKind::GPipe),
            sys::DT_PIPELINE_1F1B => Ok(ScheduleKind::OneFOneB),
            sys::DT_PIPELINE_INTERLEAVED_1F1B => Ok(ScheduleKind::Interleaved1F1B),
            sys::DT_PIPELINE_ZB_H1 => Ok(ScheduleKind::ZbH1),
            other => Err(Error::new(
                Status::Internal,
                format!("unknown schedule kind {other}"),
            )),
        }
    }
}

/// What one step of a rank's list does (`dt_pipeline_action_kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActionKind {
    Forward,
    /// Input and weight gradients together.
    Backward,
    /// The input gradient only (zero-bubble schedules).
    BackwardInput,
    /// The weight gradient only (zero-bubble schedules).
    BackwardWeight,
    SendActivation,
    RecvActivation,
    SendGrad,
    RecvGrad,
}

impl ActionKind {
    fn from_raw(raw: sys::dt_pipeline_action_kind) -> Result<ActionKind> {
        match raw {
            sys::DT_PIPELINE_FORWARD => Ok(ActionKind::Forward),
            sys::DT_PIPELINE_BACKWARD => Ok(ActionKind::Backward),
            sys::DT_PIPELINE_BACKWARD_INPUT => Ok(ActionKind::BackwardInput),
            sys::DT_PIPELINE_BACKWARD_WEIGHT => Ok(ActionKind::BackwardWeight),
            sys::DT_PIPELINE_SEND_ACTIVATION => Ok(ActionKind::SendActivation),
            sys::DT_PIPELINE_RECV_ACTIVATION => Ok(ActionKind::RecvActivation),
            sys::DT_PIPELINE_SEND_GRAD => Ok(ActionKind::SendGrad),
            sys::DT_PIPELINE_RECV_GRAD => Ok(ActionKind::RecvGrad),
            other => Err(Error::new(
                Status::Internal,
                format!("dt_pipeline_schedule_action returned the unknown kind {other}"),
            )),
        }
    }
}

/// One step of a rank's list (`dt_pipeline_action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PipelineAction {
    pub kind: ActionKind,
    /// The rank's model chunk: global stage `chunk * stages + rank`.
    pub chunk: i32,
    pub microbatch: i32,
    /// The rank a send goes to or a receive comes from; `None` for compute.
    pub peer: Option<i32>,
}

/// Options of a [`PipelineSchedule`], mirroring `dt_pipeline_schedule_options`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PipelineScheduleOptions {
    pub kind: ScheduleKind,
    /// Ranks in the pipeline group, >= 1.
    pub stages: i32,
    /// Micro-batches of a step, >= 1.
    pub microbatches: i32,
    /// Model chunks per rank; `None`: 2 for interleaved 1F1B, 1 otherwise.
    pub chunks: Option<i32>,
}

impl PipelineScheduleOptions {
    fn to_raw(self) -> Result<sys::dt_pipeline_schedule_options> {
        let mut raw = MaybeUninit::<sys::dt_pipeline_schedule_options>::zeroed();
        // SAFETY: dt_pipeline_schedule_options_init fills every field of this version.
        check(unsafe {
            sys::dt_pipeline_schedule_options_init(
                raw.as_mut_ptr(),
                sys::DT_PIPELINE_SCHEDULE_OPTIONS_VERSION,
            )
        })?;
        // SAFETY: zeroed and then initialised by the library.
        let mut raw = unsafe { raw.assume_init() };
        raw.kind = self.kind.to_raw();
        raw.stages = self.stages;
        raw.microbatches = self.microbatches;
        if let Some(chunks) = self.chunks {
            raw.chunks = chunks;
        }
        Ok(raw)
    }
}

/// Every rank's actions in one training step of a pipeline: plain data,
/// built without a communicator.
///
/// ```
/// use dtrain::{ActionKind, PipelineSchedule, PipelineScheduleOptions, ScheduleKind};
///
/// # fn main() -> Result<(), dtrain::Error> {
/// let options = PipelineScheduleOptions {
///     kind: ScheduleKind::OneFOneB,
///     stages: 4,
///     microbatches: 8,
///     chunks: None,
/// };
/// let schedule = PipelineSchedule::new(&options)?;
/// for action in schedule.actions(0)? {
///     if action.kind == ActionKind::Forward {
///         // run chunk action.chunk on micro-batch action.microbatch
///     }
/// }
/// assert_eq!(schedule.peak_in_flight(0)?, 4);
/// # Ok(()) }
/// ```
pub struct PipelineSchedule {
    raw: NonNull<sys::dt_pipeline_schedule>,
}

// SAFETY: a schedule is immutable once built; the library lets any number
// of threads read one.
unsafe impl Send for PipelineSchedule {}
unsafe impl Sync for PipelineSchedule {}

impl PipelineSchedule {
    /// Builds the schedule `options` describe; [`Status::InvalidArgument`]
    /// naming the field for bad options.
    pub fn new(options: &PipelineScheduleOptions) -> Result<PipelineSchedule> {
        let raw_options = options.to_raw()?;
        let mut out = ptr::null_mut();
        // SAFETY: the options live through the call, which only reads them.
        check(unsafe { sys::dt_pipeline_schedule_create(&mut out, &raw_options) })?;
        let raw =
            NonNull::new(out).expect("dt_pipeline_schedule_create succeeded without a schedule");
        Ok(PipelineSchedule { raw })
    }

    pub(crate) fn as_raw(&self) -> *const sys::dt_pipeline_schedule {
        self.raw.as_ptr()
    }

    /// The number of actions of `rank`.
    pub fn len(&self, rank: i32) -> Result<usize> {
        let mut out = 0usize;
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dt_pipeline_schedule_length(self.raw.as_ptr(), rank, &mut out) })?;
        Ok(out)
    }

    /// Action `index` of `rank`.
    pub fn action(&self, rank: i32, index: usize) -> Result<PipelineAction> {
        let mut out = MaybeUninit::<sys::dt_pipeline_action>::zeroed();
        // SAFETY: a live handle and a valid output.
        check(unsafe {
            sys::dt_pipeline_schedule_action(self.raw.as_ptr(), rank, index, out.as_mut_ptr())
        })?;
        // SAFETY: filled by the library on success.
        let raw = unsafe { out.assume_init() };
        Ok(PipelineAction {
            kind: ActionKind::from_raw(raw.kind)?,
            chunk: raw.chunk,
            microbatch: raw.microbatch,
            peer: (raw.peer >= 0).then_some(raw.peer),
        })
    }

    /// Every action of `rank`, in the order the rank runs them.
    pub fn actions(&self, rank: i32) -> Result<Vec<PipelineAction>> {
        (0..self.len(rank)?).map(|i| self.action(rank, i)).collect()
    }

    /// The share of a step each rank idles, from the kind's closed form.
    pub fn bubble_fraction(&self) -> Result<f64> {
        let mut out = 0.0f64;
        // SAFETY: a live handle and a valid output.
        check(unsafe { sys::dt_pipeline_schedule_bubble_fraction(self.raw.as_ptr(), &mut out) })?;
        Ok(out)
    }

    /// The most (chunk, micro-batch) pairs whose activations `rank` keeps at once.
    pub fn peak_in_flight(&self, rank: i32) -> Result<i32> {
        let mut out = 0i32;
        // SAFETY: a live handle and a valid output.
        check(unsafe {
            sys::dt_pipeline_schedule_peak_in_flight(self.raw.as_ptr(), rank, &mut out)
        })?;
        Ok(out)
    }
}

impl Drop for PipelineSchedule {
    fn drop(&mut self) {
        // SAFETY: a live handle owned by this value.
        unsafe { sys::dt_pipeline_schedule_destroy(self.raw.as_ptr()) };
    }
}
