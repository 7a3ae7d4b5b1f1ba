"""Tensor parallelism over the ranks of a Comm (dtrain/tp.h): the conjugate
mappings, column- and row-parallel linear layers, the vocabulary-parallel
embedding and cross-entropy, and weight sharding.

Every function takes the tensor-parallel group's :class:`Comm` first and
tensors (numpy arrays, or anything with ``__dlpack__`` or the buffer
protocol) the caller owns; outputs are written in place. Weights are
[out, in] as ``torch.nn.Linear`` stores them. Optional tensors are None.
"""

from . import _capi
from ._arguments import _integer, _real
from ._comm import _choice
from ._constants import TpRegion as Region, TpShardKind as ShardKind  # noqa: F401 (dtrain.tp.Region)


def _flags(sequence_parallel=False, gather_output=False, accumulate=False):
    return ((_capi.DT_TP_SEQUENCE_PARALLEL if sequence_parallel else 0)
            | (_capi.DT_TP_GATHER_OUTPUT if gather_output else 0)
            | (_capi.DT_TP_ACCUMULATE if accumulate else 0))


def region_forward(tp, region, x, out):
    """The forward half of ``region`` ("copy", "reduce", "scatter", "gather", "seq_gather", "seq_reduce_scatter")."""
    _capi.dt_tp_region_forward(tp._live(), _choice(Region, region, "region"), x, out)
    return out


def region_backward(tp, region, grad_out, grad_in):
    """The backward half of ``region``: grad_out -> grad_in."""
    _capi.dt_tp_region_backward(tp._live(), _choice(Region, region, "region"), grad_out, grad_in)
    return grad_in


def column_linear_forward(tp, x, weight, bias, y, sequence_parallel=False, gather_output=False):
    """y = x weight^T + bias with this rank's rows of the weight (see dtrain/tp.h)."""
    _capi.dt_tp_column_linear_forward(tp._live(), x, weight, bias, y, _flags(sequence_parallel, gather_output))
    return y


def column_linear_backward(tp, x, weight, dy, dx, dweight, dbias=None, sequence_parallel=False,
                           gather_output=False, accumulate=False):
    """Gradients of :func:`column_linear_forward`; dx is reduced over the group."""
    _capi.dt_tp_column_linear_backward(tp._live(), x, weight, dy, dx, dweight, dbias,
                                       _flags(sequence_parallel, gather_output, accumulate))


def row_linear_forward(tp, x, weight, bias, y, sequence_parallel=False):
    """y = sum over ranks of x weight^T, plus bias once (see dtrain/tp.h)."""
    _capi.dt_tp_row_linear_forward(tp._live(), x, weight, bias, y, _flags(sequence_parallel))
    return y


def row_linear_backward(tp, x, weight, dy, dx, dweight, dbias=None, sequence_parallel=False, accumulate=False):
    """Gradients of :func:`row_linear_forward`."""
    _capi.dt_tp_row_linear_backward(tp._live(), x, weight, dy, dx, dweight, dbias,
                                    _flags(sequence_parallel, accumulate=accumulate))


def embedding_forward(tp, table, ids, out, sequence_parallel=False):
    """Rows of the vocabulary-parallel ``table`` for ``ids``, summed over the group."""
    _capi.dt_tp_embedding_forward(tp._live(), table, ids, out, _flags(sequence_parallel))
    return out


def embedding_backward(tp, ids, dout, dtable, sequence_parallel=False, accumulate=False):
    """This rank's table gradient: the rows of dout summed per id it holds."""
    _capi.dt_tp_embedding_backward(tp._live(), ids, dout, dtable,
                                   _flags(sequence_parallel, accumulate=accumulate))
    return dtable


def cross_entropy_forward(tp, logits, targets, loss, lse, label_smoothing=0.0, ignore_index=-100):
    """Per-row loss and log-sum-exp of logits split by vocabulary over the group."""
    _capi.dt_tp_cross_entropy_forward(tp._live(), logits, targets, loss, lse,
                                      _real(label_smoothing, "label_smoothing"),
                                      _integer(ignore_index, "ignore_index"))
    return loss


def cross_entropy_backward(tp, logits, targets, lse, dloss, dlogits, label_smoothing=0.0, ignore_index=-100):
    """This rank's gradient of the logits (local: communicates nothing)."""
    _capi.dt_tp_cross_entropy_backward(tp._live(), logits, targets, lse, dloss, dlogits,
                                       _real(label_smoothing, "label_smoothing"),
                                       _integer(ignore_index, "ignore_index"))
    return dlogits


def shard(kind, full, local, rank, size, q_heads=0, kv_heads=0):
    """Copies rank ``rank``'s shard of ``full`` into ``local`` (no communication)."""
    _capi.dt_tp_shard(_choice(ShardKind, kind, "kind"), full, local, _integer(rank, "rank"),
                      _integer(size, "size"), _integer(q_heads, "q_heads"), _integer(kv_heads, "kv_heads"))
    return local


def unshard(tp, kind, local, full, q_heads=0, kv_heads=0):
    """Gathers every rank's ``local`` shard into ``full`` (collective)."""
    _capi.dt_tp_unshard(tp._live(), _choice(ShardKind, kind, "kind"), local, full,
                        _integer(q_heads, "q_heads"), _integer(kv_heads, "kv_heads"))
    return full
