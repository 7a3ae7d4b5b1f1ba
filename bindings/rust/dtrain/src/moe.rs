//! Expert parallelism (mixture of experts): top-k routing with a capacity
//! limit, the auxiliary losses, and the dispatch and combine of tokens over
//! an ep communicator, with their backward passes. `dtrain/moe.h` states
//! what each call computes; matrices here are row-major `f32` (or `i64`)
//! slices whose row length the call knows: E for logits, k for weights and
//! expert indices, H for tokens.

use std::ptr::{self, NonNull};

use dtrain_sys as sys;

use crate::comm::Comm;
use crate::device::DeviceTensor;
use crate::element::Element;
use crate::error::{check, Result};

/// The mesh dimensions expert parameters reduce their gradients over.
pub const EXPERT_GRAD_DIMS: &str = "dp,cp";
/// The mesh dimensions the other parameters of an MoE model reduce over.
pub const DENSE_GRAD_DIMS: &str = "dp,cp,ep";

/// How router logits become scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scoring {
    /// softmax over the experts.
    Softmax,
    /// sigmoid of each logit (DeepSeek-V3).
    Sigmoid,
}

/// Which pairs an expert over capacity drops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropPolicy {
    /// The later tokens.
    ByPosition,
    /// The lowest-scoring tokens.
    ByScore,
}

/// The options of an MoE layer ([`MoeOptions::new`] gives the library's defaults).
#[derive(Clone, Debug)]
pub struct MoeOptions {
    pub num_experts: i32,
    pub top_k: i32,
    pub scoring: Scoring,
    /// Renormalise the k weights to sum to 1.
    pub normalize: bool,
    /// > 0: capacity = ceil(factor * T * k / E) per expert; <= 0: dropless.
    pub capacity_factor: f64,
    pub drop_policy: DropPolicy,
}

impl MoeOptions {
    /// The defaults of this library for E experts and k per token.
    pub fn new(num_experts: i32, top_k: i32) -> Result<MoeOptions> {
        // SAFETY: the struct is plain data, filled by the library.
        let mut raw: sys::dt_moe_options = unsafe { std::mem::zeroed() };
        // SAFETY: a valid out pointer.
        check(unsafe { sys::dt_moe_options_init(&mut raw, sys::DT_MOE_OPTIONS_VERSION) })?;
        Ok(MoeOptions {
            num_experts,
            top_k,
            scoring: if raw.scoring == sys::DT_MOE_SIGMOID {
                Scoring::Sigmoid
            } else {
                Scoring::Softmax
            },
            normalize: raw.normalize != 0,
            capacity_factor: raw.capacity_factor,
            drop_policy: if raw.drop_policy == sys::DT_MOE_DROP_BY_SCORE {
                DropPolicy::ByScore
            } else {
                DropPolicy::ByPosition
            },
        })
    }

    fn to_raw(&self) -> sys::dt_moe_options {
        sys::dt_moe_options {
            version: sys::DT_MOE_OPTIONS_VERSION,
            num_experts: self.num_experts,
            top_k: self.top_k,
            scoring: match self.scoring {
                Scoring::Softmax => sys::DT_MOE_SOFTMAX,
                Scoring::Sigmoid => sys::DT_MOE_SIGMOID,
            },
            normalize: self.normalize as i32,
            capacity_factor: self.capacity_factor,
            drop_policy: match self.drop_policy {
                DropPolicy::ByPosition => sys::DT_MOE_DROP_BY_POSITION,
                DropPolicy::ByScore => sys::DT_MOE_DROP_BY_SCORE,
            },
        }
    }

    fn experts(&self) -> usize {
        self.num_experts.max(1) as usize
    }

    fn k(&self) -> usize {
        self.top_k.max(1) as usize
    }
}

/// A row-major slice described as a DLTensor of shape [n, inner...], n
/// being the slice's length over the product of `inner`. A length that is
/// not a multiple of it is described as [1, ..., 1, length], which the
/// library refuses with a message giving both shapes (collective calls must
/// reach the library, so that the other ranks hear of the refusal).
struct ShapedTensor {
    tensor: sys::DLTensor,
    // What `tensor.shape` points to; a Vec's buffer stays put when it moves.
    _dims: Vec<i64>,
}

impl ShapedTensor {
    fn of<T: Element>(slice: &[T], inner: &[usize]) -> ShapedTensor {
        ShapedTensor::new::<T>(slice.as_ptr() as *mut _, slice.len(), inner)
    }

    fn of_mut<T: Element>(slice: &mut [T], inner: &[usize]) -> ShapedTensor {
        ShapedTensor::new::<T>(slice.as_mut_ptr() as *mut _, slice.len(), inner)
    }

    /// A tensor of CUDA memory, shaped alike.
    fn on_device<T: Element>(tensor: &DeviceTensor<T>, inner: &[usize]) -> ShapedTensor {
        let mut shaped = ShapedTensor::new::<T>(tensor.as_ptr() as *mut _, tensor.len(), inner);
        shaped.tensor.device = sys::DLDevice {
            device_type: sys::kDLCUDA,
            device_id: tensor.device(),
        };
        shaped
    }

    fn new<T: Element>(data: *mut std::os::raw::c_void, len: usize, inner: &[usize]) -> ShapedTensor {
        let row: usize = inner.iter().product();
        let mut dims: Vec<i64> = if row > 0 && len % row == 0 {
            std::iter::once(len / row)
                .chain(inner.iter().copied())
                .map(|d| d as i64)
                .collect()
        } else {
            let mut ones = vec![1i64; inner.len()];
            ones.push(len as i64);
            ones
        };
        let tensor = sys::DLTensor {
            data,
            device: sys::DLDevice {
                device_type: sys::kDLCPU,
                device_id: 0,
            },
            ndim: dims.len() as i32,
            dtype: T::DATA_TYPE.to_dlpack(),
            shape: dims.as_mut_ptr(),
            strides: ptr::null_mut(),
            byte_offset: 0,
        };
        ShapedTensor { tensor, _dims: dims }
    }

    fn ptr(&self) -> *const sys::DLTensor {
        &self.tensor
    }

    fn mut_ptr(&mut self) -> *mut sys::DLTensor {
        &mut self.tensor
    }
}

/// The activation of the built-in expert MLPs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Activation {
    /// GELU, tanh approximation.
    GeluTanh,
    /// GELU with erf.
    GeluErf,
    /// x * sigmoid(x).
    Silu,
}

impl Activation {
    fn to_raw(self) -> sys::dt_moe_activation {
        match self {
            Activation::GeluTanh => sys::DT_MOE_GELU_TANH,
            Activation::GeluErf => sys::DT_MOE_GELU_ERF,
            Activation::Silu => sys::DT_MOE_SILU,
        }
    }
}

/// The built-in experts (`dt_moe_experts_forward` / `_backward`): one MLP
/// per local expert, `w1` [L, H, F] and `w2` [L, F, H], run on rows grouped
/// by expert, `counts[l]` rows for expert l (as [`MoePlan::expert_counts`]
/// gives them).
pub struct Experts<'a> {
    pub counts: &'a [i64],
    pub w1: &'a [f32],
    pub w2: &'a [f32],
    /// H
    pub hidden: usize,
    /// F
    pub inner: usize,
    pub activation: Activation,
}

/// What the experts' backward pass returns.
#[derive(Clone, Debug, PartialEq)]
pub struct ExpertGradients {
    /// [R, H]
    pub dx: Vec<f32>,
    /// [L, H, F]
    pub dw1: Vec<f32>,
    /// [L, F, H]
    pub dw2: Vec<f32>,
}

impl Experts<'_> {
    /// From rows `x` [R, H]: (the pre-activation [R, F] the backward pass
    /// needs, the outputs y [R, H]).
    pub fn forward(&self, x: &[f32]) -> Result<(Vec<f32>, Vec<f32>)> {
        let rows = x.len() / self.hidden.max(1);
        let mut pre = vec![0.0f32; rows * self.inner];
        let mut y = vec![0.0f32; rows * self.hidden];
        let (tx, c, w1, w2) = self.operands(x);
        let mut tp = ShapedTensor::of_mut(&mut pre, &[self.inner]);
        let mut ty = ShapedTensor::of_mut(&mut y, &[self.hidden]);
        // SAFETY: the descriptors point into slices that outlive the call.
        check(unsafe {
            sys::dt_moe_experts_forward(
                tx.ptr(),
                c.ptr(),
                w1.ptr(),
                w2.ptr(),
                self.activation.to_raw(),
                tp.mut_ptr(),
                ty.mut_ptr(),
            )
        })?;
        Ok((pre, y))
    }

    /// The gradients from dy [R, H], with the forward's `x` and pre-activation.
    pub fn backward(&self, x: &[f32], pre: &[f32], dy: &[f32]) -> Result<ExpertGradients> {
        let mut grads = ExpertGradients {
            dx: vec![0.0; x.len()],
            dw1: vec![0.0; self.w1.len()],
            dw2: vec![0.0; self.w2.len()],
        };
        let (tx, c, w1, w2) = self.operands(x);
        let tp = ShapedTensor::of(pre, &[self.inner]);
        let tdy = ShapedTensor::of(dy, &[self.hidden]);
        let mut dx = ShapedTensor::of_mut(&mut grads.dx, &[self.hidden]);
        let mut dw1 = ShapedTensor::of_mut(&mut grads.dw1, &[self.hidden, self.inner]);
        let mut dw2 = ShapedTensor::of_mut(&mut grads.dw2, &[self.inner, self.hidden]);
        // SAFETY: as in `forward`.
        check(unsafe {
            sys::dt_moe_experts_backward(
                tx.ptr(),
                c.ptr(),
                w1.ptr(),
                w2.ptr(),
                self.activation.to_raw(),
                tp.ptr(),
                tdy.ptr(),
                dx.mut_ptr(),
                dw1.mut_ptr(),
                dw2.mut_ptr(),
            )
        })?;
        Ok(grads)
    }

    fn operands(&self, x: &[f32]) -> (ShapedTensor, ShapedTensor, ShapedTensor, ShapedTensor) {
        (
            ShapedTensor::of(x, &[self.hidden]),
            ShapedTensor::of(self.counts, &[]),
            ShapedTensor::of(self.w1, &[self.hidden, self.inner]),
            ShapedTensor::of(self.w2, &[self.inner, self.hidden]),
        )
    }
}

/// What [`route`] returns for T tokens.
#[derive(Clone, Debug, PartialEq)]
pub struct Routing {
    /// [T, k] weights.
    pub weights: Vec<f32>,
    /// [T, k] expert indices, -1 where the capacity dropped the pair.
    pub experts: Vec<i64>,
    /// How many pairs the capacity dropped.
    pub dropped: i64,
}

/// Routes `logits` [T, E] (`dt_moe_route`).
pub fn route(logits: &[f32], opts: &MoeOptions) -> Result<Routing> {
    let pairs = logits.len() / opts.experts() * opts.k();
    let mut routing = Routing {
        weights: vec![0.0; pairs],
        experts: vec![0; pairs],
        dropped: 0,
    };
    let x = ShapedTensor::of(logits, &[opts.experts()]);
    let mut w = ShapedTensor::of_mut(&mut routing.weights, &[opts.k()]);
    let mut e = ShapedTensor::of_mut(&mut routing.experts, &[opts.k()]);
    let raw = opts.to_raw();
    // SAFETY: the descriptors point into slices that outlive the call.
    check(unsafe { sys::dt_moe_route(x.ptr(), &raw, w.mut_ptr(), e.mut_ptr(), &mut routing.dropped) })?;
    Ok(routing)
}

/// d loss / d logits [T, E] from d loss / d weights [T, k] (`dt_moe_route_backward`).
pub fn route_backward(logits: &[f32], d_weights: &[f32], opts: &MoeOptions) -> Result<Vec<f32>> {
    let mut d_logits = vec![0.0f32; logits.len()];
    let x = ShapedTensor::of(logits, &[opts.experts()]);
    let dw = ShapedTensor::of(d_weights, &[opts.k()]);
    let mut dx = ShapedTensor::of_mut(&mut d_logits, &[opts.experts()]);
    let raw = opts.to_raw();
    // SAFETY: as in `route`.
    check(unsafe { sys::dt_moe_route_backward(x.ptr(), dw.ptr(), &raw, dx.mut_ptr()) })?;
    Ok(d_logits)
}

/// The Switch load-balancing loss of `logits` [T, E] and the per-expert
/// token counts; adds `coeff` times its gradient to `d_logits` when given
/// (`dt_moe_balance_loss`).
pub fn balance_loss(
    logits: &[f32],
    opts: &MoeOptions,
    coeff: f64,
    d_logits: Option<&mut [f32]>,
) -> Result<(f64, Vec<i64>)> {
    let mut counts = vec![0i64; opts.experts()];
    let mut loss = 0.0;
    let x = ShapedTensor::of(logits, &[opts.experts()]);
    let mut c = ShapedTensor::of_mut(&mut counts, &[]);
    let mut dx = d_logits.map(|d| ShapedTensor::of_mut(d, &[opts.experts()]));
    let dx_ptr = dx.as_mut().map_or(ptr::null_mut(), |d| d.mut_ptr());
    let raw = opts.to_raw();
    // SAFETY: as in `route`.
    check(unsafe { sys::dt_moe_balance_loss(x.ptr(), &raw, coeff, &mut loss, c.mut_ptr(), dx_ptr) })?;
    Ok((loss, counts))
}

/// The router z-loss of `logits` [T, E]; adds `coeff` times its gradient to
/// `d_logits` when given (`dt_moe_z_loss`).
pub fn z_loss(logits: &[f32], experts: usize, coeff: f64, d_logits: Option<&mut [f32]>) -> Result<f64> {
    let mut loss = 0.0;
    let x = ShapedTensor::of(logits, &[experts]);
    let mut dx = d_logits.map(|d| ShapedTensor::of_mut(d, &[experts]));
    let dx_ptr = dx.as_mut().map_or(ptr::null_mut(), |d| d.mut_ptr());
    // SAFETY: as in `route`.
    check(unsafe { sys::dt_moe_z_loss(x.ptr(), coeff, &mut loss, dx_ptr) })?;
    Ok(loss)
}

/// The routing of one layer's step across an ep communicator
/// (`dt_moe_plan`). It keeps the communicator alive itself, so it does not
/// borrow the [`Comm`].
pub struct MoePlan {
    raw: NonNull<sys::dt_moe_plan>,
    k: usize,
    hidden: usize,
}

// SAFETY: a plan may be used from any thread, one thread at a time; `MoePlan`
// is not `Sync`.
unsafe impl Send for MoePlan {}

impl MoePlan {
    /// Plans the exchange of tokens routed as `experts` [T, k] (from
    /// [`route`]) for tokens of `hidden` elements. Collective over `ep`.
    pub fn new(ep: &Comm<'_>, experts: &[i64], hidden: usize, opts: &MoeOptions) -> Result<MoePlan> {
        let e = ShapedTensor::of(experts, &[opts.k()]);
        let raw_opts = opts.to_raw();
        let mut out = ptr::null_mut();
        // SAFETY: a live communicator and descriptors over live slices.
        check(unsafe { sys::dt_moe_plan_create(&mut out, ep.as_raw(), e.ptr(), hidden as i64, &raw_opts) })?;
        Ok(MoePlan {
            raw: NonNull::new(out).expect("dt_moe_plan_create returned DT_OK without a plan"),
            k: opts.k(),
            hidden,
        })
    }

    /// (the first local expert's global index, the number of local experts).
    pub fn local_experts(&self) -> Result<(i32, i32)> {
        let (mut first, mut count) = (0, 0);
        // SAFETY: a live plan and valid out pointers.
        check(unsafe { sys::dt_moe_plan_local_experts(self.raw.as_ptr(), &mut first, &mut count) })?;
        Ok((first, count))
    }

    /// R, the rows [`MoePlan::dispatch`] delivers to this rank.
    pub fn received(&self) -> Result<usize> {
        let mut rows = 0i64;
        // SAFETY: as above.
        check(unsafe { sys::dt_moe_plan_received(self.raw.as_ptr(), &mut rows) })?;
        Ok(rows as usize)
    }

    /// The rows delivered for each local expert, in order.
    pub fn expert_counts(&self) -> Result<Vec<i64>> {
        let (_, local) = self.local_experts()?;
        let mut counts = vec![0i64; local as usize];
        // SAFETY: `counts` holds `local` entries.
        check(unsafe { sys::dt_moe_plan_expert_counts(self.raw.as_ptr(), counts.as_mut_ptr(), local) })?;
        Ok(counts)
    }

    /// tokens [T, H] to received [R, H], expert-major (`dt_moe_dispatch`).
    pub fn dispatch(&mut self, tokens: &[f32], received: &mut [f32]) -> Result<()> {
        let h = self.hidden;
        self.run_dispatch(ShapedTensor::of(tokens, &[h]), ShapedTensor::of_mut(received, &[h]))
    }

    /// expert_out [R, H] back to output [T, H], weighted by weights [T, k] (`dt_moe_combine`).
    pub fn combine(&mut self, expert_out: &[f32], weights: &[f32], output: &mut [f32]) -> Result<()> {
        let (h, k) = (self.hidden, self.k);
        self.run_combine(
            ShapedTensor::of(expert_out, &[h]),
            ShapedTensor::of(weights, &[k]),
            ShapedTensor::of_mut(output, &[h]),
        )
    }

    /// From d_out [T, H]: d_expert_out [R, H] and d_weights [T, k] (`dt_moe_combine_backward`).
    pub fn combine_backward(
        &mut self,
        d_out: &[f32],
        weights: &[f32],
        d_expert_out: &mut [f32],
        d_weights: &mut [f32],
    ) -> Result<()> {
        let (h, k) = (self.hidden, self.k);
        self.run_combine_backward(
            ShapedTensor::of(d_out, &[h]),
            ShapedTensor::of(weights, &[k]),
            ShapedTensor::of_mut(d_expert_out, &[h]),
            ShapedTensor::of_mut(d_weights, &[k]),
        )
    }

    /// d_received [R, H] back to d_tokens [T, H] (`dt_moe_dispatch_backward`).
    pub fn dispatch_backward(&mut self, d_received: &[f32], d_tokens: &mut [f32]) -> Result<()> {
        let h = self.hidden;
        self.run_dispatch_backward(ShapedTensor::of(d_received, &[h]), ShapedTensor::of_mut(d_tokens, &[h]))
    }

    // The four exchanges on descriptors, host or device; each descriptor
    // describes memory its caller keeps alive for the call (a borrowed slice,
    // or a DeviceTensor whose constructor vouched for it).

    fn run_dispatch(&mut self, x: ShapedTensor, mut r: ShapedTensor) -> Result<()> {
        // SAFETY: a live plan and descriptors of live memory.
        check(unsafe { sys::dt_moe_dispatch(self.raw.as_ptr(), x.ptr(), r.mut_ptr()) })
    }

    fn run_combine(&mut self, y: ShapedTensor, w: ShapedTensor, mut o: ShapedTensor) -> Result<()> {
        // SAFETY: as above.
        check(unsafe { sys::dt_moe_combine(self.raw.as_ptr(), y.ptr(), w.ptr(), o.mut_ptr()) })
    }

    fn run_combine_backward(
        &mut self,
        dy: ShapedTensor,
        w: ShapedTensor,
        mut dr: ShapedTensor,
        mut dw: ShapedTensor,
    ) -> Result<()> {
        // SAFETY: as above.
        check(unsafe { sys::dt_moe_combine_backward(self.raw.as_ptr(), dy.ptr(), w.ptr(), dr.mut_ptr(), dw.mut_ptr()) })
    }

    fn run_dispatch_backward(&mut self, dr: ShapedTensor, mut dx: ShapedTensor) -> Result<()> {
        // SAFETY: as above.
        check(unsafe { sys::dt_moe_dispatch_backward(self.raw.as_ptr(), dr.ptr(), dx.mut_ptr()) })
    }
}

/// The exchanges on CUDA memory: each is its host namesake with every tensor
/// of the call in the memory of one CUDA device. The work runs on that
/// device, on a stream libdtrain keeps for the calling thread, which first
/// waits for the work queued on the legacy default stream and for no other:
/// work on other streams that writes the inputs must be finished before the
/// call. The call returns once its results are in place (`dtrain/moe.h`).
/// A plan keeps the place of its first exchange: one that began on the host
/// refuses device tensors, and the reverse, with
/// [`Status::InvalidArgument`](crate::Status::InvalidArgument) on this rank
/// and [`Status::Mismatch`](crate::Status::Mismatch) on the others. Without
/// a usable CUDA device libdtrain refuses device tensors with
/// [`Status::Unsupported`](crate::Status::Unsupported) before reading them.
impl MoePlan {
    /// [`MoePlan::dispatch`]: tokens [T, H] to received [R, H].
    pub fn dispatch_device(&mut self, tokens: &DeviceTensor<f32>, received: &mut DeviceTensor<f32>) -> Result<()> {
        let h = self.hidden;
        self.run_dispatch(ShapedTensor::on_device(tokens, &[h]), ShapedTensor::on_device(received, &[h]))
    }

    /// [`MoePlan::combine`]: expert_out [R, H] and weights [T, k] to output [T, H].
    pub fn combine_device(
        &mut self,
        expert_out: &DeviceTensor<f32>,
        weights: &DeviceTensor<f32>,
        output: &mut DeviceTensor<f32>,
    ) -> Result<()> {
        let (h, k) = (self.hidden, self.k);
        self.run_combine(
            ShapedTensor::on_device(expert_out, &[h]),
            ShapedTensor::on_device(weights, &[k]),
            ShapedTensor::on_device(output, &[h]),
        )
    }

    /// [`MoePlan::combine_backward`]: d_out [T, H] to d_expert_out [R, H] and d_weights [T, k].
    pub fn combine_backward_device(
        &mut self,
        d_out: &DeviceTensor<f32>,
        weights: &DeviceTensor<f32>,
        d_expert_out: &mut DeviceTensor<f32>,
        d_weights: &mut DeviceTensor<f32>,
    ) -> Result<()> {
        let (h, k) = (self.hidden, self.k);
        self.run_combine_backward(
            ShapedTensor::on_device(d_out, &[h]),
            ShapedTensor::on_device(weights, &[k]),
            ShapedTensor::on_device(d_expert_out, &[h]),
            ShapedTensor::on_device(d_weights, &[k]),
        )
    }

    /// [`MoePlan::dispatch_backward`]: d_received [R, H] to d_tokens [T, H].
    pub fn dispatch_backward_device(
        &mut self,
        d_received: &DeviceTensor<f32>,
        d_tokens: &mut DeviceTensor<f32>,
    ) -> Result<()> {
        let h = self.hidden;
        self.run_dispatch_backward(ShapedTensor::on_device(d_received, &[h]), ShapedTensor::on_device(d_tokens, &[h]))
    }
}

impl Drop for MoePlan {
    fn drop(&mut self) {
        // SAFETY: the plan is live and destroyed once.
        unsafe { sys::dt_moe_plan_destroy(self.raw.as_ptr()) };
    }
}
