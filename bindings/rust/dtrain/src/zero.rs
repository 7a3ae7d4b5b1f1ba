//! ZeRO stages 0–3 (stage 3 is FSDP): parameters, gradients and optimizer
//! state sharded over the ranks of a communicator.

use std::ffi::CString;
use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::path::Path;
use std::ptr::{self, NonNull};

use dtrain_sys as sys;

use crate::comm::Comm;
use crate::ddp::with_sync_off;
use crate::element::Element;
use crate::error::{check, Error, Result, Status};
use crate::optimizer::{OptimizerOptions, StepInfo};
use crate::tensor::RawTensor;

/// Options of a [`Zero`], mirroring `dt_zero_options`. Every rank must pass
/// the same. `ZeroOptions::default()` is the library's default: stage 1,
/// units of 25 MiB, one stage 3 unit per parameter, prefetch on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZeroOptions {
    /// 0, 1, 2 or 3: what is sharded (see [`Zero`]).
    pub stage: i32,
    /// Stages 0–2 without `unit_sizes`: the size of a unit (a bucket of
    /// gradients), >= 1.
    pub bucket_bytes: Option<i64>,
    /// Unit `u` holds the next `unit_sizes[u]` parameters (one unit per
    /// layer, say); they add up to the number of parameters. `None`: one
    /// unit per parameter in stage 3, buckets of `bucket_bytes` in stages 0–2.
    pub unit_sizes: Option<Vec<usize>>,
    /// Stage 3: each gather also starts the next unit's.
    pub prefetch: bool,
    /// Parameters (from 0) this rank leaves out of the gradient norm because
    /// a rank of the model communicator counts the same gradient (see
    /// [`Zero::with_model_comm`]); empty: none.
    pub norm_excluded: Vec<usize>,
}

impl Default for ZeroOptions {
    fn default() -> ZeroOptions {
        ZeroOptions {
            stage: 1,
            bucket_bytes: None,
            unit_sizes: None,
            prefetch: true,
            norm_excluded: Vec::new(),
        }
    }
}

impl ZeroOptions {
    /// The C options; their `unit_sizes` and `norm_excluded` point into
    /// `self`, which must outlive their use.
    fn to_raw(&self) -> Result<sys::dt_zero_options> {
        let mut raw = MaybeUninit::<sys::dt_zero_options>::zeroed();
        // SAFETY: dt_zero_options_init fills every field of this version.
        check(unsafe {
            sys::dt_zero_options_init(raw.as_mut_ptr(), sys::DT_ZERO_OPTIONS_VERSION)
        })?;
        // SAFETY: zeroed and then initialised by the library.
        let mut raw = unsafe { raw.assume_init() };
        raw.stage = self.stage;
        if let Some(bytes) = self.bucket_bytes {
            raw.bucket_bytes = bytes;
        }
        if let Some(sizes) = &self.unit_sizes {
            raw.unit_sizes = sizes.as_ptr();
            raw.unit_count = sizes.len();
        }
        raw.prefetch = self.prefetch.into();
        if !self.norm_excluded.is_empty() {
            raw.norm_excluded = self.norm_excluded.as_ptr();
            raw.norm_excluded_count = self.norm_excluded.len();
        }
        Ok(raw)
    }
}

/// The bytes one rank of a [`Zero`] holds, by purpose (`dt_zero_memory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ZeroMemory {
    /// Full parameters (stages 0–2), or shards plus gathered units (stage 3).
    pub parameters: i64,
    /// Full gradients (stages 0–1), or the gradient shard (stages 2–3).
    pub gradients: i64,
    /// `f32` momentum / moments of the elements this rank updates.
    pub optimizer_state: i64,
    /// `f32` copies of the 16-bit parameters this rank updates.
    pub master_weights: i64,
    /// Unit gradient buffers of stages 2–3 and scratch space.
    pub communication: i64,
    /// Elements added to make units divisible by the number of ranks,
    /// already counted in the figures above.
    pub padding: i64,
    /// The largest [`total`](ZeroMemory::total) since creation.
    pub peak: i64,
}

impl ZeroMemory {
    /// A `dt_zero_memory` for the library to fill: its version set, the
    /// figures zero.
    pub(crate) fn raw() -> sys::dt_zero_memory {
        sys::dt_zero_memory {
            version: sys::DT_ZERO_MEMORY_VERSION,
            parameters: 0,
            gradients: 0,
            optimizer_state: 0,
            master_weights: 0,
            communication: 0,
            padding: 0,
            peak: 0,
        }
    }

    /// The figures of a `dt_zero_memory` the library filled.
    pub(crate) fn from_raw(raw: &sys::dt_zero_memory) -> ZeroMemory {
        ZeroMemory {
            parameters: raw.parameters,
            gradients: raw.gradients,
            optimizer_state: raw.optimizer_state,
            master_weights: raw.master_weights,
            communication: raw.communication,
            padding: raw.padding,
            peak: raw.peak,
        }
    }

    /// What the rank holds now: the sum of the five purposes.
    pub fn total(&self) -> i64 {
        self.parameters
            + self.gradients
            + self.optimizer_state
            + self.master_weights
            + self.communication
    }
}

/// A model trained with ZeRO over the ranks of a communicator: the `Zero`
/// owns the parameters and gradients, and shards by `stage` (Ψ parameters,
/// N ranks):
///
/// - stage 0: every rank keeps everything (DDP plus an optimizer);
/// - stage 1: full parameters and gradients, 1/N of the optimizer state;
/// - stage 2: full parameters, 1/N of the gradients and optimizer state;
/// - stage 3 (FSDP): 1/N of everything; a unit's full parameters exist only
///   between [`gather`](Zero::gather) and [`release`](Zero::release).
///
/// Parameters are grouped into units, contiguous runs in registration
/// (forward) order. A step, the same on every stage (in stages 0–2 gathers
/// and releases return at once):
///
/// ```
/// use dtrain::{Comm, OptimizerKind, OptimizerOptions, Zero, ZeroOptions};
///
/// # fn main() -> Result<(), dtrain::Error> {
/// let comm = Comm::new()?; // a world of one without launcher variables
/// let (w, b) = (vec![1.0f32; 6], vec![0.0f32; 2]);
/// let sgd = OptimizerOptions { kind: OptimizerKind::Sgd, lr: Some(0.5), ..Default::default() };
/// let stage3 = ZeroOptions { stage: 3, unit_sizes: Some(vec![2]), ..Default::default() };
/// let mut zero = Zero::new(&comm, &[&w[..], &b[..]], &sgd, &stage3)?;
/// let units = zero.unit_count()?;
/// for u in 0..units {
///     // forward: read the unit's parameters while it is gathered
///     zero.with_unit(u, |z| z.parameter(0).map(|w| w.iter().sum::<f32>()))??;
/// }
/// for u in (0..units).rev() {
///     // backward: add into each gradient, then mark it final
///     zero.with_unit(u, |z| -> Result<(), dtrain::Error> {
///         for i in [1, 0] {
///             z.gradient(i)?.fill(1.0);
///             z.mark_ready(i)?;
///         }
///         Ok(())
///     })??;
/// }
/// zero.wait(-1)?;
/// zero.step()?;
/// zero.with_unit(0, |z| assert_eq!(z.parameter(0).unwrap(), &[0.5; 6]))?;
/// # Ok(()) }
/// ```
///
/// The slices [`parameter`](Zero::parameter) and [`gradient`](Zero::gradient)
/// lend are the `Zero`'s own memory, borrowed from it: every call that may
/// free or rewrite that memory (mark, wait, step, gather, release, load)
/// takes `&mut self`, so none can run while a slice is alive. Use
/// [`parameters_and_gradients`](Zero::parameters_and_gradients) to read
/// parameters while writing gradients.
///
/// Element types are `f32`, [`F16`](crate::F16) and [`Bf16`](crate::Bf16).
/// Creation, [`wait`](Zero::wait), [`step`](Zero::step),
/// [`save`](Zero::save), [`load`](Zero::load) and gathers are collective:
/// every rank calls them in the same order, with the same shapes and options
/// (or every rank gets [`Status::Mismatch`]). The `Zero` borrows its
/// communicator; dropping it (which waits for communication in flight) ends
/// the borrow.
pub struct Zero<'a, T: Element> {
    raw: NonNull<sys::dt_zero>,
    len: usize,
    sync: bool,
    _comm: PhantomData<&'a ()>,
    _element: PhantomData<T>,
}

impl<'a, T: Element> Zero<'a, T> {
    /// Creates a `Zero` over parameters with the lengths and initial values
    /// of `params` (read here only; rank 0's values become every rank's),
    /// trained by the optimizer `optimizer` describes. Collective over
    /// `comm`. Invalid options or slices give an error on this rank and
    /// [`Status::Mismatch`] (or [`Status::InvalidArgument`]) on the others.
    pub fn new(
        comm: &'a Comm<'_>,
        params: &[&[T]],
        optimizer: &OptimizerOptions,
        options: &ZeroOptions,
    ) -> Result<Zero<'a, T>> {
        Zero::create(comm, ptr::null_mut(), params, optimizer, options)
    }

    /// Like [`Zero::new`], for one part of a model split by tensor or
    /// pipeline parallelism: `comm` holds the replicas of this part, `model`
    /// the ranks holding the other parts (the mesh's tp × pp group). `step`
    /// clips by the whole model's gradient norm, summed over both (an
    /// allreduce on `model`, so its ranks step together), leaving out the
    /// parameters in `options.norm_excluded` (dtrain/zero.h, "With tensor or
    /// pipeline parallelism").
    pub fn with_model_comm(
        comm: &'a Comm<'_>,
        model: &'a Comm<'_>,
        params: &[&[T]],
        optimizer: &OptimizerOptions,
        options: &ZeroOptions,
    ) -> Result<Zero<'a, T>> {
        Zero::create(comm, model.as_raw(), params, optimizer, options)
    }

    fn create(
        comm: &'a Comm<'_>,
        model: *mut sys::dt_comm,
        params: &[&[T]],
        optimizer: &OptimizerOptions,
        options: &ZeroOptions,
    ) -> Result<Zero<'a, T>> {
        let mut raw_optimizer = optimizer.to_raw()?;
        raw_optimizer.comm = model;
        let raw_options = options.to_raw()?;
        let described: Vec<RawTensor> = params.iter().map(|p| RawTensor::of(p)).collect();
        let pointers: Vec<*const sys::DLTensor> = described.iter().map(RawTensor::as_ptr).collect();
        let mut out = ptr::null_mut();
        // SAFETY: the descriptors (and their shapes), the slices they
        // describe and the arrays in `options` live through the call, which
        // only reads them; `model` is null or a live communicator.
        check(unsafe {
            sys::dt_zero_create(
                &mut out,
                comm.as_raw(),
                pointers.as_ptr(),
                pointers.len(),
                &raw_optimizer,
                &raw_options,
            )
        })?;
        let raw = NonNull::new(out).expect("dt_zero_create succeeded without a Zero");
        Ok(Zero {
            raw,
            len: params.len(),
            sync: true,
            _comm: PhantomData,
            _element: PhantomData,
        })
    }

    /// The raw handle, still owned by this `Zero`.
    pub fn as_raw(&self) -> *mut sys::dt_zero {
        self.raw.as_ptr()
    }

    /// The number of parameters.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no parameters (never: creation refuses that).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Parameter `index`'s full values. In stage 3 its unit must be gathered
    /// and waited for ([`Status::InvalidUsage`] otherwise).
    pub fn parameter(&self, index: usize) -> Result<&[T]> {
        let (data, len) = self.parameter_parts(index)?;
        // SAFETY: memory the library owns and keeps until the unit is
        // released, a step or load rewrites it, or the Zero is dropped; all
        // of these take `&mut self`, which this borrow excludes.
        Ok(unsafe { std::slice::from_raw_parts(data, len) })
    }

    /// The buffer parameter `index`'s gradient is added into in this
    /// micro-step: zeros at the start of a step (stages 0–1) or micro-step
    /// (stages 2–3). Add to it, then [`mark_ready`](Zero::mark_ready);
    /// [`Status::InvalidUsage`] once marked.
    pub fn gradient(&mut self, index: usize) -> Result<&mut [T]> {
        let (data, len) = self.gradient_parts(index)?;
        // SAFETY: as for `parameter`; the buffer is freed (stages 2–3) only
        // once its unit's reduction starts, in a call taking `&mut self`, and
        // `&mut self` makes this the only borrow.
        Ok(unsafe { std::slice::from_raw_parts_mut(data, len) })
    }

    /// Parameters `params` to read and gradients `grads` to write at once,
    /// as backward needs them. [`Status::InvalidArgument`] when an index
    /// appears twice in `grads`.
    #[allow(clippy::type_complexity)]
    pub fn parameters_and_gradients(
        &mut self,
        params: &[usize],
        grads: &[usize],
    ) -> Result<(Vec<&[T]>, Vec<&mut [T]>)> {
        for (k, i) in grads.iter().enumerate() {
            if grads[..k].contains(i) {
                return Err(Error::new(
                    Status::InvalidArgument,
                    format!("grads: gradient {i} appears twice"),
                ));
            }
        }
        let mut read = Vec::with_capacity(params.len());
        for &i in params {
            let (data, len) = self.parameter_parts(i)?;
            // SAFETY: as for `parameter`; parameters and gradients never share memory.
            read.push(unsafe { std::slice::from_raw_parts(data as *const T, len) });
        }
        let mut written = Vec::with_capacity(grads.len());
        for &i in grads {
            let (data, len) = self.gradient_parts(i)?;
            // SAFETY: as for `gradient`; the indices are distinct, so the
            // slices are disjoint.
            written.push(unsafe { std::slice::from_raw_parts_mut(data, len) });
        }
        Ok((read, written))
    }

    /// Gradient `index` is final for this micro-step; its unit's reduction
    /// starts once the unit is complete (and every later unit's has
    /// started). [`Status::InvalidArgument`] for an index out of range,
    /// [`Status::InvalidUsage`] for one already marked.
    pub fn mark_ready(&mut self, index: usize) -> Result<()> {
        // SAFETY: a live handle; `&mut self` means no gradient slice is alive
        // when its buffer may be freed.
        check(unsafe { sys::dt_zero_mark_ready(self.as_raw(), index) })
    }

    /// Ends a micro-step: starts the reductions not started and waits for
    /// all of them, at most `timeout_ms` (negative: the communicator's
    /// deadline). Gradients never marked give [`Status::InvalidUsage`]
    /// naming them.
    pub fn wait(&mut self, timeout_ms: i32) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::dt_zero_wait(self.as_raw(), timeout_ms) })
    }

    /// Turns the allreduce of stages 0–1 on or off for the micro-steps that
    /// follow (on at creation): off, gradients accumulate locally until a
    /// micro-step with sync on. Stages 2–3 reduce every micro-step; the
    /// result is the same either way. [`Status::InvalidUsage`] in the middle
    /// of a micro-step.
    pub fn set_sync(&mut self, sync: bool) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::dt_zero_set_sync(self.as_raw(), sync.into()) })?;
        self.sync = sync;
        Ok(())
    }

    /// Whether micro-steps allreduce (true at creation).
    pub fn sync(&self) -> bool {
        self.sync
    }

    /// Runs `f` with sync off, for micro-steps that only accumulate, and
    /// restores the previous setting afterwards.
    pub fn no_sync<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> Result<R> {
        let previous = self.sync;
        with_sync_off(self, previous, Self::set_sync, f)
    }

    /// Applies the optimizer to the gradients accumulated since the last
    /// step and zeroes them. Collective. [`Status::InvalidUsage`] when the
    /// last micro-step was not ended by [`wait`](Zero::wait) under sync, or
    /// a stage 3 unit is still gathered.
    pub fn step(&mut self) -> Result<StepInfo> {
        let mut info = StepInfo::raw_out();
        // SAFETY: a live handle; `&mut self` means no slice is alive while
        // the parameters are rewritten.
        check(unsafe { sys::dt_zero_step(self.as_raw(), &mut info) })?;
        Ok(StepInfo::from_raw(&info))
    }

    /// The number of units.
    pub fn unit_count(&self) -> Result<usize> {
        let mut count = 0usize;
        // SAFETY: a live handle and a valid out pointer.
        check(unsafe { sys::dt_zero_unit_count(self.as_raw(), &mut count) })?;
        Ok(count)
    }

    /// Starts making `unit` whole (stage 3: an allgather of its shards) and
    /// prefetching the next one; does not block. [`Status::InvalidArgument`]
    /// for a unit out of range.
    pub fn gather(&mut self, unit: usize) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::dt_zero_gather(self.as_raw(), unit) })
    }

    /// Waits at most `timeout_ms` (negative: the communicator's deadline)
    /// until `unit` is whole, gathering it first if
    /// [`gather`](Zero::gather) was not called.
    pub fn gather_wait(&mut self, unit: usize, timeout_ms: i32) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::dt_zero_gather_wait(self.as_raw(), unit, timeout_ms) })
    }

    /// Hands `unit`'s full parameters back (stage 3: frees them).
    /// [`Status::InvalidUsage`] for a unit that is not gathered.
    pub fn release(&mut self, unit: usize) -> Result<()> {
        // SAFETY: a live handle; `&mut self` means no parameter slice is alive.
        check(unsafe { sys::dt_zero_release(self.as_raw(), unit) })
    }

    /// Gathers `unit`, waits for it, runs `f` and releases the unit. A panic
    /// in `f` leaves the unit gathered.
    pub fn with_unit<R>(&mut self, unit: usize, f: impl FnOnce(&mut Self) -> R) -> Result<R> {
        self.gather(unit)?;
        self.gather_wait(unit, -1)?;
        let result = f(self);
        self.release(unit)?;
        Ok(result)
    }

    /// Sets the learning rate of the next steps (finite, >= 0).
    pub fn set_lr(&mut self, lr: f32) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::dt_zero_set_lr(self.as_raw(), lr) })
    }

    /// What to multiply the next loss by (1 without loss scaling).
    pub fn loss_scale(&self) -> Result<f32> {
        let mut scale = 0.0f32;
        // SAFETY: a live handle and a valid out pointer.
        check(unsafe { sys::dt_zero_loss_scale(self.as_raw(), &mut scale) })?;
        Ok(scale)
    }

    /// The bytes this rank holds now, by purpose, and its peak.
    pub fn memory(&self) -> Result<ZeroMemory> {
        let mut raw = ZeroMemory::raw();
        // SAFETY: a live handle and a valid out pointer with its version set.
        check(unsafe { sys::dt_zero_memory_usage(self.as_raw(), &mut raw) })?;
        Ok(ZeroMemory::from_raw(&raw))
    }

    /// Writes a checkpoint into directory `dir` (created if missing): this
    /// rank's shards of the master weights and optimizer state, and rank
    /// 0's metadata. Collective; between steps. [`Status::Io`] on every rank
    /// when a file cannot be written.
    pub fn save(&mut self, dir: impl AsRef<Path>) -> Result<()> {
        let (path, refused) = c_path(dir.as_ref());
        let path_ptr = path.as_ref().map_or(ptr::null(), |p| p.as_ptr());
        // SAFETY: a live handle and a NUL-terminated path (or NULL) that
        // outlives the call.
        let result = check(unsafe { sys::dt_zero_save(self.as_raw(), path_ptr) });
        refused.map_or(result, Err)
    }

    /// Loads the checkpoint in `dir`, written on any number of ranks and any
    /// stage. Collective; between steps. [`Status::InvalidArgument`] on every
    /// rank for a missing, corrupt or foreign checkpoint; either every rank
    /// loads everything or nothing changes.
    pub fn load(&mut self, dir: impl AsRef<Path>) -> Result<()> {
        let (path, refused) = c_path(dir.as_ref());
        let path_ptr = path.as_ref().map_or(ptr::null(), |p| p.as_ptr());
        // SAFETY: a live handle and a NUL-terminated path (or NULL) that
        // outlives the call; `&mut self` means no slice is alive while
        // values change.
        let result = check(unsafe { sys::dt_zero_load(self.as_raw(), path_ptr) });
        refused.map_or(result, Err)
    }

    fn parameter_parts(&self, index: usize) -> Result<(*mut T, usize)> {
        let mut tensor = MaybeUninit::<sys::DLTensor>::zeroed();
        // SAFETY: a live handle and a valid out pointer.
        check(unsafe { sys::dt_zero_parameter(self.as_raw(), index, tensor.as_mut_ptr()) })?;
        // SAFETY: filled by the library on success.
        element_parts::<T>(&unsafe { tensor.assume_init() }, "dt_zero_parameter")
    }

    fn gradient_parts(&self, index: usize) -> Result<(*mut T, usize)> {
        let mut tensor = MaybeUninit::<sys::DLTensor>::zeroed();
        // SAFETY: a live handle and a valid out pointer; the library allows
        // this call alongside others on the same Zero.
        check(unsafe { sys::dt_zero_gradient(self.as_raw(), index, tensor.as_mut_ptr()) })?;
        // SAFETY: filled by the library on success.
        element_parts::<T>(&unsafe { tensor.assume_init() }, "dt_zero_gradient")
    }
}

/// The elements a tensor filled by the library describes, checked to be of
/// type `T`, in host memory and compact.
fn element_parts<T: Element>(tensor: &sys::DLTensor, call: &str) -> Result<(*mut T, usize)> {
    let refuse = |what: String| Err(Error::new(Status::Internal, format!("{call} gave {what}")));
    let want = T::DATA_TYPE.to_dlpack();
    let got = tensor.dtype;
    if (got.code, got.bits, got.lanes) != (want.code, want.bits, want.lanes) {
        return refuse(format!(
            "a tensor of dtype code {} with {} bits, not {:?}",
            got.code,
            got.bits,
            T::DATA_TYPE
        ));
    }
    if tensor.device.device_type != sys::kDLCPU && tensor.device.device_type != sys::kDLCUDAHost {
        return refuse(format!(
            "a tensor on device type {}, not in host memory",
            tensor.device.device_type
        ));
    }
    let ndim = usize::try_from(tensor.ndim).unwrap_or(0);
    let (shape, strides) = if ndim == 0 {
        (&[][..], None)
    } else {
        // SAFETY: the library filled `ndim` extents (and strides, when not
        // NULL), valid while the Zero lives.
        unsafe {
            (
                std::slice::from_raw_parts(tensor.shape, ndim),
                (!tensor.strides.is_null())
                    .then(|| std::slice::from_raw_parts(tensor.strides, ndim)),
            )
        }
    };
    let mut len = 1usize;
    for (d, &extent) in shape.iter().enumerate().rev() {
        if let Some(strides) = strides {
            if extent > 1 && strides[d] != len as i64 {
                return refuse(format!(
                    "a tensor that is not compact (strides {strides:?})"
                ));
            }
        }
        len *= usize::try_from(extent).unwrap_or(0);
    }
    if len == 0 {
        return Ok((NonNull::dangling().as_ptr(), 0));
    }
    // The library's byte offset is into its own allocation, so it fits.
    let data = (tensor.data as *mut u8).wrapping_add(tensor.byte_offset as usize) as *mut T;
    Ok((data, len))
}

/// `path` as a C string, or `None` with this rank's error for a path holding
/// a NUL byte. Saving and loading are collective, so that rank still calls the
/// library, with a NULL path, which the library refuses on every rank,
/// instead of leaving the others waiting.
fn c_path(path: &Path) -> (Option<CString>, Option<Error>) {
    use std::os::unix::ffi::OsStrExt;
    match CString::new(path.as_os_str().as_bytes()) {
        Ok(path) => (Some(path), None),
        Err(_) => (
            None,
            Some(Error::new(
                Status::InvalidArgument,
                format!("dir: {} holds a NUL byte", path.display()),
            )),
        ),
    }
}

impl<T: Element> fmt::Debug for Zero<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Zero")
            .field("raw", &self.raw)
            .field("parameters", &self.len)
            .field("sync", &self.sync)
            .finish()
    }
}

impl<T: Element> Drop for Zero<'_, T> {
    fn drop(&mut self) {
        // SAFETY: a live handle owned by this value. Destroying waits for
        // communication in flight; a failure there has nowhere to go and
        // frees the Zero all the same.
        unsafe { sys::dt_zero_destroy(self.as_raw()) };
    }
}
