"""Context parallelism: blockwise attention, the merge of partial results,
sequence layouts, and ring and all-to-all (Ulysses) attention over a
communicator (dtrain/cp.h).

Tensors have one row per token: queries and outputs ``[seq, q_heads,
head_dim]``, keys and values ``[seq, kv_heads, head_dim]`` (``q_heads`` a
multiple of ``kv_heads``), log-sum-exps ``[seq, q_heads]``. The attention
calls take float32, float16 or bfloat16 data (log-sum-exps are float32) in
host memory or on a CUDA device; the layout helpers take host memory.
Inputs may be numpy arrays or any object with ``__dlpack__`` or the buffer
protocol. Outputs not given are new tensors like ``q``: for a torch tensor,
in its place and dtype (``new_empty``); otherwise numpy arrays of its dtype.
``scale`` 0 means ``1 / sqrt(head_dim)``.
"""

import enum

import numpy as np

from . import _capi
from ._arguments import _integer, _real
from ._constants import Status
from ._errors import InvalidArgumentError


class CpLayout(enum.IntEnum):
    """How a sequence is split between the ranks of a context-parallel group."""
    CONTIGUOUS = _capi.DT_CP_CONTIGUOUS
    ZIGZAG = _capi.DT_CP_ZIGZAG


def _layout(layout):
    if isinstance(layout, str):
        try:
            return CpLayout[layout.upper()]
        except KeyError:
            raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                       f"layout: unknown layout {layout!r}; 'contiguous' or 'zigzag'") from None
    return _integer(layout, "layout")


def _group(cp_size, cp_rank):
    return _integer(cp_size, "cp_size"), _integer(cp_rank, "cp_rank")


def _new(shape, dtype=np.float32):
    return np.empty(tuple(_integer(n, "shape") for n in shape), dtype=dtype)


def _like(x, shape, lse=False):
    """A new tensor of ``shape`` where and of what ``x`` is (float32 for a log-sum-exp)."""
    shape = tuple(_integer(n, "shape") for n in shape)
    if hasattr(x, "new_empty"):  # torch: its device and dtype
        import torch
        return x.new_empty(shape, dtype=torch.float32) if lse else x.new_empty(shape)
    return np.empty(shape, dtype=np.float32 if lse else np.asarray(x).dtype)


def cp_positions(local_len, cp_size, cp_rank, layout="zigzag"):
    """The global positions (int64) of the ``local_len`` tokens rank ``cp_rank`` holds."""
    positions = _new([local_len], np.int64)
    _capi.dt_cp_positions(_layout(layout), *_group(cp_size, cp_rank), positions)
    return positions


def cp_shard(full, cp_size, cp_rank, layout="zigzag", out=None):
    """The rows of ``full`` (the whole sequence first) that rank ``cp_rank`` holds, in local order."""
    cp_size, cp_rank = _group(cp_size, cp_rank)
    if out is None:
        out = np.empty((full.shape[0] // cp_size,) + tuple(full.shape[1:]), dtype=np.asarray(full).dtype)
    _capi.dt_cp_shard(_layout(layout), cp_size, cp_rank, full, out)
    return out


def cp_unshard(local, full, cp_size, cp_rank, layout="zigzag"):
    """Writes rank ``cp_rank``'s rows ``local`` to their places in ``full``; other rows are untouched."""
    _capi.dt_cp_unshard(_layout(layout), *_group(cp_size, cp_rank), local, full)
    return full


def attention(q, k, v, q_positions=None, k_positions=None, causal=False, scale=0.0, o=None, lse=None):
    """Attention of ``q`` against one block ``k``, ``v``: returns ``(o, lse)``.

    With ``causal``, key j is visible to query i when ``k_positions[j] <= q_positions[i]``
    (int64 global positions, required then). A query that sees no key gets
    ``o = 0`` and ``lse = -inf``.
    """
    o = _like(q, q.shape) if o is None else o
    lse = _like(q, q.shape[:2], lse=True) if lse is None else lse
    _capi.dt_cp_attention(q, k, v, q_positions, k_positions, int(bool(causal)), _real(scale, "scale"), o, lse)
    return o, lse


def attention_merge(o, lse, o_other, lse_other):
    """Merges ``(o_other, lse_other)`` into ``(o, lse)`` in place by log-sum-exp; returns ``(o, lse)``."""
    _capi.dt_cp_attention_merge(o, lse, o_other, lse_other)
    return o, lse


def _sharded_forward(call, comm, q, k, v, causal, scale, layout, o, lse):
    o = _like(q, q.shape) if o is None else o
    lse = _like(q, q.shape[:2], lse=True) if lse is None else lse
    call(comm._live(), _layout(layout), int(bool(causal)), _real(scale, "scale"), q, k, v, o, lse)
    return o, lse


def _sharded_backward(call, comm, q, k, v, o, lse, d_o, causal, scale, layout, dq, dk, dv):
    dq = _like(q, q.shape) if dq is None else dq
    dk = _like(k, k.shape) if dk is None else dk
    dv = _like(v, v.shape) if dv is None else dv
    call(comm._live(), _layout(layout), int(bool(causal)), _real(scale, "scale"), q, k, v, o, lse, d_o, dq, dk, dv)
    return dq, dk, dv


def ring_attention_forward(comm, q, k, v, causal=False, scale=0.0, layout="zigzag", o=None, lse=None):
    """Ring attention over ``comm`` (collective): this rank's shard of the
    sequence in ``layout`` against the whole sequence; returns ``(o, lse)``."""
    return _sharded_forward(_capi.dt_cp_ring_attention_forward, comm, q, k, v, causal, scale, layout, o, lse)


def ring_attention_backward(comm, q, k, v, o, lse, d_o, causal=False, scale=0.0, layout="zigzag", dq=None,
                            dk=None, dv=None):
    """The gradients ``(dq, dk, dv)`` of this rank's shard from ``d_o`` and what
    :func:`ring_attention_forward` took and returned (collective over ``comm``)."""
    return _sharded_backward(_capi.dt_cp_ring_attention_backward, comm, q, k, v, o, lse, d_o, causal, scale,
                             layout, dq, dk, dv)


def ulysses_attention_forward(comm, q, k, v, causal=False, scale=0.0, layout="zigzag", o=None, lse=None):
    """All-to-all (Ulysses) attention: what :func:`ring_attention_forward`
    computes, through two all-to-alls; both head counts divisible by the size of ``comm``."""
    return _sharded_forward(_capi.dt_cp_ulysses_attention_forward, comm, q, k, v, causal, scale, layout, o, lse)


def ulysses_attention_backward(comm, q, k, v, o, lse, d_o, causal=False, scale=0.0, layout="zigzag", dq=None,
                               dk=None, dv=None):
    """The gradients ``(dq, dk, dv)`` of :func:`ulysses_attention_forward`, as
    :func:`ring_attention_backward` gives them."""
    return _sharded_backward(_capi.dt_cp_ulysses_attention_backward, comm, q, k, v, o, lse, d_o, causal, scale,
                             layout, dq, dk, dv)
