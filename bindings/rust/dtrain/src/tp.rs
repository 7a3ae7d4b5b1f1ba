//! Tensor parallelism (`dtrain/tp.h`): the conjugate mappings, column- and
//! row-parallel linear layers, the vocabulary-parallel embedding and
//! cross-entropy, and weight sharding, over the tensor-parallel group's
//! [`Comm`]. Tensors are row-major [`Matrix`] views of slices; weights are
//! `[out, in]` as PyTorch stores them.

use std::ptr;

use dtrain_sys as sys;

use crate::comm::Comm;
use crate::element::Element;
use crate::error::{check, Error, Result, Status};
use crate::tensor::RawTensor;

/// A slice read as `rows x cols` (`cols` the last dimension).
#[derive(Clone, Copy)]
pub struct Matrix<'a, T> {
    data: &'a [T],
    cols: usize,
}

/// A slice written as `rows x cols`.
pub struct MatrixMut<'a, T> {
    data: &'a mut [T],
    cols: usize,
}

fn rows_of(len: usize, cols: usize) -> Result<usize> {
    if cols == 0 || len % cols != 0 {
        return Err(Error::new(
            Status::InvalidArgument,
            format!("{len} elements are not rows of {cols} columns"),
        ));
    }
    Ok(len / cols)
}

impl<'a, T: Element> Matrix<'a, T> {
    /// `data` as rows of `cols` elements; its length must divide by `cols`.
    pub fn new(data: &'a [T], cols: usize) -> Result<Matrix<'a, T>> {
        rows_of(data.len(), cols)?;
        Ok(Matrix { data, cols })
    }

    fn raw(&self) -> RawTensor {
        RawTensor::of(self.data).as_matrix(self.data.len() / self.cols, self.cols)
    }
}

impl<'a, T: Element> MatrixMut<'a, T> {
    /// `data` as rows of `cols` elements; its length must divide by `cols`.
    pub fn new(data: &'a mut [T], cols: usize) -> Result<MatrixMut<'a, T>> {
        rows_of(data.len(), cols)?;
        Ok(MatrixMut { data, cols })
    }

    fn raw(&mut self) -> RawTensor {
        let rows = self.data.len() / self.cols;
        RawTensor::of_mut(self.data).as_matrix(rows, self.cols)
    }
}

/// The flags of the linear layers and the embedding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TpFlags {
    /// Activations outside the layer are split by rows over the group.
    pub sequence_parallel: bool,
    /// Column-parallel: gather the output to all features.
    pub gather_output: bool,
    /// Backward adds into the weight, bias and table gradients.
    pub accumulate: bool,
}

impl TpFlags {
    fn raw(self) -> u32 {
        (if self.sequence_parallel { sys::DT_TP_SEQUENCE_PARALLEL } else { 0 })
            | (if self.gather_output { sys::DT_TP_GATHER_OUTPUT } else { 0 })
            | (if self.accumulate { sys::DT_TP_ACCUMULATE } else { 0 })
    }
}

/// The conjugate mappings (`dt_tp_region`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Region {
    Copy = sys::DT_TP_COPY,
    Reduce = sys::DT_TP_REDUCE,
    Scatter = sys::DT_TP_SCATTER,
    Gather = sys::DT_TP_GATHER,
    SeqGather = sys::DT_TP_SEQ_GATHER,
    SeqReduceScatter = sys::DT_TP_SEQ_REDUCE_SCATTER,
}

/// How a full weight is split (`dt_tp_shard_kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum ShardKind {
    Rows = sys::DT_TP_SHARD_ROWS,
    Columns = sys::DT_TP_SHARD_COLUMNS,
    /// A fused query-key-value weight with these head counts.
    Qkv = sys::DT_TP_SHARD_QKV,
}

fn optional<T: Element>(slice: Option<&[T]>) -> Option<RawTensor> {
    slice.map(RawTensor::of)
}

fn optional_mut<T: Element>(slice: Option<&mut [T]>) -> Option<RawTensor> {
    slice.map(RawTensor::of_mut)
}

fn ptr_of(raw: &Option<RawTensor>) -> *const sys::DLTensor {
    raw.as_ref().map_or(ptr::null(), RawTensor::as_ptr)
}

fn mut_ptr_of(raw: &mut Option<RawTensor>) -> *mut sys::DLTensor {
    raw.as_mut().map_or(ptr::null_mut(), RawTensor::as_mut_ptr)
}

/// The forward half of `region`: `input` -> `output`.
pub fn region_forward<T: Element>(tp: &Comm<'_>, region: Region, input: Matrix<'_, T>, mut output: MatrixMut<'_, T>) -> Result<()> {
    let (i, mut o) = (input.raw(), output.raw());
    // SAFETY: live communicator; descriptors valid for the call.
    check(unsafe { sys::dt_tp_region_forward(tp.as_raw(), region as u32, i.as_ptr(), o.as_mut_ptr()) })
}

/// The backward half of `region`: `grad_out` -> `grad_in`.
pub fn region_backward<T: Element>(tp: &Comm<'_>, region: Region, grad_out: Matrix<'_, T>, mut grad_in: MatrixMut<'_, T>) -> Result<()> {
    let (g, mut i) = (grad_out.raw(), grad_in.raw());
    // SAFETY: as above.
    check(unsafe { sys::dt_tp_region_backward(tp.as_raw(), region as u32, g.as_ptr(), i.as_mut_ptr()) })
}

/// The C entry points of the column- and row-parallel layers, which share
/// their arguments: one wrapper body each for forward and backward.
type RawForward = unsafe extern "C" fn(
    *mut sys::dt_comm, *const sys::DLTensor, *const sys::DLTensor, *const sys::DLTensor, *mut sys::DLTensor, u32,
) -> sys::dt_status;
type RawBackward = unsafe extern "C" fn(
    *mut sys::dt_comm, *const sys::DLTensor, *const sys::DLTensor, *const sys::DLTensor, *mut sys::DLTensor,
    *mut sys::DLTensor, *mut sys::DLTensor, u32,
) -> sys::dt_status;

fn linear_forward<T: Element>(
    raw: RawForward,
    tp: &Comm<'_>,
    x: Matrix<'_, T>,
    weight: Matrix<'_, T>,
    bias: Option<&[T]>,
    mut y: MatrixMut<'_, T>,
    flags: TpFlags,
) -> Result<()> {
    let (x, w, b, mut y) = (x.raw(), weight.raw(), optional(bias), y.raw());
    // SAFETY: live communicator; descriptors valid for the call; a missing bias is NULL.
    check(unsafe { raw(tp.as_raw(), x.as_ptr(), w.as_ptr(), ptr_of(&b), y.as_mut_ptr(), flags.raw()) })
}

#[allow(clippy::too_many_arguments)]
fn linear_backward<T: Element>(
    raw: RawBackward,
    tp: &Comm<'_>,
    x: Matrix<'_, T>,
    weight: Matrix<'_, T>,
    dy: Matrix<'_, T>,
    dx: Option<MatrixMut<'_, T>>,
    dweight: Option<MatrixMut<'_, T>>,
    dbias: Option<&mut [T]>,
    flags: TpFlags,
) -> Result<()> {
    let (x, w, dy) = (x.raw(), weight.raw(), dy.raw());
    let mut dx = dx.map(|mut m| m.raw());
    let mut dw = dweight.map(|mut m| m.raw());
    let mut db = optional_mut(dbias);
    // SAFETY: as above; a missing dx, dweight or dbias is NULL.
    check(unsafe {
        raw(
            tp.as_raw(), x.as_ptr(), w.as_ptr(), dy.as_ptr(), mut_ptr_of(&mut dx), mut_ptr_of(&mut dw),
            mut_ptr_of(&mut db), flags.raw(),
        )
    })
}

/// Column-parallel linear: `y = x W_r^T + b_r` with this rank's rows of the weight.
pub fn column_linear_forward<T: Element>(
    tp: &Comm<'_>,
    x: Matrix<'_, T>,
    weight: Matrix<'_, T>,
    bias: Option<&[T]>,
    y: MatrixMut<'_, T>,
    flags: TpFlags,
) -> Result<()> {
    linear_forward(sys::dt_tp_column_linear_forward, tp, x, weight, bias, y, flags)
}

/// Backward of [`column_linear_forward`]; `dx`, `dweight` and `dbias` are optional (a
/// zero-bubble schedule passes `dweight` `None` for the input gradient, then `dx` `None`).
#[allow(clippy::too_many_arguments)]
pub fn column_linear_backward<T: Element>(
    tp: &Comm<'_>,
    x: Matrix<'_, T>,
    weight: Matrix<'_, T>,
    dy: Matrix<'_, T>,
    dx: Option<MatrixMut<'_, T>>,
    dweight: Option<MatrixMut<'_, T>>,
    dbias: Option<&mut [T]>,
    flags: TpFlags,
) -> Result<()> {
    linear_backward(sys::dt_tp_column_linear_backward, tp, x, weight, dy, dx, dweight, dbias, flags)
}

/// Row-parallel linear: `y = sum_r x_r W_r^T + b`.
pub fn row_linear_forward<T: Element>(
    tp: &Comm<'_>,
    x: Matrix<'_, T>,
    weight: Matrix<'_, T>,
    bias: Option<&[T]>,
    y: MatrixMut<'_, T>,
    flags: TpFlags,
) -> Result<()> {
    linear_forward(sys::dt_tp_row_linear_forward, tp, x, weight, bias, y, flags)
}

/// Backward of [`row_linear_forward`]; `dx`, `dweight` and `dbias` are optional.
#[allow(clippy::too_many_arguments)]
pub fn row_linear_backward<T: Element>(
    tp: &Comm<'_>,
    x: Matrix<'_, T>,
    weight: Matrix<'_, T>,
    dy: Matrix<'_, T>,
    dx: Option<MatrixMut<'_, T>>,
    dweight: Option<MatrixMut<'_, T>>,
    dbias: Option<&mut [T]>,
    flags: TpFlags,
) -> Result<()> {
    linear_backward(sys::dt_tp_row_linear_backward, tp, x, weight, dy, dx, dweight, dbias, flags)
}

/// Vocabulary-parallel embedding of `ids` from this rank's rows of the table.
pub fn embedding_forward(tp: &Comm<'_>, table: Matrix<'_, f32>, ids: &[i64], mut output: MatrixMut<'_, f32>, flags: TpFlags) -> Result<()> {
    let (t, i, mut o) = (table.raw(), RawTensor::of(ids), output.raw());
    // SAFETY: as above.
    check(unsafe { sys::dt_tp_embedding_forward(tp.as_raw(), t.as_ptr(), i.as_ptr(), o.as_mut_ptr(), flags.raw()) })
}

/// Backward of [`embedding_forward`] into this rank's table gradient.
pub fn embedding_backward(tp: &Comm<'_>, ids: &[i64], dout: Matrix<'_, f32>, mut dtable: MatrixMut<'_, f32>, flags: TpFlags) -> Result<()> {
    let (i, d, mut t) = (RawTensor::of(ids), dout.raw(), dtable.raw());
    // SAFETY: as above.
    check(unsafe { sys::dt_tp_embedding_backward(tp.as_raw(), i.as_ptr(), d.as_ptr(), t.as_mut_ptr(), flags.raw()) })
}

/// Vocabulary-parallel cross-entropy: per-row `loss` and `lse`.
pub fn cross_entropy_forward(
    tp: &Comm<'_>,
    logits: Matrix<'_, f32>,
    targets: &[i64],
    loss: &mut [f32],
    lse: &mut [f32],
    label_smoothing: f32,
    ignore_index: i64,
) -> Result<()> {
    let (z, t, mut l, mut s) = (logits.raw(), RawTensor::of(targets), RawTensor::of_mut(loss), RawTensor::of_mut(lse));
    // SAFETY: as above.
    check(unsafe {
        sys::dt_tp_cross_entropy_forward(
            tp.as_raw(), z.as_ptr(), t.as_ptr(), l.as_mut_ptr(), s.as_mut_ptr(), label_smoothing, ignore_index,
        )
    })
}

/// Backward of [`cross_entropy_forward`]: this rank's `dlogits` (local).
#[allow(clippy::too_many_arguments)]
pub fn cross_entropy_backward(
    tp: &Comm<'_>,
    logits: Matrix<'_, f32>,
    targets: &[i64],
    lse: &[f32],
    dloss: &[f32],
    mut dlogits: MatrixMut<'_, f32>,
    label_smoothing: f32,
    ignore_index: i64,
) -> Result<()> {
    let (z, t, s, dl, mut dz) =
        (logits.raw(), RawTensor::of(targets), RawTensor::of(lse), RawTensor::of(dloss), dlogits.raw());
    // SAFETY: as above.
    check(unsafe {
        sys::dt_tp_cross_entropy_backward(
            tp.as_raw(), z.as_ptr(), t.as_ptr(), s.as_ptr(), dl.as_ptr(), dz.as_mut_ptr(), label_smoothing,
            ignore_index,
        )
    })
}

/// Copies rank `rank`'s shard of `full` into `local` (no communication).
/// `heads` is `(q_heads, kv_heads)` for [`ShardKind::Qkv`].
pub fn shard<T: Element>(kind: ShardKind, full: Matrix<'_, T>, mut local: MatrixMut<'_, T>, rank: i32, size: i32, heads: (i32, i32)) -> Result<()> {
    let (f, mut l) = (full.raw(), local.raw());
    // SAFETY: descriptors valid for the call.
    check(unsafe { sys::dt_tp_shard(kind as u32, f.as_ptr(), l.as_mut_ptr(), rank, size, heads.0, heads.1) })
}

/// Gathers every rank's `local` shard into `full` (collective over `tp`).
pub fn unshard<T: Element>(tp: &Comm<'_>, kind: ShardKind, local: Matrix<'_, T>, mut full: MatrixMut<'_, T>, heads: (i32, i32)) -> Result<()> {
    let (l, mut f) = (local.raw(), full.raw());
    // SAFETY: live communicator; descriptors valid for the call.
    check(unsafe { sys::dt_tp_unshard(tp.as_raw(), kind as u32, l.as_ptr(), f.as_mut_ptr(), heads.0, heads.1) })
}
