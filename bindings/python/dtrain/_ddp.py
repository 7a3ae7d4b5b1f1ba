"""Data parallelism: gradient averaging overlapped with backward, and parameter broadcast."""

import contextlib

from . import _capi
from ._comm import _stream
from ._constants import BucketState, Compression, Status
from ._handle import _Handle
from ._errors import InvalidArgumentError
from ._arguments import _integer, _real


class DDP(_Handle):
    """Averages the gradient arrays ``grads`` over the ranks of ``comm``.

    Every rank holds a full replica of the model and computes gradients on its
    share of the batch. As backward makes gradient ``i`` final, call
    ``mark_ready(i)``: gradients are packed into buckets (about
    ``bucket_bytes`` each, filled in reverse order, last layer first) whose
    allreduces start while backward goes on. ``wait()`` finishes the step and
    leaves the averages in the arrays::

        ddp = dtrain.DDP(comm, grads)
        for batch in batches:
            ...backward, calling ddp.mark_ready(i) as each grads[i] is final...
            ddp.wait()
            opt.step()

    ``grads`` is a sequence of floating-point arrays (float32, float64,
    float16, or bfloat16 through ``__dlpack__``): numpy arrays or anything
    else with ``__dlpack__`` or the writable buffer protocol, contiguous, all
    in host memory or all on the communicator's CUDA device (torch or cupy
    tensors). For CUDA gradients ``stream`` is the stream backward writes
    them on, numbered as for :class:`Comm` operations (None: the legacy
    default stream; a torch or cupy stream object): ``mark_ready(i)`` orders
    the copy of gradient ``i`` after the work queued there so far and does
    not block, and after ``wait()`` the averages are written, for work on
    any stream. The DDP writes into the arrays, so they must stay where they are:
    it keeps them referenced until ``close()``. Creation is collective: every
    rank must pass gradients of the same dtypes and shapes, and the same
    options, or every rank raises :class:`dtrain.MismatchError`.

    ``compression`` (None, "f16", "bf16" or a :class:`Compression`) is the
    type gradients travel in. With ``find_unused``, gradients not marked in a
    step count as zero from this rank instead of failing ``wait()``. With
    ``weighted``, ranks are weighted by ``set_local_weight()`` (their sample
    counts, say), so batches of different sizes still give the mean over all
    samples.

    For gradient accumulation use ``with ddp.no_sync(): ...`` (or
    ``ddp.sync = False``) for the micro-steps that only accumulate: marks
    and ``wait()`` then do nothing.

    ``close()`` frees the DDP; it is also a context manager.
    """

    _noun = "DDP"

    def __init__(self, comm, grads, bucket_bytes=None, compression=None, find_unused=False,
                 weighted=False, stream=None):
        grads = list(grads)
        refusal = _Refusal()
        opts = _capi.dt_ddp_options()
        _capi.dt_ddp_options_init(opts, _capi.DT_DDP_OPTIONS_VERSION)
        if bucket_bytes is not None:
            # 0 stands for a value this rank cannot pass: the library refuses it.
            opts.bucket_bytes = refusal.take(lambda: _int64(bucket_bytes, "bucket_bytes"), 0)
        opts.compression = refusal.take(lambda: _compression(compression), -1)
        opts.find_unused = int(bool(find_unused))
        opts.weighted = int(bool(weighted))
        streams = refusal.take(lambda: _stream(stream), None)
        exported, opts.stream = streams or (None, None)

        self._handle = None
        self._comm = comm
        self._arrays = grads
        self._tensors = []
        self._sync = True
        try:
            for i, g in enumerate(grads):
                # None (a NULL tensor) stands for an array this rank cannot pass,
                # or must not export, lacking the stream to give it.
                self._tensors.append(None if streams is None else
                                     refusal.take(lambda: _capi.Tensor(g, True, f"grads[{i}]", exported), None))
            self._handle = refusal.call(lambda: _capi.dt_ddp_create(comm._live(), self._tensors, opts),
                                        _capi.dt_ddp_destroy)
        except BaseException:
            self._release()
            raise

    @classmethod
    def from_arrays(cls, comm, arrays, **options):
        """A DDP over a list of arrays (numpy or ``__dlpack__`` objects); same as ``DDP(comm, arrays, ...)``."""
        return cls(comm, arrays, **options)

    # -- a step ---------------------------------------------------------------

    def mark_ready(self, index):
        """Gradient ``index`` is final for this step. Thread-safe; does nothing with sync off."""
        _capi.dt_ddp_mark_ready(self._live(), _index(index, "index"))

    def wait(self, timeout_ms=-1):
        """Finishes the step: the gradients then hold the averages.

        ``timeout_ms`` negative waits for the communicator's deadline. With
        sync off, returns at once. Gradients never marked raise
        :class:`dtrain.InvalidUsageError` (and stay as they were) unless the
        DDP was made with ``find_unused``.
        """
        _capi.dt_ddp_wait(self._live(), _integer(timeout_ms, "timeout_ms"))

    @property
    def sync(self):
        """Whether steps average (True at creation); False only accumulates locally."""
        return self._sync

    @sync.setter
    def sync(self, value):
        value = bool(value)
        _capi.dt_ddp_set_sync(self._live(), int(value))
        self._sync = value

    def no_sync(self):
        """Turns averaging off inside the block (PyTorch's ``no_sync``) and back as it was after."""
        return _sync_off(self)

    def set_local_weight(self, weight):
        """This rank's weight in a ``weighted`` average from the next step on (finite, >= 0)."""
        _capi.dt_ddp_set_local_weight(self._live(), _real(weight, "weight"))

    # -- buckets --------------------------------------------------------------

    @property
    def bucket_count(self):
        """The number of buckets."""
        return _capi.dt_ddp_bucket_count(self._live())

    def bucket_of(self, index):
        """The bucket that holds gradient ``index``; bucket 0 starts first."""
        return _capi.dt_ddp_bucket_of(self._live(), _index(index, "index"))

    def bucket_state(self, bucket):
        """Where ``bucket`` is in the current step, as a :class:`BucketState`; never blocks."""
        state = _capi.dt_ddp_bucket_state(self._live(), _index(bucket, "bucket"))
        try:
            return BucketState(state)
        except ValueError:
            return state

    # -- lifetime -------------------------------------------------------------

    @property
    def grads(self):
        """The gradient arrays, as given."""
        return list(self._arrays)

    def __len__(self):
        return len(self._arrays)

    def close(self):
        """Frees the DDP (waiting for allreduces in flight) and gives the arrays back. Safe to call twice."""
        handle, self._handle = self._handle, None
        try:
            if handle is not None:
                _capi.dt_ddp_destroy(handle)
        finally:
            self._release()

    def __repr__(self):
        if self._handle is None:
            return "<dtrain.DDP closed>"
        return (f"<dtrain.DDP over {len(self._arrays)} gradients in {self.bucket_count} buckets, "
                f"sync {'on' if self._sync else 'off'}>")

    def _release(self):
        tensors, self._tensors = self._tensors, []
        for tensor in tensors:
            if tensor is not None:
                tensor.release()
        self._arrays = []
        self._comm = None


def broadcast_parameters(comm, params, root=0):
    """Makes every rank's ``params`` (a sequence of arrays) equal to rank ``root``'s.

    Collective and blocking. Any supported dtype, integer arrays included,
    all in host memory or all on the communicator's CUDA device.
    Ranks that disagree about the count, dtypes, shapes or root all raise
    :class:`dtrain.MismatchError`; a rank whose own arrays or root are bad
    raises :class:`dtrain.InvalidArgumentError` (and the others
    :class:`dtrain.MismatchError`).
    """
    refusal = _Refusal()
    tensors = []
    try:
        for i, p in enumerate(params):
            tensors.append(refusal.take(lambda: _capi.Tensor(p, True, f"params[{i}]"), None))
        c_root = refusal.take(lambda: _root(root), -1)
        refusal.call(lambda: _capi.dt_ddp_broadcast_parameters(comm._live(), tensors, c_root))
    finally:
        for tensor in tensors:
            if tensor is not None:
                tensor.release()


@contextlib.contextmanager
def _sync_off(handle):
    """``no_sync`` of :class:`DDP` and ``Zero``: ``handle.sync`` off inside the block, back as it was after (unless closed in it)."""
    previous = handle._sync
    handle.sync = False
    try:
        yield handle
    finally:
        if not handle.closed:
            handle.sync = previous


class _Refusal:
    """What this rank refuses before a collective call.

    Creating a DDP and broadcasting parameters are collective: a rank that
    raised before the call would leave the others waiting. Instead, a value
    this rank cannot pass is replaced by one the library refuses (so that
    every rank hears of it and the others raise MismatchError), and this
    rank raises its own error after the call.
    """

    def __init__(self):
        self.error = None

    def take(self, convert, stand_in):
        try:
            return convert()
        except InvalidArgumentError as error:
            self.error = self.error or error
            return stand_in

    def call(self, start, undo=None):
        try:
            result = start()
        except InvalidArgumentError:
            if self.error is None:
                raise
            raise self.error from None
        if self.error is not None:
            # The stand-in should have been refused; give back what was made.
            if undo is not None and result is not None:
                undo(result)
            raise self.error
        return result


def _compression(value):
    if value is None:
        return Compression.NONE
    try:
        return Compression[value.upper()] if isinstance(value, str) else Compression(value)
    except (KeyError, ValueError):
        names = ", ".join(repr(c.name.lower()) for c in Compression)
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                   f"compression: {value!r} is not None or one of {names}") from None


def _int64(value, what):
    number = _integer(value, what)
    if not -2 ** 63 <= number < 2 ** 63:
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                   f"{what}: {number} does not fit in 64 bits")
    return number


def _index(value, what):
    index = _integer(value, what)
    if index < 0:
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT, f"{what}: {index} is negative")
    # Past size_t (on 64-bit hosts): out of range for the library too.
    return min(index, 2 ** 64 - 1)


def _root(value):
    root = _integer(value, "root")
    if not -2 ** 31 < root < 2 ** 31:
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                   f"root {root} is not a rank of this communicator")
    return root
