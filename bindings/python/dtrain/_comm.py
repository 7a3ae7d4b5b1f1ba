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

    def allreduce(self, send, recv=None, op="sum", async_op=False):
        """recv = op over ranks of send; ``recv`` None reduces ``send`` in place."""
        s, r = self._send_recv(send, recv)
        op = _choice(ReduceOp, op, "op")
        return self._run(lambda a: _capi.dt_allreduce(self._live(), s, r, op, None, a), [s, r], async_op)

    def reduce_scatter(self, send, recv, op="sum", async_op=False):
        """send holds size * n elements; this rank's recv gets its block of n, reduced."""
        s, r = self._send_recv(send, recv)
        op = _choice(ReduceOp, op, "op")
        return self._run(lambda a: _capi.dt_reduce_scatter(self._live(), s, r, op, None, a), [s, r],
                         async_op)

    def allgather(self, send, recv, async_op=False):
        """send holds n elements; recv gets size * n, in rank order."""
        s, r = self._send_recv(send, recv)
        return self._run(lambda a: _capi.dt_allgather(self._live(), s, r, None, a), [s, r], async_op)

    def broadcast(self, buf, root=0, async_op=False):
        """``buf`` on ``root`` is copied into ``buf`` on every rank."""
        b = _capi.Tensor(buf, True, "buf")
        return self._run(lambda a: _capi.dt_broadcast(self._live(), b, int(root), None, a), [b], async_op)

    def alltoall(self, send, recv, async_op=False):
        """send and recv hold size * n elements; block j of send goes to rank j."""
        s, r = self._send_recv(send, recv)
        return self._run(lambda a: _capi.dt_alltoall(self._live(), s, r, None, a), [s, r], async_op)

    def alltoallv(self, send, send_counts, recv, recv_counts, async_op=False):
        """alltoall with per-rank element counts (one per rank, blocks packed in rank order)."""
        s, r = self._send_recv(send, recv)
        return self._run(
            lambda a: _capi.dt_alltoallv(self._live(), s, send_counts, r, recv_counts, None, a),
            [s, r], async_op)

    def send(self, buf, peer, tag=0, async_op=False):
        """Sends ``buf`` to rank ``peer``; messages with one tag arrive in order."""
        b = _capi.Tensor(buf, False, "buf")
        return self._run(lambda a: _capi.dt_send(self._live(), b, int(peer), int(tag), None, a), [b],
                         async_op)

    def recv(self, buf, peer, tag=0, async_op=False):
        """Receives into ``buf`` the next message from rank ``peer`` with ``tag``."""
        b = _capi.Tensor(buf, True, "buf")
        return self._run(lambda a: _capi.dt_recv(self._live(), b, int(peer), int(tag), None, a), [b],
                         async_op)

    def barrier(self):
        """Returns when every rank has entered the barrier."""
        _capi.dt_barrier(self._live())

    # -- internals ------------------------------------------------------------

    @staticmethod
    def _send_recv(send, recv):
        # Held as Tensors so that a non-blocking operation can keep them.
        if recv is None:
            tensor = _capi.Tensor(send, True, "send")
            return tensor, tensor
        return _capi.Tensor(send, False, "send"), _capi.Tensor(recv, True, "recv")

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
