"""The device mesh: the ranks of a communicator as a grid of named
dimensions, with a communicator per dimension or set of dimensions."""

from . import _capi
from ._arguments import _integer
from ._comm import Comm
from ._constants import UNDEF, Status
from ._errors import InvalidArgumentError
from ._handle import _Handle

CUSTOMARY = ("tp", "cp", "ep", "dp", "pp")


class Mesh(_Handle):
    """A device mesh over ``comm`` (collective over it).

    Either ``dims``, a sequence of ``(name, size)`` pairs innermost first, or
    keyword sizes of the customary dimensions ``tp, cp, ep, dp, pp`` (in that
    order, innermost first, as Megatron-Core orders them); those not given are
    1, except ``dp``, which is inferred from the world size unless given. At
    most one size may be None (inferred)::

        mesh = dtrain.Mesh(comm, tp=2, pp=2)       # dp = world / 4
        mesh = dtrain.Mesh(comm, [("tp", 2), ("dp", 4)])
        tp = mesh.comm("tp")                        # a new Comm of the tp group
        grads = mesh.comm("dp", "cp")               # over dp x cp

    Ranks that disagree about the shape raise :class:`MismatchError`. The mesh
    keeps a communicator of its own, so ``comm`` may be closed while it lives;
    the communicators it hands out are independent of it.
    """

    _noun = "mesh"

    def __init__(self, comm, dims=None, **sizes):
        if dims is not None and sizes:
            raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                       "give either dims or keyword sizes, not both")
        if dims is None:
            unknown = set(sizes) - set(CUSTOMARY)
            if unknown:
                raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                           f"unknown dimension {sorted(unknown)[0]!r}; "
                                           f"the customary ones are {CUSTOMARY}")
            names = None
            values = [sizes.get(name, None if name == "dp" else 1) for name in CUSTOMARY]
        else:
            dims = list(dims)
            names = [str(name) for name, _ in dims]
            values = [size for _, size in dims]
        values = [UNDEF if v is None else _integer(v, "size") for v in values]
        self._handle = _capi.dt_mesh_create(comm._live(), len(values), names, values)

    def close(self):
        """Destroys the mesh; communicators it handed out live on. Safe to call twice."""
        handle, self._handle = self._handle, None
        if handle is not None:
            _capi.dt_mesh_destroy(handle)

    def __repr__(self):
        if self._handle is None:
            return "<dtrain.Mesh closed>"
        shape = " x ".join(f"{n}={s}" for n, s in self.shape)
        return f"<dtrain.Mesh {shape}, rank {self.rank}>"

    @property
    def ndims(self):
        return _capi.dt_mesh_ndims(self._live())

    @property
    def size(self):
        return _capi.dt_mesh_size(self._live())

    @property
    def rank(self):
        return _capi.dt_mesh_rank(self._live())

    @property
    def names(self):
        """The dimension names, innermost first."""
        return [_capi.dt_mesh_dim_name(self._live(), d) for d in range(self.ndims)]

    @property
    def shape(self):
        """``[(name, size), ...]``, innermost first."""
        return [(name, self.dim_size(name)) for name in self.names]

    def dim_index(self, name):
        return _capi.dt_mesh_dim_index(self._live(), name)

    def dim_size(self, name):
        return _capi.dt_mesh_dim_size(self._live(), name)

    def coord(self, name):
        """This rank's coordinate in dimension ``name``."""
        return _capi.dt_mesh_coord(self._live(), name)

    def coords_of(self, rank):
        """The coordinates of mesh rank ``rank``, one per dimension, innermost first."""
        return _capi.dt_mesh_coords_of(self._live(), _integer(rank, "rank"), self.ndims)

    def rank_at(self, coords):
        """The mesh rank at ``coords`` (one per dimension, innermost first)."""
        return _capi.dt_mesh_rank_at(self._live(), [_integer(c, "coords") for c in coords])

    def group_ranks(self, *names):
        """The mesh ranks of this rank's group over ``names``, in the order of its communicator's ranks."""
        joined = _joined(names)
        _, count = _capi.dt_mesh_group_ranks(self._live(), joined, 0)
        ranks, _ = _capi.dt_mesh_group_ranks(self._live(), joined, count)
        return list(ranks)

    def comm(self, *names):
        """A new :class:`Comm` over this rank's group in ``names`` ("dp", or "dp", "cp", or "dp,cp").

        Collective over the whole mesh, every rank naming the same dimensions.
        """
        return Comm._wrap(_capi.dt_mesh_comm(self._live(), _joined(names)), parent=None)


def _joined(names):
    if len(names) == 1 and not isinstance(names[0], str):
        names = tuple(names[0])
    return ",".join(str(n) for n in names)
