"""Expert parallelism (mixture of experts): top-k routing with a capacity
limit, the auxiliary losses, and the dispatch and combine of tokens over an ep
communicator, each with its backward pass. ``dtrain/moe.h`` states what each
call computes.

Tensors are numpy arrays or any object with ``__dlpack__`` or the buffer
protocol, in host memory or on a CUDA device (all of a call's in one place;
``counts`` of the built-in experts may stay on the host): float32 scores,
weights and tokens, int64 expert indices. Results come back as new tensors
like the call's first input: for a torch tensor, in its place
(``new_zeros``); otherwise numpy arrays::

    opts = dtrain.MoeOptions(num_experts=8, top_k=2, normalize=True)
    weights, experts, dropped = dtrain.moe_route(logits, opts)
    with dtrain.MoePlan(ep, experts, hidden, opts) as plan:
        rows = plan.dispatch(x)                 # grouped by local expert
        y = plan.combine(run_experts(rows, plan.expert_counts), weights)
"""

import enum

import numpy as np

from . import _capi
from ._arguments import _integer, _real
from ._comm import _choice
from ._handle import _Handle

#: The mesh dimensions expert parameters reduce their gradients over.
EXPERT_GRAD_DIMS = _capi.DT_MOE_EXPERT_GRAD_DIMS
#: The mesh dimensions the other parameters of an MoE model reduce over.
DENSE_GRAD_DIMS = _capi.DT_MOE_DENSE_GRAD_DIMS


class MoeScoring(enum.IntEnum):
    SOFTMAX = _capi.DT_MOE_SOFTMAX
    SIGMOID = _capi.DT_MOE_SIGMOID


class MoeDropPolicy(enum.IntEnum):
    BY_POSITION = _capi.DT_MOE_DROP_BY_POSITION
    BY_SCORE = _capi.DT_MOE_DROP_BY_SCORE


class MoeActivation(enum.IntEnum):
    GELU_TANH = _capi.DT_MOE_GELU_TANH
    GELU_ERF = _capi.DT_MOE_GELU_ERF
    SILU = _capi.DT_MOE_SILU


class MoeOptions:
    """The settings of an MoE layer; every rank of the ep communicator uses the same.

    ``capacity_factor`` > 0 limits each expert to ceil(factor * T * k / E) of
    a rank's tokens; <= 0 (the default) is dropless.
    """

    def __init__(self, num_experts, top_k, scoring=MoeScoring.SOFTMAX, normalize=False, capacity_factor=0.0,
                 drop_policy=MoeDropPolicy.BY_POSITION):
        self.num_experts = _integer(num_experts, "num_experts")
        self.top_k = _integer(top_k, "top_k")
        self.scoring = _choice(MoeScoring, scoring, "scoring")
        self.normalize = bool(normalize)
        self.capacity_factor = _real(capacity_factor, "capacity_factor")
        self.drop_policy = _choice(MoeDropPolicy, drop_policy, "drop_policy")

    def _raw(self):
        opts = _capi.dt_moe_options()
        _capi.dt_moe_options_init(opts, _capi.DT_MOE_OPTIONS_VERSION)
        opts.num_experts = self.num_experts
        opts.top_k = self.top_k
        opts.scoring = int(self.scoring)
        opts.normalize = int(self.normalize)
        opts.capacity_factor = self.capacity_factor
        opts.drop_policy = int(self.drop_policy)
        return opts

    def __repr__(self):
        return (f"MoeOptions(num_experts={self.num_experts}, top_k={self.top_k}, scoring={self.scoring.name}, "
                f"normalize={self.normalize}, capacity_factor={self.capacity_factor}, "
                f"drop_policy={self.drop_policy.name})")


def _zeros_like(x, shape, dtype=np.float32):
    """A new tensor of zeros of ``shape`` and ``dtype`` (float32 or int64) where ``x`` is."""
    shape = tuple(int(n) for n in shape)
    if hasattr(x, "new_zeros"):  # torch: its device
        import torch
        return x.new_zeros(shape, dtype=torch.int64 if dtype == np.int64 else torch.float32)
    return np.zeros(shape, dtype=dtype)


def _rows(tensor):
    """The first extent of a tensor-like object (0 for anything without one: the library refuses it)."""
    shape = _shape(tensor)
    return int(shape[0]) if len(shape) > 0 else 0


def moe_route(logits, options):
    """Routes ``logits`` [T, E]: returns (weights [T, k] float32, experts [T, k] int64 with -1 where the
    capacity dropped the pair, the number dropped)."""
    t = _rows(logits)
    weights = _zeros_like(logits, (t, options.top_k))
    experts = _zeros_like(logits, (t, options.top_k), np.int64)
    dropped = _capi.dt_moe_route(logits, options._raw(), weights, experts)
    return weights, experts, dropped


def moe_route_backward(logits, d_weights, options):
    """d loss / d logits [T, E] from d loss / d weights [T, k]."""
    d_logits = _zeros_like(logits, (_rows(logits), options.num_experts))
    _capi.dt_moe_route_backward(logits, d_weights, options._raw(), d_logits)
    return d_logits


def moe_balance_loss(logits, options, coeff=1.0, d_logits=None):
    """The Switch load-balancing loss of ``logits`` [T, E] and the tokens routed to each expert:
    returns (loss, counts [E] int64). ``coeff`` times its gradient is added to ``d_logits`` when given."""
    counts = _zeros_like(logits, (options.num_experts,), np.int64)
    loss = _capi.dt_moe_balance_loss(logits, options._raw(), _real(coeff, "coeff"), counts, d_logits)
    return loss, counts


def moe_z_loss(logits, coeff=1.0, d_logits=None):
    """The router z-loss of ``logits`` [T, E]; ``coeff`` times its gradient is added to ``d_logits`` when given."""
    return _capi.dt_moe_z_loss(logits, _real(coeff, "coeff"), d_logits)


class MoePlan(_Handle):
    """The exchange of one layer's tokens over ``ep`` (collective over it), planned from
    ``experts`` [T, k] as :func:`moe_route` returns them, for tokens of ``hidden`` elements.

    Rows arrive grouped by local expert (``expert_counts`` gives the group
    sizes), then by source rank, then by token. Ranks that disagree about E,
    k or hidden raise :class:`MismatchError`.
    """

    _noun = "MoE plan"

    def __init__(self, ep, experts, hidden, options):
        self._handle = _capi.dt_moe_plan_create(ep._live(), experts, _integer(hidden, "hidden"), options._raw())
        self._tokens = _rows(experts)
        self._k = options.top_k
        self._hidden = _integer(hidden, "hidden")

    def close(self):
        """Destroys the plan. Safe to call twice."""
        handle, self._handle = self._handle, None
        if handle is not None:
            _capi.dt_moe_plan_destroy(handle)

    @property
    def local_experts(self):
        """(the global index of this rank's first expert, how many it holds)."""
        return tuple(_capi.dt_moe_plan_local_experts(self._live()))

    @property
    def received(self):
        """The rows :meth:`dispatch` delivers to this rank."""
        return _capi.dt_moe_plan_received(self._live())

    @property
    def expert_counts(self):
        """The rows delivered for each local expert, in order."""
        return _capi.dt_moe_plan_expert_counts(self._live(), self.local_experts[1])

    def dispatch(self, tokens):
        """tokens [T, H] -> the received rows [R, H], grouped by local expert."""
        received = _zeros_like(tokens, (self.received, self._hidden))
        _capi.dt_moe_dispatch(self._live(), tokens, received)
        return received

    def combine(self, expert_out, weights):
        """The experts' outputs [R, H] back to the tokens, weighted by ``weights`` [T, k]: out [T, H]."""
        out = _zeros_like(expert_out, (self._tokens, self._hidden))
        _capi.dt_moe_combine(self._live(), expert_out, weights, out)
        return out

    def combine_backward(self, d_out, weights):
        """From d_out [T, H]: (d_expert_out [R, H], d_weights [T, k])."""
        d_expert_out = _zeros_like(d_out, (self.received, self._hidden))
        d_weights = _zeros_like(d_out, (self._tokens, self._k))
        _capi.dt_moe_combine_backward(self._live(), d_out, weights, d_expert_out, d_weights)
        return d_expert_out, d_weights

    def dispatch_backward(self, d_received):
        """d_received [R, H] back to d_tokens [T, H]."""
        d_tokens = _zeros_like(d_received, (self._tokens, self._hidden))
        _capi.dt_moe_dispatch_backward(self._live(), d_received, d_tokens)
        return d_tokens


def _shape(tensor):
    return tuple(getattr(tensor, "shape", None) or np.asarray(tensor).shape)


def _counts(counts):
    """Rows per expert as the library reads them: a torch tensor as it is, anything else as int64 numpy."""
    return counts if hasattr(counts, "new_zeros") else np.ascontiguousarray(counts, dtype=np.int64)


def moe_experts_forward(x, counts, w1, w2, activation=MoeActivation.GELU_TANH):
    """The built-in experts on rows grouped by expert: ``x`` [R, H], ``counts`` (rows per expert, L entries),
    ``w1`` [L, H, F], ``w2`` [L, F, H]. Returns (hidden [R, F], the pre-activation backward needs; y [R, H])."""
    counts = _counts(counts)
    rows, inner = _rows(x), _shape(w1)[-1]
    hidden = _zeros_like(x, (rows, inner))
    y = _zeros_like(x, (rows, _shape(x)[-1]))
    _capi.dt_moe_experts_forward(x, counts, w1, w2, _choice(MoeActivation, activation, "activation"), hidden, y)
    return hidden, y


def moe_experts_backward(x, counts, w1, w2, hidden, dy, activation=MoeActivation.GELU_TANH):
    """The experts' backward pass from ``dy`` [R, H] and the forward's ``hidden``: returns (dx, dw1, dw2)."""
    counts = _counts(counts)
    dx = _zeros_like(x, _shape(x))
    dw1 = _zeros_like(x, _shape(w1))
    dw2 = _zeros_like(x, _shape(w2))
    activation = _choice(MoeActivation, activation, "activation")
    _capi.dt_moe_experts_backward(x, counts, w1, w2, activation, hidden, dy, dx, dw1, dw2)
    return dx, dw1, dw2
