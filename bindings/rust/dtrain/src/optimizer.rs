//! Optimizers: SGD and AdamW over slices the optimizer borrows.

use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};

use dtrain_sys as sys;

use crate::comm::Comm;
use crate::element::Element;
use crate::error::{check, Error, Result, Status};
use crate::tensor::RawTensor;

/// The update rule of an [`Optimizer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OptimizerKind {
    /// SGD with optional momentum, Nesterov momentum and L2 weight decay.
    Sgd,
    /// Adam with decoupled weight decay and bias correction.
    #[default]
    AdamW,
}

impl OptimizerKind {
    fn to_raw(self) -> sys::dt_optimizer_kind {
        match self {
            OptimizerKind::Sgd => sys::DT_OPTIM_SGD,
            OptimizerKind::AdamW => sys::DT_OPTIM_ADAMW,
        }
    }
}

/// Options of an [`Optimizer`], mirroring `dt_optimizer_options`. `None`
/// (and `false`) leave the library's default, documented in
/// `dtrain/optim.h`; `OptimizerOptions::default()` is AdamW with lr 1e-3.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OptimizerOptions {
    pub kind: OptimizerKind,
    pub lr: Option<f32>,
    /// SGD: L2, added to the gradient; AdamW: decoupled.
    pub weight_decay: Option<f32>,
    /// SGD only.
    pub momentum: Option<f32>,
    /// SGD only.
    pub dampening: Option<f32>,
    /// SGD only; needs a momentum and no dampening.
    pub nesterov: bool,
    /// AdamW's (beta1, beta2).
    pub betas: Option<(f32, f32)>,
    /// AdamW only.
    pub eps: Option<f32>,
    /// Clip the global gradient norm to this.
    pub max_grad_norm: Option<f32>,
    /// The factor the gradients arrive multiplied by.
    pub loss_scale: Option<f32>,
    /// Lower the loss scale on inf/NaN gradients, raise it after
    /// `growth_interval` clean steps.
    pub dynamic_loss_scale: bool,
    pub growth_factor: Option<f32>,
    pub backoff_factor: Option<f32>,
    pub growth_interval: Option<i32>,
}

impl OptimizerOptions {
    pub(crate) fn to_raw(&self) -> Result<sys::dt_optimizer_options> {
        let mut raw = MaybeUninit::<sys::dt_optimizer_options>::zeroed();
        // SAFETY: dt_optimizer_options_init fills every field of this version.
        check(unsafe {
            sys::dt_optimizer_options_init(raw.as_mut_ptr(), sys::DT_OPTIMIZER_OPTIONS_VERSION)
        })?;
        // SAFETY: zeroed and then initialised by the library.
        let mut raw = unsafe { raw.assume_init() };
        raw.kind = self.kind.to_raw();
        let set = |field: &mut f32, value: Option<f32>| {
            if let Some(value) = value {
                *field = value;
            }
        };
        set(&mut raw.lr, self.lr);
        set(&mut raw.weight_decay, self.weight_decay);
        set(&mut raw.momentum, self.momentum);
        set(&mut raw.dampening, self.dampening);
        set(&mut raw.beta1, self.betas.map(|b| b.0));
        set(&mut raw.beta2, self.betas.map(|b| b.1));
        set(&mut raw.eps, self.eps);
        set(&mut raw.max_grad_norm, self.max_grad_norm);
        set(&mut raw.loss_scale, self.loss_scale);
        set(&mut raw.growth_factor, self.growth_factor);
        set(&mut raw.backoff_factor, self.backoff_factor);
        raw.nesterov = self.nesterov.into();
        raw.dynamic_loss_scale = self.dynamic_loss_scale.into();
        raw.growth_interval = self.growth_interval.unwrap_or(sys::DT_UNDEF);
        Ok(raw)
    }
}

/// What one [`Optimizer::step`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepInfo {
    /// A gradient held inf or NaN: nothing was updated.
    pub skipped: bool,
    /// The global L2 norm of the unscaled gradients, before clipping.
    pub grad_norm: f64,
    /// Steps applied so far; skipped ones do not count.
    pub step: i64,
    /// What to multiply the next loss by.
    pub loss_scale: f32,
}

impl StepInfo {
    /// A `dt_optimizer_step_info` of the version this binding reads, for a step to fill.
    pub(crate) fn raw_out() -> sys::dt_optimizer_step_info {
        sys::dt_optimizer_step_info {
            version: sys::DT_OPTIMIZER_STEP_INFO_VERSION,
            skipped: 0,
            grad_norm: 0.0,
            step: 0,
            loss_scale: 0.0,
        }
    }

    pub(crate) fn from_raw(info: &sys::dt_optimizer_step_info) -> StepInfo {
        StepInfo {
            skipped: info.skipped != 0,
            grad_norm: info.grad_norm,
            step: info.step,
            loss_scale: info.loss_scale,
        }
    }
}

/// A slice an [`Optimizer`] or a [`Ddp`](crate::Ddp) borrows mutably for its
/// whole life, kept as a raw pointer: libdtrain writes through it inside the
/// owner's `&mut self` calls (an optimizer's steps, a DDP's averages in
/// `wait`), so no reference may be held across one. Public but unnameable
/// outside the crate: it is what [`GradientSource`](crate::GradientSource)
/// names as the host gradients' type.
pub struct Borrowed<T> {
    pub(crate) data: *mut T,
    pub(crate) len: usize,
}

impl<T> Borrowed<T> {
    pub(crate) fn of(slice: &mut [T]) -> Borrowed<T> {
        Borrowed {
            data: slice.as_mut_ptr(),
            len: slice.len(),
        }
    }

    /// The slice again.
    ///
    /// # Safety
    ///
    /// It is still borrowed (the owner's lifetime has not ended), and the
    /// library cannot write it while the result lives.
    pub(crate) unsafe fn slice(&self) -> &[T] {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }

    /// The slice again, to write.
    ///
    /// # Safety
    ///
    /// As for [`slice`](Borrowed::slice), and no other reference to it lives.
    pub(crate) unsafe fn slice_mut(&mut self) -> &mut [T] {
        // SAFETY: the caller's promise.
        unsafe { std::slice::from_raw_parts_mut(self.data, self.len) }
    }
}

/// An optimizer over parameter and gradient slices it borrows mutably for its
/// whole life: libdtrain updates the parameters in place and may rewrite the
/// gradients (unscaled, clipped) on every [`step`](Optimizer::step). Between
/// steps the trainer reaches them through [`grad_mut`](Optimizer::grad_mut)
/// (to store new gradients) and [`param`](Optimizer::param).
///
/// Element types are `f32`, [`F16`](crate::F16) and [`Bf16`](crate::Bf16)
/// (others are refused with [`Status::InvalidArgument`]); 16-bit parameters
/// get `f32` master weights inside the library, so a parameter is only ever
/// changed by a step. Dropping the optimizer destroys it and ends the borrows.
///
/// ```
/// use dtrain::{Optimizer, OptimizerKind, OptimizerOptions};
///
/// # fn main() -> Result<(), dtrain::Error> {
/// let mut weights = vec![1.0f32; 4];
/// let mut grads = vec![0.0f32; 4];
/// let options = OptimizerOptions { kind: OptimizerKind::Sgd, lr: Some(0.5), ..Default::default() };
/// let mut opt = Optimizer::new(vec![&mut weights[..]], vec![&mut grads[..]], &options)?;
/// opt.grad_mut(0).fill(1.0);
/// opt.step()?;
/// assert_eq!(opt.param(0), &[0.5; 4]);
/// # Ok(()) }
/// ```
pub struct Optimizer<'a, T: Element> {
    raw: NonNull<sys::dt_optimizer>,
    params: Vec<Borrowed<T>>,
    grads: Vec<Borrowed<T>>,
    _borrows: PhantomData<&'a mut [T]>,
}

impl<'a, T: Element> Optimizer<'a, T> {
    /// Creates an optimizer over `params[i]` and `grads[i]` (same lengths,
    /// pairwise). Invalid options or slices give an error and change nothing.
    pub fn new(
        params: Vec<&'a mut [T]>,
        grads: Vec<&'a mut [T]>,
        options: &OptimizerOptions,
    ) -> Result<Optimizer<'a, T>> {
        Optimizer::create(params, grads, options, ptr::null_mut())
    }

    /// Like [`new`](Optimizer::new), for slices that are this rank's shard of
    /// a model sharded over `comm`: every step sums the squared gradient norm
    /// over its ranks, so all ranks must step together.
    pub fn sharded(
        params: Vec<&'a mut [T]>,
        grads: Vec<&'a mut [T]>,
        options: &OptimizerOptions,
        comm: &'a Comm<'_>,
    ) -> Result<Optimizer<'a, T>> {
        Optimizer::create(params, grads, options, comm.as_raw())
    }

    fn create(
        params: Vec<&'a mut [T]>,
        grads: Vec<&'a mut [T]>,
        options: &OptimizerOptions,
        comm: *mut sys::dt_comm,
    ) -> Result<Optimizer<'a, T>> {
        if params.len() != grads.len() {
            return Err(Error::new(
                Status::InvalidArgument,
                format!(
                    "grads: {} gradients for {} parameters",
                    grads.len(),
                    params.len()
                ),
            ));
        }
        let mut raw_options = options.to_raw()?;
        raw_options.comm = comm;
        let params: Vec<Borrowed<T>> = params.into_iter().map(Borrowed::of).collect();
        let grads: Vec<Borrowed<T>> = grads.into_iter().map(Borrowed::of).collect();
        let described: Vec<RawTensor> = params
            .iter()
            .chain(grads.iter())
            .map(|b| RawTensor::from_raw_parts::<T>(b.data, b.len))
            .collect();
        let mut tensors: Vec<sys::DLTensor> = described.iter().map(RawTensor::descriptor).collect();
        let (param_tensors, grad_tensors) = tensors.split_at_mut(params.len());
        let mut out = ptr::null_mut();
        // SAFETY: the descriptors (and the shapes in `described`) live through
        // the call; the memory they describe is borrowed for 'a, which the
        // optimizer outlives only by being dropped first.
        check(unsafe {
            sys::dt_optimizer_create(
                &mut out,
                param_tensors.as_mut_ptr(),
                grad_tensors.as_mut_ptr(),
                params.len(),
                &raw_options,
            )
        })?;
        let raw = NonNull::new(out).expect("dt_optimizer_create succeeded without an optimizer");
        Ok(Optimizer {
            raw,
            params,
            grads,
            _borrows: PhantomData,
        })
    }

    /// The raw handle, still owned by this `Optimizer`.
    pub fn as_raw(&self) -> *mut sys::dt_optimizer {
        self.raw.as_ptr()
    }

    /// Takes one step: skipped (changing nothing) when a gradient holds inf
    /// or NaN, otherwise unscale, clip and update.
    pub fn step(&mut self) -> Result<StepInfo> {
        let mut info = StepInfo::raw_out();
        // SAFETY: a live handle; `&mut self` means no slice is borrowed out.
        check(unsafe { sys::dt_optimizer_step(self.as_raw(), &mut info) })?;
        Ok(StepInfo::from_raw(&info))
    }

    /// Sets every gradient to zero.
    pub fn zero_grad(&mut self) -> Result<()> {
        // SAFETY: a live handle; `&mut self` means no slice is borrowed out.
        check(unsafe { sys::dt_optimizer_zero_grad(self.as_raw()) })
    }

    /// Sets the learning rate of the next steps (finite, >= 0).
    pub fn set_lr(&mut self, lr: f32) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::dt_optimizer_set_lr(self.as_raw(), lr) })
    }

    /// The current learning rate.
    pub fn lr(&self) -> Result<f32> {
        let mut lr = 0.0f32;
        // SAFETY: a live handle and a valid out pointer.
        check(unsafe { sys::dt_optimizer_lr(self.as_raw(), &mut lr) })?;
        Ok(lr)
    }

    /// What to multiply the next loss by (1 without loss scaling).
    pub fn loss_scale(&self) -> Result<f32> {
        let mut scale = 0.0f32;
        // SAFETY: a live handle and a valid out pointer.
        check(unsafe { sys::dt_optimizer_loss_scale(self.as_raw(), &mut scale) })?;
        Ok(scale)
    }

    /// The number of parameter slices.
    pub fn len(&self) -> usize {
        self.params.len()
    }

    /// Whether there are no parameter slices (never: creation refuses that).
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// Parameter slice `i`. Panics when `i` is out of range.
    pub fn param(&self, i: usize) -> &[T] {
        // SAFETY: borrowed mutably for 'a; the library writes only inside
        // calls that take `&mut self`, so it cannot while this borrow lives.
        unsafe { self.params[i].slice() }
    }

    /// Gradient slice `i`. Panics when `i` is out of range.
    pub fn grad(&self, i: usize) -> &[T] {
        // SAFETY: as for `param`.
        unsafe { self.grads[i].slice() }
    }

    /// Gradient slice `i`, to store the next gradients. Panics when `i` is out
    /// of range.
    pub fn grad_mut(&mut self, i: usize) -> &mut [T] {
        // SAFETY: as for `param`, and `&mut self` makes this the only borrow.
        unsafe { self.grads[i].slice_mut() }
    }

    /// The gradients' memory, for a [`Ddp`](crate::Ddp) that borrows this
    /// optimizer mutably (so that the two never touch it at once).
    pub(crate) fn grad_parts(&mut self) -> impl Iterator<Item = (*mut T, usize)> + '_ {
        self.grads.iter().map(|b| (b.data, b.len))
    }
}

impl<T: Element> fmt::Debug for Optimizer<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Optimizer")
            .field("raw", &self.raw)
            .field("tensors", &self.params.len())
            .finish()
    }
}

impl<T: Element> Drop for Optimizer<'_, T> {
    fn drop(&mut self) {
        // SAFETY: a live handle owned by this value. Destroying only frees
        // memory, so there is no failure to report.
        unsafe { sys::dt_optimizer_destroy(self.as_raw()) };
    }
}
