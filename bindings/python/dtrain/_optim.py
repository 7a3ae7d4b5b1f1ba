"""Optimizers: SGD and AdamW over the trainer's parameter and gradient arrays."""

import collections

from . import _capi
from ._arguments import _integer, _real
from ._constants import OptimizerKind, Status
from ._handle import _Handle
from ._errors import InvalidArgumentError

#: What one :meth:`Optimizer.step` did.
#:   skipped     a gradient held inf or NaN: nothing was updated
#:   grad_norm   the global L2 norm of the unscaled gradients, before clipping
#:   step        steps applied so far (skipped ones do not count)
#:   loss_scale  what to multiply the next loss by
StepInfo = collections.namedtuple("StepInfo", ["skipped", "grad_norm", "step", "loss_scale"])

# Keyword arguments that map one to one onto dt_optimizer_options fields.
_FIELDS = ("lr", "weight_decay", "momentum", "dampening", "eps", "loss_scale", "growth_factor",
           "backoff_factor")


class Optimizer(_Handle):
    """An optimizer that updates ``params`` in place from ``grads``.

    ``params`` and ``grads`` are sequences of arrays of equal length, each
    gradient with its parameter's shape and dtype (float32, float16, or
    bfloat16 through ``__dlpack__``): numpy arrays or anything else with
    ``__dlpack__`` or the writable buffer protocol. The optimizer writes into
    them, so they must stay where they are: it holds them until ``close()``.

    ``kind`` is "sgd" or "adamw". Every other argument left as None takes the
    library's default (see dtrain/optim.h): ``lr`` (1e-3), ``weight_decay``
    (SGD: L2, AdamW: decoupled), SGD's ``momentum``, ``dampening`` and
    ``nesterov``, AdamW's ``betas`` and ``eps``; ``max_grad_norm`` clips the
    global gradient norm; ``loss_scale`` is the factor the gradients arrive
    multiplied by, adjusted after every step when ``dynamic_loss_scale`` is
    true (``growth_factor``, ``backoff_factor``, ``growth_interval``). With a
    ``comm``, the arrays are this rank's shard of a sharded model and the
    gradient norm is summed over the communicator's ranks; every rank must
    then step together.

    float16 and bfloat16 parameters get float32 master weights. A step whose
    gradients hold inf or NaN is skipped. ``close()`` frees the optimizer; it
    is also a context manager.
    """

    _noun = "optimizer"

    def __init__(self, params, grads, kind="adamw", lr=None, *, weight_decay=None, momentum=None,
                 dampening=None, nesterov=None, betas=None, eps=None, max_grad_norm=None,
                 loss_scale=None, dynamic_loss_scale=None, growth_factor=None, backoff_factor=None,
                 growth_interval=None, comm=None):
        params, grads = list(params), list(grads)
        if len(params) != len(grads):
            raise InvalidArgumentError(
                Status.ERR_INVALID_ARGUMENT,
                f"grads: {len(grads)} gradients for {len(params)} parameters")
        opts = _options(kind, lr, weight_decay=weight_decay, momentum=momentum, dampening=dampening,
                        nesterov=nesterov, betas=betas, eps=eps, max_grad_norm=max_grad_norm,
                        loss_scale=loss_scale, dynamic_loss_scale=dynamic_loss_scale,
                        growth_factor=growth_factor, backoff_factor=backoff_factor,
                        growth_interval=growth_interval)
        if comm is not None:
            opts.comm = comm._live()

        self._handle = None
        self._comm = comm
        self._tensors = []
        try:
            for i, (p, g) in enumerate(zip(params, grads)):
                self._tensors.append((_capi.Tensor(p, True, f"params[{i}]"),
                                      _capi.Tensor(g, True, f"grads[{i}]")))
            self._handle = _capi.dt_optimizer_create(self._tensors, opts)
        except BaseException:
            self._release()
            raise

    def step(self):
        """Takes one step and returns its :data:`StepInfo`."""
        info = _capi.dt_optimizer_step(self._live())
        return StepInfo(bool(info.skipped), info.grad_norm, info.step, info.loss_scale)

    def zero_grad(self):
        """Sets every gradient to zero."""
        _capi.dt_optimizer_zero_grad(self._live())

    @property
    def lr(self):
        """The learning rate; setting it applies to the next steps."""
        return _capi.dt_optimizer_lr(self._live())

    @lr.setter
    def lr(self, value):
        _capi.dt_optimizer_set_lr(self._live(), _real(value, "lr"))

    @property
    def loss_scale(self):
        """What to multiply the next loss by (1.0 without loss scaling)."""
        return _capi.dt_optimizer_loss_scale(self._live())

    def close(self):
        """Frees the optimizer and gives the arrays back. Safe to call twice."""
        handle, self._handle = self._handle, None
        try:
            if handle is not None:
                _capi.dt_optimizer_destroy(handle)
        finally:
            self._release()

    def __repr__(self):
        if self._handle is None:
            return "<dtrain.Optimizer closed>"
        return f"<dtrain.Optimizer over {len(self._tensors)} tensors, lr {self.lr:g}>"

    def _release(self):
        tensors, self._tensors = self._tensors, []
        for pair in tensors:
            for tensor in pair:
                tensor.release()
        self._comm = None


def _options(kind="adamw", lr=None, *, weight_decay=None, momentum=None, dampening=None, nesterov=None,
             betas=None, eps=None, max_grad_norm=None, loss_scale=None, dynamic_loss_scale=None,
             growth_factor=None, backoff_factor=None, growth_interval=None):
    """A dt_optimizer_options with the library's defaults where an argument is None
    (shared by Optimizer and Zero, which take the same keyword arguments)."""
    opts = _capi.dt_optimizer_options()
    _capi.dt_optimizer_options_init(opts, _capi.DT_OPTIMIZER_OPTIONS_VERSION)
    opts.kind = _kind(kind)
    given = dict(lr=lr, weight_decay=weight_decay, momentum=momentum, dampening=dampening, eps=eps,
                 loss_scale=loss_scale, growth_factor=growth_factor, backoff_factor=backoff_factor)
    for field in _FIELDS:
        if given[field] is not None:
            setattr(opts, field, _real(given[field], field))
    if betas is not None:
        opts.beta1, opts.beta2 = (_real(b, "betas") for b in betas)
    if max_grad_norm is not None:
        opts.max_grad_norm = _real(max_grad_norm, "max_grad_norm")
    if nesterov is not None:
        opts.nesterov = int(bool(nesterov))
    if dynamic_loss_scale is not None:
        opts.dynamic_loss_scale = int(bool(dynamic_loss_scale))
    if growth_interval is not None:
        opts.growth_interval = _integer(growth_interval, "growth_interval")
    return opts


def _kind(value):
    try:
        return OptimizerKind[value.upper()] if isinstance(value, str) else OptimizerKind(value)
    except (KeyError, ValueError):
        names = ", ".join(repr(k.name.lower()) for k in OptimizerKind)
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                   f"kind: {value!r} is not one of {names}") from None
