//! The pipeline executor (`dt_pipeline`): runs one rank's list of a
//! [`PipelineSchedule`], calling the trainer's closures and moving
//! activations and gradients between the ranks (see `dtrain/pipeline.h`).

use std::any::Any;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::os::raw::{c_int, c_void};
use std::panic::{self, AssertUnwindSafe};
use std::ptr::{self, NonNull};

use dtrain_sys as sys;

use crate::comm::Comm;
use crate::element::Element;
use crate::error::{check, Error, Result, Status};
use crate::pipeline::PipelineSchedule;

/// forward(chunk, microbatch, input, output) and backward(chunk, microbatch,
/// grad_output, grad_input): slices of the declared activation length, valid
/// during the call only; `None` at the ends of the model (see the header).
pub type StageFn<'f, T> =
    Box<dyn FnMut(i32, i32, Option<&[T]>, Option<&mut [T]>) -> Result<()> + 'f>;

/// The trainer's stage functions. An `Err` ends the step with its status; a
/// panic ends it too and is resumed from [`Pipeline::step`].
pub struct StageFunctions<'f, T> {
    pub forward: StageFn<'f, T>,
    /// Input and weight gradients, or the input gradient only for ZB_H1.
    pub backward: StageFn<'f, T>,
    /// ZB_H1's weight gradient of (chunk, microbatch); required there, refused otherwise.
    pub backward_weight: Option<Box<dyn FnMut(i32, i32) -> Result<()> + 'f>>,
    /// Called once per chunk and step once its weight gradients are complete.
    pub chunk_done: Option<Box<dyn FnMut(i32) -> Result<()> + 'f>>,
}

/// What one step measured on this rank (`dt_pipeline_step_info`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PipelineStepInfo {
    pub step_seconds: f64,
    /// Time blocked waiting for receives: this rank's idle time.
    pub recv_wait_seconds: f64,
    /// Time blocked in any wait, receives and sends.
    pub comm_wait_seconds: f64,
    /// `recv_wait_seconds / step_seconds`.
    pub bubble_fraction: f64,
    /// The most (chunk, micro-batch) pairs alive at once.
    pub peak_in_flight: i32,
}

struct State<'f, T> {
    functions: StageFunctions<'f, T>,
    elements: usize,
    panic: Option<Box<dyn Any + Send>>,
}

impl<T> State<'_, T> {
    /// Runs a closure without letting a panic unwind into C.
    fn run(
        &mut self,
        call: impl FnOnce(&mut StageFunctions<'_, T>) -> Result<()>,
    ) -> sys::dt_status {
        match panic::catch_unwind(AssertUnwindSafe(|| call(&mut self.functions))) {
            Ok(Ok(())) => sys::DT_OK,
            Ok(Err(error)) => error.status.to_raw(),
            Err(payload) => {
                self.panic = Some(payload);
                sys::DT_ERR_ABORTED
            }
        }
    }
}

/// A pipeline executor over the pipeline group's communicator. The closures
/// may borrow the trainer's state for `'f`.
pub struct Pipeline<'f, T: Element> {
    raw: NonNull<sys::dt_pipeline>,
    state: Box<State<'f, T>>,
    _closures: PhantomData<&'f mut ()>,
}

impl<'f, T: Element> Pipeline<'f, T> {
    /// Creates the executor of this rank of `comm` for `schedule`, with
    /// activations of `activation_elements` elements of `T`.
    /// [`Status::InvalidArgument`] naming the field for what the header refuses.
    pub fn new(
        comm: &Comm<'_>,
        schedule: &PipelineSchedule,
        activation_elements: usize,
        functions: StageFunctions<'f, T>,
    ) -> Result<Pipeline<'f, T>> {
        let elements = i64::try_from(activation_elements).map_err(|_| {
            Error::new(
                Status::InvalidArgument,
                "activation_elements does not fit an int64_t",
            )
        })?;
        let mut opts = MaybeUninit::<sys::dt_pipeline_options>::zeroed();
        // SAFETY: dt_pipeline_options_init fills every field of this version.
        check(unsafe {
            sys::dt_pipeline_options_init(opts.as_mut_ptr(), sys::DT_PIPELINE_OPTIONS_VERSION)
        })?;
        // SAFETY: zeroed and then initialised by the library.
        let mut opts = unsafe { opts.assume_init() };
        let mut state = Box::new(State {
            functions,
            elements: activation_elements,
            panic: None,
        });
        opts.activation_elements = elements;
        opts.activation_dtype = T::DATA_TYPE.to_dlpack();
        opts.forward = Some(forward_trampoline::<T>);
        opts.backward = Some(backward_trampoline::<T>);
        if state.functions.backward_weight.is_some() {
            opts.backward_weight = Some(backward_weight_trampoline::<T>);
        }
        if state.functions.chunk_done.is_some() {
            opts.chunk_done = Some(chunk_done_trampoline::<T>);
        }
        opts.user = &mut *state as *mut State<'f, T> as *mut c_void;
        let mut out = ptr::null_mut();
        // SAFETY: live handles; `state` stays at its address (boxed) for the executor's life.
        check(unsafe {
            sys::dt_pipeline_create(&mut out, comm.as_raw(), schedule.as_raw(), &opts)
        })?;
        let raw = NonNull::new(out).expect("dt_pipeline_create succeeded without an executor");
        Ok(Pipeline {
            raw,
            state,
            _closures: PhantomData,
        })
    }

    /// Runs one step. A closure's `Err` comes back with its status and the
    /// library's message naming the rank and action; a closure's panic is
    /// resumed here. After a failed step the communicator is broken.
    pub fn step(&mut self) -> Result<PipelineStepInfo> {
        let mut info = MaybeUninit::<sys::dt_pipeline_step_info>::zeroed();
        // SAFETY: only the version is read before the step writes the rest.
        unsafe { (*info.as_mut_ptr()).version = sys::DT_PIPELINE_STEP_INFO_VERSION };
        // SAFETY: a live handle; the callbacks reach `self.state`, borrowed mutably through `self`.
        let status = unsafe { sys::dt_pipeline_step(self.raw.as_ptr(), info.as_mut_ptr()) };
        if let Some(payload) = self.state.panic.take() {
            panic::resume_unwind(payload);
        }
        check(status)?;
        // SAFETY: written by the library on success.
        let info = unsafe { info.assume_init() };
        Ok(PipelineStepInfo {
            step_seconds: info.step_seconds,
            recv_wait_seconds: info.recv_wait_seconds,
            comm_wait_seconds: info.comm_wait_seconds,
            bubble_fraction: info.bubble_fraction,
            peak_in_flight: info.peak_in_flight,
        })
    }
}

impl<T: Element> Drop for Pipeline<'_, T> {
    fn drop(&mut self) {
        // SAFETY: a live handle owned by this value.
        unsafe { sys::dt_pipeline_destroy(self.raw.as_ptr()) };
    }
}

/// # Safety
/// `tensor` is NULL or one of the executor's activation tensors, of
/// `elements` elements of `T`.
unsafe fn read<'a, T>(tensor: *const sys::DLTensor, elements: usize) -> Option<&'a [T]> {
    tensor
        .as_ref()
        .map(|t| std::slice::from_raw_parts(t.data as *const T, elements))
}

/// # Safety
/// As [`read`].
unsafe fn write<'a, T>(tensor: *mut sys::DLTensor, elements: usize) -> Option<&'a mut [T]> {
    tensor
        .as_mut()
        .map(|t| std::slice::from_raw_parts_mut(t.data as *mut T, elements))
}

unsafe extern "C" fn forward_trampoline<T: Element>(
    user: *mut c_void,
    chunk: c_int,
    microbatch: c_int,
    input: *const sys::DLTensor,
    output: *mut sys::DLTensor,
) -> sys::dt_status {
    let state = &mut *(user as *mut State<'_, T>);
    let (input, output) = (
        read::<T>(input, state.elements),
        write::<T>(output, state.elements),
    );
    state.run(|f| (f.forward)(chunk, microbatch, input, output))
}

unsafe extern "C" fn backward_trampoline<T: Element>(
    user: *mut c_void,
    chunk: c_int,
    microbatch: c_int,
    grad_output: *const sys::DLTensor,
    grad_input: *mut sys::DLTensor,
) -> sys::dt_status {
    let state = &mut *(user as *mut State<'_, T>);
    let (grad_output, grad_input) = (
        read::<T>(grad_output, state.elements),
        write::<T>(grad_input, state.elements),
    );
    state.run(|f| (f.backward)(chunk, microbatch, grad_output, grad_input))
}

unsafe extern "C" fn backward_weight_trampoline<T: Element>(
    user: *mut c_void,
    chunk: c_int,
    microbatch: c_int,
) -> sys::dt_status {
    let state = &mut *(user as *mut State<'_, T>);
    state.run(|f| {
        f.backward_weight
            .as_mut()
            .map_or(Ok(()), |w| w(chunk, microbatch))
    })
}

unsafe extern "C" fn chunk_done_trampoline<T: Element>(
    user: *mut c_void,
    chunk: c_int,
) -> sys::dt_status {
    let state = &mut *(user as *mut State<'_, T>);
    state.run(|f| f.chunk_done.as_mut().map_or(Ok(()), |done| done(chunk)))
}
