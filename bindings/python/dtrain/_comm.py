"""Communicators: collectives and point-to-point over libdtrain."""

import weakref

from . import _capi
from ._constants import UNDEF, Backend, ReduceOp, Status
from ._handle import _Handle
from ._errors import InvalidArgumentError
from ._request import Request, _finished, _release


class Comm(_Handle):
    """A communicator: this process's view of a group of ranks.

    The arguments override what the environment says (DTRAIN_RANK,
    DTRAIN_WORLD_SIZE, DTRAIN_STORE, ... or a launcher's variables); with no
    launcher at all this is a world of one. ``close()`` destroys it; a Comm is
    also a context manager.

    Tensors are numpy arrays or anything else with ``__dlpack__`` or the buffer
    protocol, contiguous and row-major. Every operation blocks until done
    (within the communicator's deadline) unless called with ``async_op=True``,
    which returns a :class:`Request`.

    CUDA tensors (torch, cupy) need a communicator with a device. ``stream``
    says which CUDA stream the operation runs on, and is what the tensors'
    ``__dlpack__(stream=...)`` is given, so that the producer makes it wait
    for its pending work first: None (the default) is the legacy default
    stream (DLPack's 1), an int is a stream as DLPack numbers them (1 legacy
    default, 2 per-thread default, a ``cudaStream_t`` address otherwise), a
    stream object (``torch.cuda.Stream``, ``cupy.cuda.Stream``, or one with
    ``__cuda_stream__``) is its handle, and -1 asks the producer for no
    synchronisation and runs on the communicator's own stream (the caller
    has synchronised). Host tensors ignore it.
    """

    _noun = "communicator"

    def __init__(self, rank=None, world_size=None, store=None, auth_token=None, backend="auto",
                 device=None, timeout_ms=None):
        opts = _capi.dt_comm_options()
        _capi.dt_comm_options_init(opts, _capi.DT_COMM_OPTIONS_VERSION)
        opts.rank = _int_or_undef(rank)
        opts.world_size = _int_or_undef(world_size)
        opts.device = _int_or_undef(device)
        opts.timeout_ms = _int_or_undef(timeout_ms)
        opts.backend = _choice(Backend, backend, "backend")
        if store is not None:
            opts.store = str(store)
        if auth_token is not None:
            opts.auth_token = str(auth_token)
        self._init(_capi.dt_comm_create(opts), parent=None)

    @classmethod
    def _wrap(cls, handle, parent):
        comm = cls.__new__(cls)
        comm._init(handle, parent)
        return comm

    def _init(self, handle, parent):
        self._handle = handle
        # A split communicator must be destroyed before its parent: children
        # hold their parent, and closing a parent closes its children first.
        self._parent = parent
        self._children = weakref.WeakSet()
        # Requests freed while their operation ran: (handle, tensors) kept
        # until the operation finishes or the communicator is destroyed.
        self._orphans = []

    # -- lifetime -------------------------------------------------------------

    def close(self):
        """Destroys the communicator (pending operations are aborted). Safe to call twice."""
        if self._handle is None:
            return
        for child in list(self._children):
            child.close()
        handle, self._handle = self._handle, None
        try:
            _capi.dt_comm_destroy(handle)
        finally:
            orphans, self._orphans = self._orphans, []
            for request, tensors in orphans:
                _capi.dt_request_free(request)
                _release(tensors)

    def __repr__(self):
        if self._handle is None:
            return "<dtrain.Comm closed>"
        return f"<dtrain.Comm rank {self.rank} of {self.size}>"

    def abort(self):
        """Aborts every pending and future operation; safe from any thread, never blocks."""
        _capi.dt_comm_abort(self._live())

    @property
    def rank(self):
        return _capi.dt_comm_rank(self._live())

    @property
    def size(self):
        return _capi.dt_comm_size(self._live())

    def split(self, color, key=0):
        """Splits like MPI_Comm_split; collective over this communicator.

        Ranks with the same ``color`` form a new Comm, ordered by ``key`` then
        by rank. ``color`` None leaves this rank out and returns None.
        """
        handle = _capi.dt_comm_split(self._live(), UNDEF if color is None else int(color), int(key))
        if handle is None:
            return None
        child = Comm._wrap(handle, parent=self)
        self._children.add(child)
        return child

    # -- collectives ----------------------------------------------------------

    def allreduce(self, send, recv=None, op="sum", async_op=False, stream=None):
        """recv = op over ranks of send; ``recv`` None reduces ``send`` in place."""
        op = _choice(ReduceOp, op, "op")
        exported, c_stream = _stream(stream)
        s, r = self._send_recv(send, recv, exported)
        return self._run(lambda a: _capi.dt_allreduce(self._live(), s, r, op, c_stream, a), [s, r],
                         async_op)

    def reduce_scatter(self, send, recv, op="sum", async_op=False, stream=None):
        """send holds size * n elements; this rank's recv gets its block of n, reduced."""
        op = _choice(ReduceOp, op, "op")
        exported, c_stream = _stream(stream)
        s, r = self._send_recv(send, recv, exported)
        return self._run(lambda a: _capi.dt_reduce_scatter(self._live(), s, r, op, c_stream, a),
                         [s, r], async_op)

    def allgather(self, send, recv, async_op=False, stream=None):
        """send holds n elements; recv gets size * n, in rank order."""
        exported, c_stream = _stream(stream)
        s, r = self._send_recv(send, recv, exported)
        return self._run(lambda a: _capi.dt_allgather(self._live(), s, r, c_stream, a), [s, r],
                         async_op)

    def broadcast(self, buf, root=0, async_op=False, stream=None):
        """``buf`` on ``root`` is copied into ``buf`` on every rank."""
        exported, c_stream = _stream(stream)
        b = _capi.Tensor(buf, True, "buf", exported)
        return self._run(lambda a: _capi.dt_broadcast(self._live(), b, int(root), c_stream, a), [b],
                         async_op)

    def alltoall(self, send, recv, async_op=False, stream=None):
        """send and recv hold size * n elements; block j of send goes to rank j."""
        exported, c_stream = _stream(stream)
        s, r = self._send_recv(send, recv, exported)
        return self._run(lambda a: _capi.dt_alltoall(self._live(), s, r, c_stream, a), [s, r],
                         async_op)

    def alltoallv(self, send, send_counts, recv, recv_counts, async_op=False, stream=None):
        """alltoall with per-rank element counts (one per rank, blocks packed in rank order)."""
        exported, c_stream = _stream(stream)
        s, r = self._send_recv(send, recv, exported)
        return self._run(
            lambda a: _capi.dt_alltoallv(self._live(), s, send_counts, r, recv_counts, c_stream, a),
            [s, r], async_op)

    def send(self, buf, peer, tag=0, async_op=False, stream=None):
        """Sends ``buf`` to rank ``peer``; messages with one tag arrive in order."""
        exported, c_stream = _stream(stream)
        b = _capi.Tensor(buf, False, "buf", exported)
        return self._run(lambda a: _capi.dt_send(self._live(), b, int(peer), int(tag), c_stream, a),
                         [b], async_op)

    def recv(self, buf, peer, tag=0, async_op=False, stream=None):
        """Receives into ``buf`` the next message from rank ``peer`` with ``tag``."""
        exported, c_stream = _stream(stream)
        b = _capi.Tensor(buf, True, "buf", exported)
        return self._run(lambda a: _capi.dt_recv(self._live(), b, int(peer), int(tag), c_stream, a),
                         [b], async_op)

    def barrier(self):
        """Returns when every rank has entered the barrier."""
        _capi.dt_barrier(self._live())

    # -- internals ------------------------------------------------------------

    @staticmethod
    def _send_recv(send, recv, stream):
        # Held as Tensors so that a non-blocking operation can keep them.
        if recv is None:
            tensor = _capi.Tensor(send, True, "send", stream)
            return tensor, tensor
        return _capi.Tensor(send, False, "send", stream), _capi.Tensor(recv, True, "recv", stream)

    def _run(self, start, tensors, async_op):
        """Runs ``start(async_op)``; blocking calls give the tensors back at once."""
        try:
            self._reap()
            handle = start(bool(async_op))
        except BaseException:
            _release(tensors)
            raise
        if handle is None:
            _release(tensors)
            return None
        return Request(handle, tensors, self)

    def _adopt(self, handle, tensors):
        """Keeps a freed request's tensors until its operation finishes."""
        if self._handle is None:
            # Destroyed: nothing runs any more.
            _capi.dt_request_free(handle)
            _release(tensors)
        else:
            self._orphans.append((handle, tensors))

    def _reap(self):
        still_running = []
        for handle, tensors in self._orphans:
            if _finished(handle):
                _capi.dt_request_free(handle)
                _release(tensors)
            else:
                still_running.append((handle, tensors))
        self._orphans = still_running


def _stream(stream):
    """(what CUDA tensors' ``__dlpack__`` is given, the C ``stream``) for ``stream``.

    DLPack's numbering: 1 is the legacy default stream (also the C API's
    cudaStreamLegacy), 2 the per-thread default stream (cudaStreamPerThread),
    larger values are stream addresses, 0 is ambiguous and refused, and -1
    means "do not synchronise", which leaves the C API its own stream (NULL).
    """
    if stream is None:
        return 1, 1
    if isinstance(stream, bool):
        raise _bad_stream(stream)
    if isinstance(stream, int):
        value = stream
    elif hasattr(stream, "__cuda_stream__"):
        value = _handle(stream.__cuda_stream__()[1], stream)
    elif hasattr(stream, "cuda_stream"):  # torch.cuda.Stream
        value = _handle(stream.cuda_stream, stream)
    elif hasattr(stream, "ptr"):  # cupy.cuda.Stream
        value = _handle(stream.ptr, stream)
    else:
        raise _bad_stream(stream)
    if value == -1:
        return -1, None
    if value < 1:
        raise _bad_stream(stream)
    return value, value


def _handle(address, stream):
    """A stream object's cudaStream_t as DLPack numbers it (0, the legacy default stream, is 1)."""
    if isinstance(address, bool) or not isinstance(address, int) or address < 0:
        raise _bad_stream(stream)
    return address or 1


def _bad_stream(stream):
    return InvalidArgumentError(
        Status.ERR_INVALID_ARGUMENT,
        f"stream: {stream!r} is not a CUDA stream (None, -1, 1: legacy default, 2: per-thread "
        "default, a cudaStream_t address, or a torch/cupy stream object; 0 is ambiguous)")


def _int_or_undef(value):
    return UNDEF if value is None else int(value)


def _choice(enum_type, value, what):
    """A member of ``enum_type`` from a member, its value or its name in any case."""
    try:
        return enum_type[value.upper()] if isinstance(value, str) else enum_type(value)
    except (KeyError, ValueError):
        names = ", ".join(repr(member.name.lower()) for member in enum_type)
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                   f"{what}: {value!r} is not one of {names}") from None
