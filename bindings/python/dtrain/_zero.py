"""ZeRO stages 0-3 (stage 3 is FSDP): parameters, gradients and optimizer state sharded over the ranks."""

import collections.abc
import contextlib
import ctypes
import dataclasses
import math
import os

import numpy as np

from . import _capi
from ._comm import _stream
from ._constants import Status
from ._ddp import _Refusal, _index, _int64, _sync_off
from ._device_array import DeviceArray
from ._errors import InternalError, InvalidArgumentError
from ._handle import _Handle
from ._optim import StepInfo, _options
from ._arguments import _integer

try:  # numpy has no bfloat16 of its own; ml_dtypes brings one where installed.
    from ml_dtypes import bfloat16 as _bfloat16
except ImportError:
    _bfloat16 = None

_KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST = 1, 2, 3
_KDL_FLOAT, _KDL_BFLOAT = 2, 4

# The keyword arguments Zero passes on to the optimizer (those of dtrain.Optimizer).
_OPTIMIZER_KEYS = frozenset({
    "kind", "lr", "weight_decay", "momentum", "dampening", "nesterov", "betas", "eps", "max_grad_norm",
    "loss_scale", "dynamic_loss_scale", "growth_factor", "backoff_factor", "growth_interval"})


@dataclasses.dataclass(frozen=True)
class ZeroMemory:
    """The bytes one rank of a :class:`Zero` holds, by purpose (``dt_zero_memory``).

    ``padding`` (elements added to make units divisible by the number of
    ranks) is already counted in the other figures; ``total`` is the sum of
    the five purposes and ``peak`` the largest total since creation.
    """
    parameters: int
    gradients: int
    optimizer_state: int
    master_weights: int
    communication: int
    padding: int
    peak: int

    @property
    def total(self):
        return (self.parameters + self.gradients + self.optimizer_state + self.master_weights
                + self.communication)

    @classmethod
    def _from_c(cls, m):
        """The figures of a dt_zero_memory the library filled."""
        return cls(m.parameters, m.gradients, m.optimizer_state, m.master_weights, m.communication,
                   m.padding, m.peak)


class Zero(_Handle):
    """Trains ``params`` with an optimizer over the ranks of ``comm``, sharding by ZeRO ``stage``.

    The Zero owns the model's parameters and gradients: ``params`` (numpy
    arrays, torch tensors or anything with ``__dlpack__`` or the buffer
    protocol; all float32, all float16 or all bfloat16) are only read here,
    and rank 0's values become every rank's. What each rank keeps (see
    dtrain/zero.h):

    - stage 0: everything, like DDP plus an optimizer;
    - stage 1: full parameters and gradients, 1/N of the optimizer state;
    - stage 2: full parameters, 1/N of the gradients and optimizer state;
    - stage 3 (FSDP): 1/N of everything; a unit's full parameters exist only
      between :meth:`gather` and :meth:`release`.

    Parameters are grouped into units, contiguous runs in registration
    (forward) order: ``unit_sizes`` (parameters per unit, e.g. one unit per
    layer, in any stage) or by default one per parameter in stage 3 and
    buckets of about ``bucket_bytes`` (25 MiB by default) in stages 0-2. ``prefetch`` (stage 3) starts
    the next unit's gather with each :meth:`gather`.

    ``optimizer`` is the optimizer kind ("adamw", the default, or "sgd") or a
    dict of :class:`dtrain.Optimizer` keyword arguments; those arguments may
    also be given directly (``lr=0.1``, ``betas=(0.9, 0.95)``, ...). A step::

        for u in range(z.unit_count):            # forward
            with z.unit(u):
                ...use z.parameter(i) for the unit's parameters...
        for u in reversed(range(z.unit_count)):  # backward
            with z.unit(u):
                for i in ...the unit's parameters, last first...:
                    z.gradient(i)[...] += ...
                    z.mark_ready(i)
        z.wait()
        info = z.step()

    The same loop runs unchanged on every stage: in stages 0-2 gathering and
    releasing return at once.

    With tensor or pipeline parallelism, ``comm`` holds the replicas of this
    rank's part of the model and ``model_comm`` the ranks holding its other
    parts (the mesh's tp x pp group); :meth:`step` clips by the whole
    model's gradient norm, summed over both. ``norm_excluded`` lists the
    parameters this rank leaves out of that norm because a rank of
    ``model_comm`` counts the same gradient (a layer norm's weight on every
    tensor-parallel rank but the first); they are still clipped and updated
    (dtrain/zero.h, "With tensor or pipeline parallelism").

    CUDA: when ``params`` are CUDA tensors (torch, cupy) on the communicator's
    device, the Zero keeps everything on that device, and :meth:`parameter`
    and :meth:`gradient` return :class:`dtrain.DeviceArray` objects, which
    ``torch.from_dlpack`` (or cupy's) turns into tensors over the same memory.
    ``stream`` is the stream the trainer reads parameters and writes
    gradients on (None: the legacy default stream; a torch or cupy stream
    object, or a DLPack stream number): work queued there after
    :meth:`gradient` sees the zeroed buffer, a unit's reduction reads its
    gradients after the work queued there when its last gradient is marked,
    and :meth:`gather_wait`, :meth:`wait` and :meth:`step` return with their
    results in place for any stream (dtrain/zero.h, "CUDA streams"). Creation, :meth:`wait`, :meth:`step`,
    :meth:`save`, :meth:`load` and gathers are collective: every rank calls
    them in the same order, with the same parameter shapes and options (or
    every rank raises :class:`dtrain.MismatchError`). ``close()`` frees the
    Zero; it is also a context manager.
    """

    _noun = "Zero"

    def __init__(self, comm, params, optimizer=None, *, stage=1, bucket_bytes=None, unit_sizes=None,
                 prefetch=True, stream=None, model_comm=None, norm_excluded=None, **optimizer_options):
        params = list(params)
        refusal = _Refusal()
        # Stand-ins a rank passes for what it cannot convert: the library
        # refuses them, so every rank hears of it.
        optim = refusal.take(lambda: _optimizer_options(optimizer, optimizer_options),
                             _refused_optimizer_options())
        opts = refusal.take(lambda: _zero_options(stage, bucket_bytes, unit_sizes, prefetch, norm_excluded),
                            _refused_zero_options())
        streams = refusal.take(lambda: _stream(stream), None)
        exported, opts.stream = streams or (None, None)

        self._handle = None
        self._comm = comm
        self._model_comm = model_comm
        self._count = len(params)
        self._sync = True
        tensors = []
        try:
            if model_comm is not None:
                optim.comm = model_comm._live()
            for i, p in enumerate(params):
                # None (a NULL tensor) stands for an array this rank cannot pass,
                # or must not export, lacking the stream to give it.
                tensors.append(None if streams is None else
                               refusal.take(lambda: _capi.Tensor(p, False, f"params[{i}]", exported), None))
            self._handle = refusal.call(lambda: _capi.dt_zero_create(comm._live(), tensors, optim, opts),
                                        _capi.dt_zero_destroy)
        except BaseException:
            self._comm = self._model_comm = None
            raise
        finally:
            # The initial values are read during creation only.
            for tensor in tensors:
                if tensor is not None:
                    tensor.release()

    # -- parameters and gradients ----------------------------------------------

    def parameter(self, index):
        """Parameter ``index``'s full values, as a numpy array over the Zero's own memory (no copy).

        On a CUDA device, a :class:`dtrain.DeviceArray` over that memory instead.

        In stage 3 the parameter's unit must be gathered and waited for
        (:meth:`gather_wait` or ``with z.unit(u)``), and the array is valid
        only until that unit's :meth:`release`; in stages 0-2 it stays valid
        until the Zero is closed, and :meth:`step` updates it in place. Read
        it; do not write it (the optimizer owns the values). bfloat16
        parameters come back as ``ml_dtypes.bfloat16`` arrays where that
        package is installed, otherwise as uint16 arrays of their bit
        patterns.
        """
        return self._view(_capi.dt_zero_parameter(self._live(), _index(index, "index")))

    def gradient(self, index):
        """The array parameter ``index``'s gradient is added into in this micro-step (no copy).

        On a CUDA device, a :class:`dtrain.DeviceArray` over that memory instead.

        Add to it (``g += ...``), then :meth:`mark_ready`. It holds zeros at
        the start of a step (stages 0-1) or of a micro-step (stages 2-3). In
        stages 2-3 the buffer is the unit's and is freed once the unit's
        reduction starts: the array is valid only until every parameter of
        its unit has been marked. In stages 0-1 it stays valid until the Zero
        is closed. Once marked in a micro-step, asking again raises
        :class:`dtrain.InvalidUsageError`.
        """
        return self._view(_capi.dt_zero_gradient(self._live(), _index(index, "index")))

    def mark_ready(self, index):
        """Gradient ``index`` is final for this micro-step; its unit's reduction starts when the unit is.

        Thread-safe, like :meth:`gradient`, for backward engines that run
        several threads.
        """
        _capi.dt_zero_mark_ready(self._live(), _index(index, "index"))

    def wait(self, timeout_ms=-1):
        """Ends a micro-step: starts the reductions not started and waits for all of them.

        ``timeout_ms`` negative waits for the communicator's deadline.
        Gradients never marked raise :class:`dtrain.InvalidUsageError`, which
        names them.
        """
        _capi.dt_zero_wait(self._live(), _integer(timeout_ms, "timeout_ms"))

    @property
    def sync(self):
        """Whether stages 0-1 allreduce each micro-step (True at creation).

        False lets gradients accumulate locally until a micro-step with sync
        on; stages 2-3 reduce every micro-step regardless. The result is the
        same either way. Setting it in the middle of a micro-step raises
        :class:`dtrain.InvalidUsageError`.
        """
        return self._sync

    @sync.setter
    def sync(self, value):
        value = bool(value)
        _capi.dt_zero_set_sync(self._live(), int(value))
        self._sync = value

    def set_sync(self, value):
        """Same as setting :attr:`sync`."""
        self.sync = value

    def no_sync(self):
        """Turns :attr:`sync` off inside the block and back as it was after."""
        return _sync_off(self)

    def step(self):
        """Applies the optimizer to the gradients accumulated since the last step; returns its :data:`StepInfo`.

        Collective. The last micro-step must have ended with :meth:`wait`
        under sync, and no stage 3 unit may be gathered.
        """
        info = _capi.dt_zero_step(self._live())
        return StepInfo(bool(info.skipped), info.grad_norm, info.step, info.loss_scale)

    # -- units ----------------------------------------------------------------

    @property
    def unit_count(self):
        """The number of units."""
        return _capi.dt_zero_unit_count(self._live())

    def gather(self, unit):
        """Starts making ``unit`` whole (stage 3), and prefetching the next one; does not block."""
        _capi.dt_zero_gather(self._live(), _index(unit, "unit"))

    def gather_wait(self, unit, timeout_ms=-1):
        """Waits until ``unit`` is whole (gathering it if :meth:`gather` was not called)."""
        _capi.dt_zero_gather_wait(self._live(), _index(unit, "unit"), _integer(timeout_ms, "timeout_ms"))

    def release(self, unit):
        """Hands ``unit``'s full parameters back (stage 3: frees them; their arrays become invalid)."""
        _capi.dt_zero_release(self._live(), _index(unit, "unit"))

    @contextlib.contextmanager
    def unit(self, unit):
        """Gathers ``unit`` and waits for it on entering the block, releases it on leaving."""
        self.gather(unit)
        self.gather_wait(unit)
        try:
            yield self
        finally:
            if not self.closed:
                self.release(unit)

    # -- the rest -------------------------------------------------------------

    def set_lr(self, lr):
        """Sets the learning rate of the next steps (finite, >= 0)."""
        _capi.dt_zero_set_lr(self._live(), float(lr))

    @property
    def loss_scale(self):
        """What to multiply the next loss by (1.0 without loss scaling)."""
        return _capi.dt_zero_loss_scale(self._live())

    def memory(self):
        """The bytes this rank holds now and at its peak, as a :class:`ZeroMemory`."""
        return ZeroMemory._from_c(_capi.dt_zero_memory_usage(self._live()))

    def save(self, directory):
        """Writes a checkpoint into ``directory`` (created if missing). Collective; between steps."""
        handle = self._live()
        refusal = _Refusal()
        # None (a NULL path) stands for one this rank cannot pass: the library
        # refuses it on every rank.
        path = refusal.take(lambda: _path(directory), None)
        refusal.call(lambda: _capi.dt_zero_save(handle, path))

    def load(self, directory):
        """Loads the checkpoint in ``directory``, written on any number of ranks and any stage.

        Collective; between steps. Either every rank loads everything or
        nothing changes.
        """
        handle = self._live()
        refusal = _Refusal()
        path = refusal.take(lambda: _path(directory), None)
        refusal.call(lambda: _capi.dt_zero_load(handle, path))

    def __len__(self):
        return self._count

    def close(self):
        """Frees the Zero (waiting for communication in flight); its arrays become invalid. Safe twice."""
        handle, self._handle = self._handle, None
        try:
            if handle is not None:
                _capi.dt_zero_destroy(handle)
        finally:
            self._comm = self._model_comm = None

    def __repr__(self):
        if self._handle is None:
            return "<dtrain.Zero closed>"
        return f"<dtrain.Zero over {self._count} parameters in {self.unit_count} units>"

    def _view(self, description):
        """A numpy array over the memory a dt_zero_parameter/gradient description names."""
        data, device_type, device_id, code, bits, lanes, shape, strides, byte_offset = description
        if device_type == _KDL_CUDA and lanes == 1:
            return DeviceArray(self, data + byte_offset, device_id, (code, bits), shape)
        if device_type not in (_KDL_CPU, _KDL_CUDA_HOST) or lanes != 1:
            raise InternalError(Status.ERR_INTERNAL,
                                f"the library described a tensor this binding cannot view "
                                f"(device type {device_type}, {lanes} lanes)")
        dtype = _numpy_dtype(code, bits)
        if strides is not None and strides != _compact_strides(shape):
            raise InternalError(Status.ERR_INTERNAL,
                                f"the library described a tensor that is not compact (strides {strides})")
        size = math.prod(shape) * dtype.itemsize
        if size == 0:
            return np.empty(shape, dtype)
        memory = (ctypes.c_char * size).from_address(data + byte_offset)
        # The array keeps this Zero referenced, so that collecting the Zero
        # cannot free the memory under it (close() still does).
        memory.owner = self
        return np.frombuffer(memory, dtype).reshape(shape)

def _numpy_dtype(code, bits):
    if code == _KDL_FLOAT and bits in (16, 32):
        return np.dtype(np.float16 if bits == 16 else np.float32)
    if code == _KDL_BFLOAT and bits == 16:
        return np.dtype(_bfloat16 if _bfloat16 is not None else np.uint16)
    raise InternalError(Status.ERR_INTERNAL,
                        f"the library described a tensor of dtype code {code}, {bits} bits")


def _compact_strides(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def _optimizer_options(optimizer, keywords):
    """dt_optimizer_options from ``optimizer`` (None, a kind or a dict) and keyword arguments."""
    if optimizer is None:
        given = {}
    elif isinstance(optimizer, collections.abc.Mapping):
        given = dict(optimizer)
    else:
        given = {"kind": optimizer}
    twice = sorted(set(given) & set(keywords))
    if twice:
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                   f"optimizer: {', '.join(twice)} given twice")
    given.update(keywords)
    unknown = sorted(set(given) - _OPTIMIZER_KEYS)
    if unknown:
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                   f"optimizer: unknown option {', '.join(unknown)}")
    try:
        return _options(**given)
    except (TypeError, ValueError, InvalidArgumentError) as error:
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT, f"optimizer: {error}") from None


def _refused_optimizer_options():
    opts = _options()
    opts.kind = -1  # no such kind: refused
    return opts


def _zero_options(stage, bucket_bytes, unit_sizes, prefetch, norm_excluded=None):
    opts = _capi.dt_zero_options()
    _capi.dt_zero_options_init(opts, _capi.DT_ZERO_OPTIONS_VERSION)
    try:
        opts.stage = int(stage)
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                   f"stage: {stage!r} is not 0, 1, 2 or 3") from None
    if bucket_bytes is not None:
        opts.bucket_bytes = _int64(bucket_bytes, "bucket_bytes")
    opts.set_unit_sizes(unit_sizes)
    opts.set_norm_excluded(norm_excluded)
    opts.prefetch = int(bool(prefetch))
    return opts


def _refused_zero_options():
    opts = _capi.dt_zero_options()
    _capi.dt_zero_options_init(opts, _capi.DT_ZERO_OPTIONS_VERSION)
    opts.stage = -1  # no such stage: refused
    return opts


def _path(directory):
    try:
        return os.fsdecode(os.fspath(directory))
    except TypeError as error:
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT, f"directory: {error}") from None
