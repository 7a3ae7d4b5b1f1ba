//! Context parallelism: blockwise attention, the merge of partial results,
//! sequence layouts, and ring and all-to-all (Ulysses) attention over a
//! communicator (dtrain/cp.h).
//!
//! Slices are row-major float32 in host memory, one row per token: queries
//! and outputs `[seq, q_heads, head_dim]`, keys and values
//! `[seq, kv_heads, head_dim]`, log-sum-exps `[seq, q_heads]`. The sequence
//! lengths follow from the slices' lengths and [`AttentionSpec`]'s heads.

use std::os::raw::{c_int, c_void};
use std::ptr;

use dtrain_sys as sys;

use crate::comm::Comm;
use crate::element::Element;
use crate::error::{check, Error, Result, Status};

/// How a sequence is split between the ranks of a context-parallel group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpLayout {
    /// Rank r holds tokens `[r * S / cp, (r + 1) * S / cp)`.
    Contiguous,
    /// Of `2 * cp` chunks, rank r holds chunk r and chunk `2 * cp - 1 - r`,
    /// balancing causal attention.
    Zigzag,
}

impl CpLayout {
    fn raw(self) -> sys::dt_cp_layout {
        match self {
            CpLayout::Contiguous => sys::DT_CP_CONTIGUOUS,
            CpLayout::Zigzag => sys::DT_CP_ZIGZAG,
        }
    }
}

/// A slice seen as a row-major tensor of `[len / row, tail...]`.
struct ShapedTensor {
    _shape: Vec<i64>,
    tensor: sys::DLTensor,
}

impl ShapedTensor {
    /// `tail` is every dimension after the first; the first is the slice's
    /// length divided by their product, which must divide it.
    fn new<T: Element>(data: *const T, len: usize, tail: &[usize], name: &str) -> Result<ShapedTensor> {
        let row: usize = tail.iter().product();
        if row == 0 || len % row != 0 {
            return Err(Error::new(
                Status::InvalidArgument,
                format!("{name} has {len} elements, not a whole number of rows of {tail:?}"),
            ));
        }
        let mut shape = vec![(len / row) as i64];
        shape.extend(tail.iter().map(|&n| n as i64));
        let tensor = sys::DLTensor {
            data: data as *mut c_void,
            device: sys::DLDevice {
                device_type: sys::kDLCPU,
                device_id: 0,
            },
            ndim: shape.len() as c_int,
            dtype: T::DATA_TYPE.to_dlpack(),
            shape: shape.as_ptr() as *mut i64,
            strides: ptr::null_mut(),
            byte_offset: 0,
        };
        Ok(ShapedTensor { _shape: shape, tensor })
    }

    fn of<T: Element>(slice: &[T], tail: &[usize], name: &str) -> Result<ShapedTensor> {
        ShapedTensor::new(slice.as_ptr(), slice.len(), tail, name)
    }

    fn of_mut<T: Element>(slice: &mut [T], tail: &[usize], name: &str) -> Result<ShapedTensor> {
        ShapedTensor::new(slice.as_mut_ptr(), slice.len(), tail, name)
    }

    fn as_ptr(&self) -> *const sys::DLTensor {
        &self.tensor
    }

    fn as_mut_ptr(&mut self) -> *mut sys::DLTensor {
        &mut self.tensor
    }
}

/// The global positions of the `positions.len()` tokens rank `cp_rank` of
/// `cp_size` holds in `layout`.
pub fn cp_positions(layout: CpLayout, cp_size: i32, cp_rank: i32, positions: &mut [i64]) -> Result<()> {
    let mut out = ShapedTensor::of_mut(positions, &[], "positions")?;
    // SAFETY: `out` describes `positions`, which outlives the call.
    check(unsafe { sys::dt_cp_positions(layout.raw(), cp_size, cp_rank, out.as_mut_ptr()) })
}

/// Copies the rows (of `row` elements each) of the whole sequence `full`
/// that rank `cp_rank` holds in `layout` into `local`, in local order.
pub fn cp_shard<T: Element>(
    layout: CpLayout,
    cp_size: i32,
    cp_rank: i32,
    full: &[T],
    row: usize,
    local: &mut [T],
) -> Result<()> {
    let full = ShapedTensor::of(full, &[row], "full")?;
    let mut local = ShapedTensor::of_mut(local, &[row], "local")?;
    // SAFETY: both tensors describe slices that outlive the call.
    check(unsafe { sys::dt_cp_shard(layout.raw(), cp_size, cp_rank, full.as_ptr(), local.as_mut_ptr()) })
}

/// Writes rank `cp_rank`'s rows `local` to their places in `full`, leaving
/// the other rows untouched.
pub fn cp_unshard<T: Element>(
    layout: CpLayout,
    cp_size: i32,
    cp_rank: i32,
    local: &[T],
    row: usize,
    full: &mut [T],
) -> Result<()> {
    let local = ShapedTensor::of(local, &[row], "local")?;
    let mut full = ShapedTensor::of_mut(full, &[row], "full")?;
    // SAFETY: both tensors describe slices that outlive the call.
    check(unsafe { sys::dt_cp_unshard(layout.raw(), cp_size, cp_rank, local.as_ptr(), full.as_mut_ptr()) })
}

/// Merges `(o_other, lse_other)` into `(o, lse)` by log-sum-exp, for
/// `heads` heads of `head_dim`.
pub fn attention_merge(
    heads: usize,
    head_dim: usize,
    o: &mut [f32],
    lse: &mut [f32],
    o_other: &[f32],
    lse_other: &[f32],
) -> Result<()> {
    let mut o = ShapedTensor::of_mut(o, &[heads, head_dim], "o")?;
    let mut lse = ShapedTensor::of_mut(lse, &[heads], "lse")?;
    let o_other = ShapedTensor::of(o_other, &[heads, head_dim], "o_other")?;
    let lse_other = ShapedTensor::of(lse_other, &[heads], "lse_other")?;
    // SAFETY: every tensor describes a slice that outlives the call.
    check(unsafe {
        sys::dt_cp_attention_merge(o.as_mut_ptr(), lse.as_mut_ptr(), o_other.as_ptr(), lse_other.as_ptr())
    })
}

/// What every attention call needs besides its tensors. `scale` 0 means
/// `1 / sqrt(head_dim)`; `q_heads` must be a multiple of `kv_heads`.
#[derive(Clone, Copy, Debug)]
pub struct AttentionSpec {
    pub q_heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub causal: bool,
    pub scale: f64,
}

/// How the ranks attend over a sequence sharded between them: passing key and
/// value blocks around a ring, or exchanging heads for tokens with two
/// all-to-alls (Ulysses; both head counts divisible by the group size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharding {
    Ring,
    AllToAll,
}

/// Queries, keys and values with what the forward call made of them: the
/// inputs of [`AttentionSpec::sharded_backward`].
pub struct SavedAttention<'a> {
    pub q: &'a [f32],
    pub k: &'a [f32],
    pub v: &'a [f32],
    pub o: &'a [f32],
    pub lse: &'a [f32],
}

impl AttentionSpec {
    fn q_tail(&self) -> [usize; 2] {
        [self.q_heads, self.head_dim]
    }

    fn kv_tail(&self) -> [usize; 2] {
        [self.kv_heads, self.head_dim]
    }

    /// Attention of `q` against the block `k`, `v` into `o` and `lse`. When
    /// causal, `positions` gives the global positions of the queries and of
    /// the keys (key j visible to query i when `k[j] <= q[i]`).
    pub fn block(
        &self,
        q: &[f32],
        k: &[f32],
        v: &[f32],
        positions: Option<(&[i64], &[i64])>,
        o: &mut [f32],
        lse: &mut [f32],
    ) -> Result<()> {
        let tq = ShapedTensor::of(q, &self.q_tail(), "q")?;
        let tk = ShapedTensor::of(k, &self.kv_tail(), "k")?;
        let tv = ShapedTensor::of(v, &self.kv_tail(), "v")?;
        let at = match positions {
            Some((q_at, k_at)) => Some((
                ShapedTensor::of(q_at, &[], "q_positions")?,
                ShapedTensor::of(k_at, &[], "k_positions")?,
            )),
            None => None,
        };
        let (q_at, k_at) = at.as_ref().map_or((ptr::null(), ptr::null()), |(a, b)| (a.as_ptr(), b.as_ptr()));
        let mut to = ShapedTensor::of_mut(o, &self.q_tail(), "o")?;
        let mut tl = ShapedTensor::of_mut(lse, &[self.q_heads], "lse")?;
        // SAFETY: every tensor describes a slice that outlives the call.
        check(unsafe {
            sys::dt_cp_attention(
                tq.as_ptr(),
                tk.as_ptr(),
                tv.as_ptr(),
                q_at,
                k_at,
                c_int::from(self.causal),
                self.scale,
                to.as_mut_ptr(),
                tl.as_mut_ptr(),
            )
        })
    }

    /// Attention over a sharded sequence, forward, over `comm` (collective):
    /// this rank's shard of the sequence in `layout` against the whole
    /// sequence.
    #[allow(clippy::too_many_arguments)]
    pub fn sharded_forward(
        &self,
        sharding: Sharding,
        comm: &Comm<'_>,
        layout: CpLayout,
        q: &[f32],
        k: &[f32],
        v: &[f32],
        o: &mut [f32],
        lse: &mut [f32],
    ) -> Result<()> {
        let tq = ShapedTensor::of(q, &self.q_tail(), "q")?;
        let tk = ShapedTensor::of(k, &self.kv_tail(), "k")?;
        let tv = ShapedTensor::of(v, &self.kv_tail(), "v")?;
        let mut to = ShapedTensor::of_mut(o, &self.q_tail(), "o")?;
        let mut tl = ShapedTensor::of_mut(lse, &[self.q_heads], "lse")?;
        let call = match sharding {
            Sharding::Ring => sys::dt_cp_ring_attention_forward,
            Sharding::AllToAll => sys::dt_cp_ulysses_attention_forward,
        };
        // SAFETY: a live communicator; every tensor describes a slice that
        // outlives the (blocking) call.
        check(unsafe {
            call(
                comm.as_raw(),
                layout.raw(),
                c_int::from(self.causal),
                self.scale,
                tq.as_ptr(),
                tk.as_ptr(),
                tv.as_ptr(),
                to.as_mut_ptr(),
                tl.as_mut_ptr(),
            )
        })
    }

    /// Attention over a sharded sequence, backward, over `comm` (collective):
    /// the gradients of this rank's queries, keys and values from `d_o`,
    /// overwritten.
    #[allow(clippy::too_many_arguments)]
    pub fn sharded_backward(
        &self,
        sharding: Sharding,
        comm: &Comm<'_>,
        layout: CpLayout,
        saved: &SavedAttention<'_>,
        d_o: &[f32],
        dq: &mut [f32],
        dk: &mut [f32],
        dv: &mut [f32],
    ) -> Result<()> {
        let tq = ShapedTensor::of(saved.q, &self.q_tail(), "q")?;
        let tk = ShapedTensor::of(saved.k, &self.kv_tail(), "k")?;
        let tv = ShapedTensor::of(saved.v, &self.kv_tail(), "v")?;
        let to = ShapedTensor::of(saved.o, &self.q_tail(), "o")?;
        let tl = ShapedTensor::of(saved.lse, &[self.q_heads], "lse")?;
        let tdo = ShapedTensor::of(d_o, &self.q_tail(), "d_o")?;
        let mut tdq = ShapedTensor::of_mut(dq, &self.q_tail(), "dq")?;
        let mut tdk = ShapedTensor::of_mut(dk, &self.kv_tail(), "dk")?;
        let mut tdv = ShapedTensor::of_mut(dv, &self.kv_tail(), "dv")?;
        let call = match sharding {
            Sharding::Ring => sys::dt_cp_ring_attention_backward,
            Sharding::AllToAll => sys::dt_cp_ulysses_attention_backward,
        };
        // SAFETY: a live communicator; every tensor describes a slice that
        // outlives the (blocking) call.
        check(unsafe {
            call(
                comm.as_raw(),
                layout.raw(),
                c_int::from(self.causal),
                self.scale,
                tq.as_ptr(),
                tk.as_ptr(),
                tv.as_ptr(),
                to.as_ptr(),
                tl.as_ptr(),
                tdo.as_ptr(),
                tdq.as_mut_ptr(),
                tdk.as_mut_ptr(),
                tdv.as_mut_ptr(),
            )
        })
    }
}
