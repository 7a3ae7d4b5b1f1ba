"""Pipeline schedules as data: each rank's forwards, backwards, sends and receives, in order."""

import dataclasses

from . import _capi
from ._constants import UNDEF, PipelineActionKind, PipelineKind, Status
from ._errors import InvalidArgumentError
from ._handle import _Handle
from ._pipeline_svg import schedule_svg

# The names a schedule kind may be given by, besides a PipelineKind.
_KIND_NAMES = {"gpipe": PipelineKind.GPIPE, "1f1b": PipelineKind.ONE_F_ONE_B,
               "interleaved_1f1b": PipelineKind.INTERLEAVED_1F1B, "zb_h1": PipelineKind.ZB_H1}


@dataclasses.dataclass(frozen=True)
class PipelineAction:
    """One step of a rank's list (``dt_pipeline_action``).

    ``chunk`` is the rank's model chunk (global stage ``chunk * stages +
    rank``) and ``microbatch`` the micro-batch; ``peer`` is the rank a send
    goes to or a receive comes from, -1 for compute actions.
    """
    kind: PipelineActionKind
    chunk: int
    microbatch: int
    peer: int


class PipelineSchedule(_Handle):
    """Every rank's actions in one training step of a pipeline (see dtrain/pipeline.h).

    ``kind`` is a :class:`PipelineKind` or one of "gpipe", "1f1b",
    "interleaved_1f1b" and "zb_h1"; ``stages`` the ranks of the pipeline
    group, ``microbatches`` the micro-batches of a step, ``chunks`` the model
    chunks per rank (None: 2 for interleaved 1F1B, 1 otherwise). Building one
    is pure computation. Bad options raise :class:`dtrain.InvalidArgumentError`
    naming the field::

        s = dtrain.PipelineSchedule("1f1b", stages=4, microbatches=8)
        for action in s.actions(rank):
            ...run action.kind on (action.chunk, action.microbatch)...

    ``close()`` frees it; it is also a context manager.
    """

    _noun = "PipelineSchedule"

    def __init__(self, kind, stages, microbatches, chunks=None):
        opts = _capi.dt_pipeline_schedule_options()
        _capi.dt_pipeline_schedule_options_init(opts, _capi.DT_PIPELINE_SCHEDULE_OPTIONS_VERSION)
        opts.kind = _kind(kind)
        opts.stages = _count(stages, "stages")
        opts.microbatches = _count(microbatches, "microbatches")
        opts.chunks = UNDEF if chunks is None else _count(chunks, "chunks")
        self._handle = _capi.dt_pipeline_schedule_create(opts)
        self._kind = PipelineKind(opts.kind)
        self._stages = opts.stages
        self._microbatches = opts.microbatches

    @property
    def kind(self):
        return self._kind

    @property
    def stages(self):
        """The number of ranks, each with its own list."""
        return self._stages

    @property
    def microbatches(self):
        """The number of micro-batches of a step."""
        return self._microbatches

    def length(self, rank):
        """The number of actions of ``rank``."""
        return _capi.dt_pipeline_schedule_length(self._live(), _count(rank, "rank"))

    def action(self, rank, index):
        """Action ``index`` of ``rank``, as a :class:`PipelineAction`."""
        kind, chunk, microbatch, peer = _capi.dt_pipeline_schedule_action(self._live(), _count(rank, "rank"),
                                                                          _count(index, "index"))
        return PipelineAction(PipelineActionKind(kind), chunk, microbatch, peer)

    def actions(self, rank):
        """Every action of ``rank``, in the order the rank runs them."""
        return [self.action(rank, i) for i in range(self.length(rank))]

    @property
    def bubble_fraction(self):
        """The share of a step each rank idles, from the kind's closed form (see dtrain/pipeline.h)."""
        return _capi.dt_pipeline_schedule_bubble_fraction(self._live())

    def peak_in_flight(self, rank):
        """The most (chunk, micro-batch) pairs whose activations ``rank`` keeps at once."""
        return _capi.dt_pipeline_schedule_peak_in_flight(self._live(), _count(rank, "rank"))

    def to_svg(self):
        """A picture of the schedule as SVG text: ranks as rows, boxes coloured by micro-batch.

        Boxes sit where the actions run with unit durations (forward 1,
        backward 2; zero-bubble forward, input and weight gradient 1 each),
        the timing :attr:`bubble_fraction` is exact for.
        """
        self._live()
        return schedule_svg(self)

    def close(self):
        """Frees the schedule. Safe twice."""
        handle, self._handle = self._handle, None
        if handle is not None:
            _capi.dt_pipeline_schedule_destroy(handle)

    def __repr__(self):
        if self._handle is None:
            return "<dtrain.PipelineSchedule closed>"
        return f"<dtrain.PipelineSchedule {self._kind.name} over {self._stages} stages>"


def _kind(kind):
    if isinstance(kind, str):
        try:
            return int(_KIND_NAMES[kind.lower()])
        except KeyError:
            raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT,
                                       f"kind: {kind!r} is not one of {', '.join(_KIND_NAMES)}") from None
    return _count(kind, "kind")


def _count(value, name):
    """`value` as a C int; anything else is refused naming `name`."""
    try:
        number = int(value.__index__())
    except (AttributeError, TypeError):
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT, f"{name}: {value!r} is not an integer") from None
    if not -2**31 <= number < 2**31:
        raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT, f"{name}: {number} does not fit a C int")
    return number
