//! Data parallelism: gradient averaging overlapped with backward, and
//! parameter broadcast.

use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};

use dtrain_sys as sys;

use crate::comm::Comm;
use crate::device::{CudaStream, DeviceTensor};
use crate::element::Element;
use crate::error::{check, Error, Result, Status};
use crate::optimizer::{Borrowed, Optimizer};
use crate::tensor::RawTensor;

/// The type a [`Ddp`]'s gradients travel in. `f32` and `f64` gradients are
/// cast down for the allreduce and back; 16-bit gradients travel as they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    /// As they are.
    #[default]
    None,
    /// IEEE half precision.
    F16,
    /// bfloat16.
    Bf16,
}

impl Compression {
    fn to_raw(self) -> sys::dt_ddp_compression {
        match self {
            Compression::None => sys::DT_DDP_COMPRESS_NONE,
            Compression::F16 => sys::DT_DDP_COMPRESS_F16,
            Compression::Bf16 => sys::DT_DDP_COMPRESS_BF16,
        }
    }
}

/// Where a bucket is in the current step (see [`Ddp::bucket_state`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BucketState {
    /// Some of its gradients are not marked yet; nothing sent.
    Waiting,
    /// Its allreduce is running.
    InFlight,
    /// Its allreduce is done; [`Ddp::wait`] copies the result back.
    Reduced,
    /// Its allreduce failed; [`Ddp::wait`] reports why.
    Failed,
}

impl BucketState {
    fn from_raw(raw: sys::dt_bucket_state) -> Result<BucketState> {
        match raw {
            sys::DT_BUCKET_WAITING => Ok(BucketState::Waiting),
            sys::DT_BUCKET_IN_FLIGHT => Ok(BucketState::InFlight),
            sys::DT_BUCKET_REDUCED => Ok(BucketState::Reduced),
            sys::DT_BUCKET_FAILED => Ok(BucketState::Failed),
            other => Err(Error::new(
                Status::Internal,
                format!("dt_ddp_bucket_state returned the unknown state {other}"),
            )),
        }
    }
}

/// Options of a [`Ddp`], mirroring `dt_ddp_options`. Every rank must pass
/// the same. `DdpOptions::default()` is the library's default: buckets of
/// 25 MiB, no compression, every gradient marked in every step, a uniform
/// average.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DdpOptions {
    /// Bucket size on the wire (after compression), >= 1.
    pub bucket_bytes: Option<i64>,
    pub compression: Compression,
    /// Gradients not marked in a step count as zero from this rank instead
    /// of failing [`Ddp::wait`].
    pub find_unused: bool,
    /// Weight ranks by [`Ddp::set_local_weight`] (their sample counts, say)
    /// instead of averaging uniformly.
    pub weighted: bool,
}

impl DdpOptions {
    /// The C options for gradients written on `stream`; `None` for host
    /// gradients, which have no stream (NULL is passed).
    fn to_raw(&self, stream: Option<CudaStream>) -> Result<sys::dt_ddp_options> {
        let mut raw = MaybeUninit::<sys::dt_ddp_options>::zeroed();
        // SAFETY: dt_ddp_options_init fills every field of this version.
        check(unsafe { sys::dt_ddp_options_init(raw.as_mut_ptr(), sys::DT_DDP_OPTIONS_VERSION) })?;
        // SAFETY: zeroed and then initialised by the library.
        let mut raw = unsafe { raw.assume_init() };
        if let Some(bytes) = self.bucket_bytes {
            raw.bucket_bytes = bytes;
        }
        raw.compression = self.compression.to_raw();
        raw.find_unused = self.find_unused.into();
        raw.weighted = self.weighted.into();
        raw.stream = stream.map_or(ptr::null_mut(), CudaStream::as_raw);
        Ok(raw)
    }
}

/// Data parallelism over gradient slices it borrows mutably for its whole
/// life: every rank holds a replica of the model, and the DDP averages the
/// gradients over the ranks of a communicator while backward still runs.
/// [`Ddp::new_device`] makes one over gradients in CUDA memory instead.
///
/// A step: as each gradient `i` becomes final, [`mark_ready(i)`](Ddp::mark_ready)
/// (gradients are copied into buckets, filled last gradient first, whose
/// allreduces start as soon as they are full); then [`wait`](Ddp::wait),
/// after which the slices hold the averages. Between steps the trainer
/// writes the next gradients through [`grad_mut`](Ddp::grad_mut). For
/// gradient accumulation, run the micro-steps that only accumulate inside
/// [`no_sync`](Ddp::no_sync) (or with [`set_sync(false)`](Ddp::set_sync)).
///
/// An [`Optimizer`] borrows its gradients mutably too, so a DDP and an
/// optimizer cannot both borrow the same slices; [`Ddp::with_optimizer`]
/// makes a DDP over the optimizer's own gradients instead, and lends the
/// optimizer back between steps through [`optimizer`](Ddp::optimizer).
///
/// Creation is collective: every rank must pass slices of the same lengths
/// and element type and the same options, or every rank gets
/// [`Status::Mismatch`]. Element types are `f32`, `f64`, [`F16`](crate::F16)
/// and [`Bf16`](crate::Bf16) (integers are refused with
/// [`Status::InvalidArgument`]). The DDP borrows its communicator too;
/// dropping it (which waits for allreduces still in flight) ends the borrows.
///
/// ```
/// use dtrain::{Comm, Ddp, DdpOptions};
///
/// # fn main() -> Result<(), dtrain::Error> {
/// let comm = Comm::new()?; // a world of one without launcher variables
/// let (mut w, mut b) = (vec![0.0f32; 6], vec![0.0f32; 2]);
/// let mut ddp = Ddp::new(&comm, vec![&mut w[..], &mut b[..]], &DdpOptions::default())?;
/// for step in 0..2 {
///     ddp.grad_mut(1).fill(step as f32); // backward: b's gradient is final first
///     ddp.mark_ready(1)?;
///     ddp.grad_mut(0).fill(1.0);
///     ddp.mark_ready(0)?;
///     ddp.wait(-1)?; // the slices now hold the averages over the ranks
/// }
/// assert_eq!(ddp.grad(1), &[1.0, 1.0]);
/// # Ok(()) }
/// ```
///
/// `O` is what the gradients come from (see [`GradientSource`]): `()` for
/// slices given to [`Ddp::new`], an [`Optimizer`] for [`Ddp::with_optimizer`],
/// [`DeviceTensor`] for [`Ddp::new_device`].
pub struct Ddp<'a, T: Element, O: GradientSource<T> = ()> {
    raw: NonNull<sys::dt_ddp>,
    grads: Vec<O::Grad>,
    sync: bool,
    owner: Option<&'a mut O>,
    _borrows: PhantomData<&'a mut [T]>,
}

impl<'a, T: Element> Ddp<'a, T> {
    /// Creates a DDP over `grads` (registration order: forward order, first
    /// layer first). Collective over `comm`. Invalid options or slices give
    /// an error on this rank and [`Status::Mismatch`] on the others.
    pub fn new(
        comm: &'a Comm<'_>,
        grads: Vec<&'a mut [T]>,
        options: &DdpOptions,
    ) -> Result<Ddp<'a, T>> {
        let grads = grads.into_iter().map(Borrowed::of).collect();
        Ddp::create(comm, grads, None, options, None)
    }
}

impl<'a, T: Element> Ddp<'a, T, DeviceTensor<T>> {
    /// Creates a DDP over `grads` in CUDA memory of the communicator's device
    /// (registration order, as for [`Ddp::new`]), which backward writes on
    /// `stream`. Collective over `comm` like [`Ddp::new`], but the stream is
    /// this rank's own and not compared. Here [`CudaStream::COMMUNICATOR`]
    /// (NULL) means the legacy default stream, as in `dt_ddp_options`.
    ///
    /// Ordering: [`mark_ready(i)`](Ddp::mark_ready) queues the copy of
    /// gradient `i` after the work queued on `stream` so far and does not
    /// block, so it may be called as soon as backward has queued the
    /// gradient's computation, before that runs. When [`wait`](Ddp::wait)
    /// returns, the averages are written, visible to work on any stream.
    ///
    /// The DDP keeps the tensors and writes the averages into their memory,
    /// so by the promise of [`DeviceTensor::from_device_ptr`] it must stay
    /// allocated until the DDP is dropped. `f64` gradients travel only
    /// uncompressed. Where libdtrain has no usable CUDA device this is
    /// [`Status::Unsupported`].
    pub fn new_device(
        comm: &'a Comm<'_>,
        grads: Vec<DeviceTensor<T>>,
        stream: CudaStream,
        options: &DdpOptions,
    ) -> Result<Ddp<'a, T, DeviceTensor<T>>> {
        Ddp::create(comm, grads, Some(stream), options, None)
    }
}

impl<'a, 'o, T: Element> Ddp<'a, T, Optimizer<'o, T>> {
    /// Creates a DDP over the gradients of `optimizer` (in the order they
    /// were given to it), which it borrows: between steps,
    /// [`optimizer`](Ddp::optimizer) lends it back to step. Collective over
    /// `comm`, like [`Ddp::new`].
    ///
    /// ```
    /// use dtrain::{Comm, Ddp, DdpOptions, Optimizer, OptimizerKind, OptimizerOptions};
    ///
    /// # fn main() -> Result<(), dtrain::Error> {
    /// let comm = Comm::new()?;
    /// let (mut w, mut g) = (vec![1.0f32; 4], vec![0.0f32; 4]);
    /// let sgd = OptimizerOptions { kind: OptimizerKind::Sgd, lr: Some(0.5), ..Default::default() };
    /// let mut opt = Optimizer::new(vec![&mut w[..]], vec![&mut g[..]], &sgd)?;
    /// let mut ddp = Ddp::with_optimizer(&comm, &mut opt, &DdpOptions::default())?;
    /// ddp.grad_mut(0).fill(1.0); // backward
    /// ddp.mark_ready(0)?;
    /// ddp.wait(-1)?; // averaged over the ranks
    /// ddp.optimizer().step()?;
    /// assert_eq!(ddp.optimizer().param(0), &[0.5; 4]);
    /// # Ok(()) }
    /// ```
    pub fn with_optimizer(
        comm: &'a Comm<'_>,
        optimizer: &'a mut Optimizer<'o, T>,
        options: &DdpOptions,
    ) -> Result<Ddp<'a, T, Optimizer<'o, T>>> {
        let grads = optimizer
            .grad_parts()
            .map(|(data, len)| Borrowed { data, len })
            .collect();
        Ddp::create(comm, grads, None, options, Some(optimizer))
    }

    /// The optimizer whose gradients this DDP averages, lent back between
    /// steps (to step, zero the gradients or change the learning rate).
    pub fn optimizer(&mut self) -> &mut Optimizer<'o, T> {
        self.owner
            .as_deref_mut()
            .expect("a DDP made by with_optimizer holds its optimizer")
    }
}

impl<'a, T: Element, O: GradientSource<T>> Ddp<'a, T, O> {
    /// The creation every source shares; `stream` as for
    /// [`DdpOptions::to_raw`].
    fn create(
        comm: &'a Comm<'_>,
        grads: Vec<O::Grad>,
        stream: Option<CudaStream>,
        options: &DdpOptions,
        owner: Option<&'a mut O>,
    ) -> Result<Ddp<'a, T, O>>
    where
        O::Grad: Describe,
    {
        let raw_options = options.to_raw(stream)?;
        let described: Vec<RawTensor> = grads.iter().map(Describe::describe).collect();
        let pointers: Vec<*const sys::DLTensor> = described.iter().map(RawTensor::as_ptr).collect();
        let mut out = ptr::null_mut();
        // SAFETY: the descriptors (and their shapes) live through the call,
        // which only reads them; the memory they describe is borrowed for 'a,
        // which the DDP outlives only by being dropped first.
        check(unsafe {
            sys::dt_ddp_create(
                &mut out,
                comm.as_raw(),
                pointers.as_ptr(),
                pointers.len(),
                &raw_options,
            )
        })?;
        let raw = NonNull::new(out).expect("dt_ddp_create succeeded without a DDP");
        Ok(Ddp {
            raw,
            grads,
            sync: true,
            owner,
            _borrows: PhantomData,
        })
    }

    /// The raw handle, still owned by this `Ddp`.
    pub fn as_raw(&self) -> *mut sys::dt_ddp {
        self.raw.as_ptr()
    }

    /// Gradient `index` is final for this step: it is copied into its bucket,
    /// whose allreduce starts once the bucket is full (and every earlier one
    /// has started). Does nothing with sync off. [`Status::InvalidArgument`]
    /// for an index out of range, [`Status::InvalidUsage`] for one already
    /// marked in this step.
    pub fn mark_ready(&self, index: usize) -> Result<()> {
        // SAFETY: a live handle. Marking only reads the gradient (a CUDA one
        // on the device, after the trainer's stream), and no mutable borrow
        // of a slice can be live while `self` is borrowed.
        check(unsafe { sys::dt_ddp_mark_ready(self.as_raw(), index) })
    }

    /// Finishes the step: starts what has not started, waits at most
    /// `timeout_ms` (negative: the communicator's deadline) and leaves the
    /// averages in the gradients (CUDA ones: written, visible to work on any
    /// stream). With sync off, returns at once. Gradients never marked give
    /// [`Status::InvalidUsage`] (the gradients stay as they were) unless the
    /// DDP was made with `find_unused`.
    pub fn wait(&mut self, timeout_ms: i32) -> Result<()> {
        // SAFETY: a live handle; `&mut self` means no slice is borrowed out
        // while the library writes the averages.
        check(unsafe { sys::dt_ddp_wait(self.as_raw(), timeout_ms) })
    }

    /// Turns averaging on or off for the steps that follow (on at creation).
    /// [`Status::InvalidUsage`] in the middle of a step.
    pub fn set_sync(&mut self, sync: bool) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::dt_ddp_set_sync(self.as_raw(), sync.into()) })?;
        self.sync = sync;
        Ok(())
    }

    /// Whether steps average (true at creation).
    pub fn sync(&self) -> bool {
        self.sync
    }

    /// Runs `f` with averaging off, for micro-steps that only accumulate
    /// gradients locally (PyTorch's `no_sync`), and restores the previous
    /// setting afterwards.
    pub fn no_sync<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> Result<R> {
        let previous = self.sync;
        with_sync_off(self, previous, Self::set_sync, f)
    }

    /// This rank's weight in a `weighted` average from the next step on:
    /// finite and >= 0, for example its number of samples.
    pub fn set_local_weight(&mut self, weight: f64) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::dt_ddp_set_local_weight(self.as_raw(), weight) })
    }

    /// The number of buckets.
    pub fn bucket_count(&self) -> Result<usize> {
        let mut count = 0usize;
        // SAFETY: a live handle and a valid out pointer.
        check(unsafe { sys::dt_ddp_bucket_count(self.as_raw(), &mut count) })?;
        Ok(count)
    }

    /// The bucket that holds gradient `index`; bucket 0 starts first.
    pub fn bucket_of(&self, index: usize) -> Result<usize> {
        let mut bucket = 0usize;
        // SAFETY: a live handle and a valid out pointer.
        check(unsafe { sys::dt_ddp_bucket_of(self.as_raw(), index, &mut bucket) })?;
        Ok(bucket)
    }

    /// Where `bucket` is in the current step; never blocks.
    pub fn bucket_state(&self, bucket: usize) -> Result<BucketState> {
        let mut state: sys::dt_bucket_state = sys::DT_BUCKET_WAITING;
        // SAFETY: a live handle and a valid out pointer.
        check(unsafe { sys::dt_ddp_bucket_state(self.as_raw(), bucket, &mut state) })?;
        BucketState::from_raw(state)
    }

    /// The number of gradients.
    pub fn len(&self) -> usize {
        self.grads.len()
    }

    /// Whether there are no gradients.
    pub fn is_empty(&self) -> bool {
        self.grads.is_empty()
    }
}

/// Slice access, only where the gradients are host slices.
impl<T: Element, O: GradientSource<T, Grad = Borrowed<T>>> Ddp<'_, T, O> {
    /// Gradient slice `i`. Panics when `i` is out of range.
    pub fn grad(&self, i: usize) -> &[T] {
        // SAFETY: borrowed mutably for 'a; the library writes only inside
        // calls that take `&mut self`, so it cannot while this borrow lives.
        unsafe { self.grads[i].slice() }
    }

    /// Gradient slice `i`, to store the next gradients. Panics when `i` is
    /// out of range.
    pub fn grad_mut(&mut self, i: usize) -> &mut [T] {
        // SAFETY: as for `grad`, and `&mut self` makes this the only borrow.
        unsafe { self.grads[i].slice_mut() }
    }
}

/// What a [`Ddp`] takes its gradients from, its `O` parameter, and so how it
/// keeps them: `()` (slices given to [`Ddp::new`]) and an [`Optimizer`]
/// (its gradients, for [`Ddp::with_optimizer`]) give host slices, lent out
/// by [`Ddp::grad`] and [`Ddp::grad_mut`]; [`DeviceTensor`] (for
/// [`Ddp::new_device`]) gives CUDA memory, which Rust cannot read as slices,
/// so such a DDP has neither. Implemented for these three only.
///
/// ```compile_fail,E0599
/// fn first(ddp: &dtrain::Ddp<'_, f32, dtrain::DeviceTensor<f32>>) -> f32 {
///     ddp.grad(0)[0] // CUDA memory: no slice to lend
/// }
/// ```
pub trait GradientSource<T: Element>: sealed::Sealed {
    /// How the DDP keeps each gradient.
    type Grad;
}

mod sealed {
    /// Closes [`GradientSource`](super::GradientSource) to other types: a
    /// DDP can only be created over the gradient kinds this crate describes.
    pub trait Sealed {}
}

impl sealed::Sealed for () {}
impl<T: Element> GradientSource<T> for () {
    type Grad = Borrowed<T>;
}

impl<T: Element> sealed::Sealed for Optimizer<'_, T> {}
impl<T: Element> GradientSource<T> for Optimizer<'_, T> {
    type Grad = Borrowed<T>;
}

impl<T: Element> sealed::Sealed for DeviceTensor<T> {}
impl<T: Element> GradientSource<T> for DeviceTensor<T> {
    type Grad = DeviceTensor<T>;
}

/// A kept gradient as the tensor libdtrain is given at creation.
trait Describe {
    fn describe(&self) -> RawTensor;
}

impl<T: Element> Describe for Borrowed<T> {
    fn describe(&self) -> RawTensor {
        RawTensor::from_raw_parts(self.data, self.len)
    }
}

impl<T: Element> Describe for DeviceTensor<T> {
    fn describe(&self) -> RawTensor {
        self.descriptor()
    }
}

/// The `no_sync` of [`Ddp`] and [`Zero`](crate::Zero): `set(handle, false)`,
/// `f`, then `set(handle, previous)`. An error from either `set` is returned
/// (the first one before `f` runs).
pub(crate) fn with_sync_off<S, R>(
    handle: &mut S,
    previous: bool,
    set: impl Fn(&mut S, bool) -> Result<()>,
    f: impl FnOnce(&mut S) -> R,
) -> Result<R> {
    set(handle, false)?;
    let result = f(handle);
    set(handle, previous)?;
    Ok(result)
}

impl<T: Element, O: GradientSource<T>> fmt::Debug for Ddp<'_, T, O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ddp")
            .field("raw", &self.raw)
            .field("gradients", &self.grads.len())
            .field("sync", &self.sync)
            .finish()
    }
}

impl<T: Element, O: GradientSource<T>> Drop for Ddp<'_, T, O> {
    fn drop(&mut self) {
        // SAFETY: a live handle owned by this value. Destroying waits for
        // allreduces in flight (they write into the DDP's own buffers); a
        // failure there has nowhere to go and frees the DDP all the same.
        unsafe { sys::dt_ddp_destroy(self.as_raw()) };
    }
}

/// Makes replicas start identical: every rank's `params` become those of
/// rank `root`. Collective over `comm` and blocking. Ranks that disagree
/// about the count, lengths, element type or root all get
/// [`Status::Mismatch`]; a rank whose own root is bad gets
/// [`Status::InvalidArgument`] (and the others [`Status::Mismatch`]).
///
/// ```
/// # fn main() -> Result<(), dtrain::Error> {
/// let comm = dtrain::Comm::new()?;
/// let (mut w, mut b) = (vec![0.5f32; 6], vec![0.0f32; 2]);
/// dtrain::broadcast_parameters(&comm, &mut [&mut w[..], &mut b[..]], 0)?;
/// # Ok(()) }
/// ```
pub fn broadcast_parameters<T: Element>(
    comm: &Comm<'_>,
    params: &mut [&mut [T]],
    root: i32,
) -> Result<()> {
    let described = params.iter_mut().map(|p| RawTensor::of_mut(p)).collect();
    // SAFETY: the descriptors describe slices borrowed mutably for the call.
    unsafe { broadcast_described(comm, described, root) }
}

/// [`broadcast_parameters`] for parameters in CUDA memory, all on the
/// communicator's device. Ordered as a collective with
/// [`CudaStream::COMMUNICATOR`] is (see `dtrain/comm.h`), and in place on
/// return. Without a usable CUDA device libdtrain refuses them with
/// [`Status::Unsupported`](crate::Status::Unsupported).
pub fn broadcast_parameters_device<T: Element>(
    comm: &Comm<'_>,
    params: &mut [&mut DeviceTensor<T>],
    root: i32,
) -> Result<()> {
    let described = params.iter().map(|p| p.descriptor()).collect();
    // SAFETY: the descriptors describe device memory that the tensors'
    // creators vouched for (DeviceTensor::from_device_ptr), borrowed mutably
    // for the call.
    unsafe { broadcast_described(comm, described, root) }
}

/// `dt_ddp_broadcast_parameters` over `described`, from `root`.
///
/// # Safety
///
/// Each descriptor must describe memory that nothing else reads or writes
/// until this returns (the call blocks until the library is done with it).
unsafe fn broadcast_described(
    comm: &Comm<'_>,
    mut described: Vec<RawTensor>,
    root: i32,
) -> Result<()> {
    let pointers: Vec<*mut sys::DLTensor> =
        described.iter_mut().map(RawTensor::as_mut_ptr).collect();
    check(sys::dt_ddp_broadcast_parameters(
        comm.as_raw(),
        pointers.as_ptr(),
        pointers.len(),
        root,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_options_carry_the_stream_of_device_gradients_only() {
        let options = DdpOptions {
            bucket_bytes: Some(64),
            weighted: true,
            ..DdpOptions::default()
        };
        let host = options.to_raw(None).unwrap();
        assert_eq!(host.version, sys::DT_DDP_OPTIONS_VERSION);
        assert_eq!((host.bucket_bytes, host.weighted), (64, 1));
        assert!(host.stream.is_null());
        // SAFETY: the handle is only copied into the options.
        let side = unsafe { CudaStream::from_raw(ptr::without_provenance_mut(0x5000)) };
        for stream in [side, CudaStream::LEGACY_DEFAULT, CudaStream::COMMUNICATOR] {
            assert_eq!(
                options.to_raw(Some(stream)).unwrap().stream,
                stream.as_raw()
            );
        }
    }
}
