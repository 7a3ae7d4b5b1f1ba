"""Communicators: collectives and point-to-point over libdtrain."""

import collections
import dataclasses
import weakref

from . import _capi
from ._constants import UNDEF, Backend, OpKind, ReduceOp, Status
from ._handle import _Handle
from ._errors import InvalidArgumentError
from ._request import Request, _finished, _release
from ._arguments import _integer


class P2POp(collections.namedtuple("P2POp", "kind tensor peer tag")):
    """One send or receive of :meth:`Comm.p2p_group`: ``kind`` is "send" or "recv"."""

    def __new__(cls, kind, tensor, peer, tag=0):
        return super().__new__(cls, kind, tensor, peer, tag)


_P2P_KINDS = {"send": _capi.DT_P2P_SEND, "recv": _capi.DT_P2P_RECV}


@dataclasses.dataclass(frozen=True)
class OpStats:
    """What a communicator's finished operations of one kind added up to on this rank (``dt_op_stats``).

    ``bytes`` is the size of this rank's buffer each operation is about (the
    send tensor, mostly; see dtrain/comm.h) and ``seconds`` the time from
    each call to its completion, both summed.
    """
    count: int
    failed: int
    bytes: int
    seconds: float


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
        opts.rank = _int_or_undef(rank, "rank")
        opts.world_size = _int_or_undef(world_size, "world_size")
        opts.device = _int_or_undef(device, "device")
        opts.timeout_ms = _int_or_undef(timeout_ms, "timeout_ms")
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

    def bind_thread(self, bind=True):
        """Binds the communicator to the calling thread (the one that created it, until now).

        Only the bound thread may run its collectives, point-to-point calls and
        splits; another gets :class:`InvalidUsageError`, and nothing changes. Call
        it from a thread the communicator moves to. ``bind=False`` lets any thread
        call, one at a time; the program then orders the calls alike on every rank.
        """
        _capi.dt_comm_bind_thread(self._live(), 1 if bind else 0)

    @property
    def rank(self):
        return _capi.dt_comm_rank(self._live())

    @property
    def size(self):
        return _capi.dt_comm_size(self._live())

    def stats(self, kind="all"):
        """The :class:`OpStats` of this rank's operations of ``kind`` (an :class:`OpKind` or its name; "all": every kind)."""
        s = _capi.dt_comm_stats(self._live(), _choice(OpKind, kind, "kind"))
        return OpStats(s.count, s.failed, s.bytes, s.seconds)

    def split(self, color, key=0):
        """Splits like MPI_Comm_split; collective over this communicator.

        Ranks with the same ``color`` form a new Comm, ordered by ``key`` then
        by rank. ``color`` None leaves this rank out and returns None.
        """
        color = UNDEF if color is None else _integer(color, "color")
        handle = _capi.dt_comm_split(self._live(), color, _integer(key, "key"))
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
        root = _integer(root, "root")
        exported, c_stream = _stream(stream)
        b = _capi.Tensor(buf, True, "buf", exported)
        return self._run(lambda a: _capi.dt_broadcast(self._live(), b, root, c_stream, a), [b],
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

    def reduce(self, send, recv=None, op="sum", root=0, async_op=False, stream=None):
        """recv on ``root`` = op over ranks of send; ``recv`` None on the root reduces in place.

        Off the root ``recv`` is ignored (pass None).
        """
        op = _choice(ReduceOp, op, "op")
        root = _integer(root, "root")
        exported, c_stream = _stream(stream)
        s, r = self._rooted(send, recv, self.rank == root, exported)
        return self._run(lambda a: _capi.dt_reduce(self._live(), s, r, op, root, c_stream, a),
                         [t for t in (s, r) if t is not None], async_op)

    def gather(self, send, recv=None, root=0, async_op=False, stream=None):
        """Every rank's send (n elements) lands in block r of ``recv`` (size * n) on ``root``.

        Off the root ``recv`` is ignored (pass None).
        """
        root = _integer(root, "root")
        exported, c_stream = _stream(stream)
        s = _capi.Tensor(send, False, "send", exported)
        r = _capi.Tensor(recv, True, "recv", exported) if recv is not None else None
        return self._run(lambda a: _capi.dt_gather(self._live(), s, r, root, c_stream, a),
                         [t for t in (s, r) if t is not None], async_op)

    def scatter(self, send, recv, root=0, async_op=False, stream=None):
        """Block r of ``send`` (size * n elements) on ``root`` goes to ``recv`` (n) of rank r.

        Off the root ``send`` is ignored (pass None).
        """
        root = _integer(root, "root")
        exported, c_stream = _stream(stream)
        s = _capi.Tensor(send, False, "send", exported) if send is not None else None
        r = _capi.Tensor(recv, True, "recv", exported)
        return self._run(lambda a: _capi.dt_scatter(self._live(), s, r, root, c_stream, a),
                         [t for t in (s, r) if t is not None], async_op)

    def allgatherv(self, send, recv, recv_counts, async_op=False, stream=None):
        """allgather with a count per rank: rank r's send (recv_counts[r] elements) is
        packed into ``recv`` in rank order."""
        exported, c_stream = _stream(stream)
        s, r = self._send_recv(send, recv, exported)
        return self._run(
            lambda a: _capi.dt_allgatherv(self._live(), s, r, recv_counts, c_stream, a), [s, r], async_op)

    def reduce_scatterv(self, send, recv_counts, recv, op="sum", async_op=False, stream=None):
        """reduce_scatter with a count per rank: ``send`` holds blocks of recv_counts[r]
        elements packed in rank order; this rank's ``recv`` gets its block, reduced."""
        op = _choice(ReduceOp, op, "op")
        exported, c_stream = _stream(stream)
        s, r = self._send_recv(send, recv, exported)
        return self._run(
            lambda a: _capi.dt_reduce_scatterv(self._live(), s, recv_counts, r, op, c_stream, a),
            [s, r], async_op)

    def p2p_group(self, ops, async_op=False, stream=None):
        """Starts several sends and receives together and completes them as one.

        ``ops`` is a sequence of :class:`P2POp`. Every op is posted before any
        is waited for, so exchanges that deadlock one call at a time (each
        rank sending to both neighbours before receiving) complete.
        """
        exported, c_stream = _stream(stream)
        tensors = []
        try:
            for i, op in enumerate(ops):
                kind = _P2P_KINDS.get(op.kind)
                if kind is None:
                    raise InvalidArgumentError(
                        Status.ERR_INVALID_ARGUMENT,
                        f"ops[{i}].kind: {op.kind!r} is neither 'send' nor 'recv'")
                peer, tag = _integer(op.peer, f"ops[{i}].peer"), _integer(op.tag, f"ops[{i}].tag")
                tensors.append((kind, _capi.Tensor(op.tensor, kind == _capi.DT_P2P_RECV,
                                                   f"ops[{i}].tensor", exported), peer, tag))
        except BaseException:
            _release([t for _, t, _, _ in tensors])
            raise
        return self._run(lambda a: _capi.dt_p2p_group(self._live(), tensors, c_stream, a),
                         [t for _, t, _, _ in tensors], async_op)

    def send(self, buf, peer, tag=0, async_op=False, stream=None):
        """Sends ``buf`` to rank ``peer``; messages with one tag arrive in order."""
        peer, tag = _integer(peer, "peer"), _integer(tag, "tag")
        exported, c_stream = _stream(stream)
        b = _capi.Tensor(buf, False, "buf", exported)
        return self._run(lambda a: _capi.dt_send(self._live(), b, peer, tag, c_stream, a),
                         [b], async_op)

    def recv(self, buf, peer, tag=0, async_op=False, stream=None):
        """Receives into ``buf`` the next message from rank ``peer`` with ``tag``."""
        peer, tag = _integer(peer, "peer"), _integer(tag, "tag")
        exported, c_stream = _stream(stream)
        b = _capi.Tensor(buf, True, "buf", exported)
        return self._run(lambda a: _capi.dt_recv(self._live(), b, peer, tag, c_stream, a),
                         [b], async_op)

    def barrier(self):
        """Returns when every rank has entered the barrier."""
        _capi.dt_barrier(self._live())

    # -- internals ------------------------------------------------------------

    @staticmethod
    def _rooted(send, recv, is_root, stream):
        # On the root recv None means in place; elsewhere recv is not used.
        if not is_root:
            return _capi.Tensor(send, False, "send", stream), None
        return Comm._send_recv(send, recv, stream)

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


def _int_or_undef(value, what):
    return UNDEF if value is None else _integer(value, what)


def _choice(enum_type, value, what):
    """A member of ``enum_type`` from a member, its value or its name in any case."""
    try:
        return enum_type[value.upper()] if isinstance(value, str) else enum_type(value)
    except (KeyError, ValueError):
        names = ", ".join(repr(member.name.lower()) for member in enum_type)
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                   f"{what}: {value!r} is not one of {names}") from None
