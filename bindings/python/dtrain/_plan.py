"""The parallelism planner (``dtrain/plan.h``): every way of training a
transformer on a cluster, ranked by estimated step time, with memory per GPU
and step time broken down, and why the others were rejected.

    model = dtrain.PlanModel(layers=96, hidden=12288, heads=96, vocab=51200, seq_len=2048)
    cluster = dtrain.cluster_preset("h100", nodes=64)
    with dtrain.Plan(model, cluster, global_batch=1536) as plan:
        best = plan.ranked()[0]             # a PlanEstimate
        print(best.config, best.time["step"], best.memory["total"])
        plan.write("plan.svg", "svg", top=10)
"""

import dataclasses
import os

from . import _capi
from ._comm import _choice
from ._constants import UNDEF, PipelineKind, PlanFormat, PlanReason, PlanRecompute
from ._arguments import _integer, _real
from ._errors import InvalidArgumentError
from ._handle import _Handle
from ._optim import _options
from ._zero import ZeroMemory

_MEMORY = ("parameters", "gradients", "optimizer_state", "master_weights", "activations",
           "activations_without_recompute", "communication", "total")
_TIME = ("compute", "recompute", "bubble", "tp", "cp", "ep", "pp", "dp", "optimizer", "step")
_CLUSTER = ("nodes", "gpus_per_node", "gpu_memory", "peak_flops", "memory_bandwidth", "gemm_efficiency",
            "intra_bandwidth", "intra_latency", "inter_bandwidth", "inter_latency", "overlap")
_DTYPES = {"float32": (2, 32, 1), "float16": (2, 16, 1), "bfloat16": (4, 16, 1)}


@dataclasses.dataclass(frozen=True)
class PlanModel:
    """A decoder-only transformer (``dt_plan_model``); None: the library's default."""
    layers: int
    hidden: int
    heads: int
    vocab: int
    seq_len: int
    kv_heads: int = None
    ffn_hidden: int = None
    experts: int = None
    top_k: int = None

    def _c(self):
        m = _capi.dt_plan_model()
        _capi.dt_plan_model_init(m, _capi.DT_PLAN_MODEL_VERSION)
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            setattr(m, field.name, UNDEF if value is None else _integer(value, field.name))
        return m


@dataclasses.dataclass(frozen=True)
class PlanCluster:
    """Identical nodes of GPUs (``dt_plan_cluster``): bytes, FLOP/s, bytes/s and seconds;
    ``overlap`` is the share of data- and context-parallel communication that
    compute hides, in [0, 1] (1 for GPUs, 0 for CPU ranks without a spare core)."""
    nodes: int
    gpus_per_node: int
    gpu_memory: float
    peak_flops: float
    memory_bandwidth: float
    gemm_efficiency: float
    intra_bandwidth: float
    intra_latency: float
    inter_bandwidth: float
    inter_latency: float
    overlap: float = 1.0

    @classmethod
    def _from(cls, c):
        return cls(*(getattr(c, name) for name in _CLUSTER))

    def _c(self):
        c = _capi.dt_plan_cluster()
        c.version = _capi.DT_PLAN_CLUSTER_VERSION
        for name in _CLUSTER:
            setattr(c, name, getattr(self, name))
        return c


@dataclasses.dataclass(frozen=True)
class PlanConfig:
    """One way of running a step (``dt_plan_config``)."""
    dp: int = 1
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    zero_stage: int = 0
    schedule: PipelineKind = PipelineKind.ONE_F_ONE_B
    virtual_stages: int = 1
    micro_batch: int = 1
    recompute: PlanRecompute = PlanRecompute.NONE

    @classmethod
    def _from(cls, c):
        return cls(c.dp, c.tp, c.pp, c.cp, c.ep, c.zero_stage, PipelineKind(c.schedule), c.virtual_stages,
                   c.micro_batch, PlanRecompute(c.recompute))

    def _c(self):
        c = _capi.dt_plan_config()
        _capi.dt_plan_config_init(c, _capi.DT_PLAN_CONFIG_VERSION)
        for name in ("dp", "tp", "pp", "cp", "ep", "zero_stage", "virtual_stages", "micro_batch"):
            setattr(c, name, _integer(getattr(self, name), name))
        c.schedule = _choice(PipelineKind, self.schedule, "schedule")
        c.recompute = _choice(PlanRecompute, self.recompute, "recompute")
        return c


@dataclasses.dataclass(frozen=True)
class PlanEstimate:
    """A configuration's estimate (``dt_plan_estimate``): ``memory`` in bytes per GPU and ``time``
    in seconds per step, each a dict of the terms (``memory["total"]``, ``time["step"]``)."""
    reason: PlanReason
    config: PlanConfig
    micro_batches: int
    memory: dict
    time: dict
    model_flops: float
    hardware_flops: float
    mfu: float
    tflops_per_gpu: float

    @classmethod
    def _from(cls, e):
        return cls(PlanReason(e.reason), PlanConfig._from(e.config), e.micro_batches,
                   {name: getattr(e, "mem_" + name) for name in _MEMORY},
                   {name: getattr(e, "time_" + name) for name in _TIME},
                   e.model_flops, e.hardware_flops, e.mfu, e.tflops_per_gpu)


@dataclasses.dataclass(frozen=True)
class PlanRejection:
    """How many configurations were rejected for one reason, the first of them, and why."""
    reason: PlanReason
    count: int
    example: PlanConfig
    message: str


class PlanRejectedError(InvalidArgumentError):
    """:func:`plan_evaluate` refused a configuration: ``reason`` says why, and ``estimate`` holds
    what it would take when the reason is memory (None otherwise)."""

    def __init__(self, error, estimate):
        super().__init__(error.status, str(error))
        self.reason = estimate.reason
        self.estimate = estimate if estimate.reason == PlanReason.MEMORY else None


def cluster_preset(name, nodes=1):
    """``nodes`` nodes of a preset kind: "a100", "h100" or "h200" (8 GPUs each)."""
    c = _capi.dt_plan_cluster()
    c.version = _capi.DT_PLAN_CLUSTER_VERSION
    _capi.dt_plan_cluster_preset(c, str(name), _integer(nodes, "nodes"))
    return PlanCluster._from(c)


def cluster_load(path):
    """A cluster file ("key = value" lines; see ``dtrain/plan.h``)."""
    c = _capi.dt_plan_cluster()
    c.version = _capi.DT_PLAN_CLUSTER_VERSION
    _capi.dt_plan_cluster_load(c, os.fspath(path))
    return PlanCluster._from(c)


def _plan_options(global_batch, dimensions=None, zero_stages=None, schedules=None, recompute=None,
                  max_micro_batch=None, max_virtual_stages=None, sequence_parallel=None, memory_fraction=None,
                  keep=None):
    """A dt_plan_options; the sets (dimensions "tp", "pp", "cp", "ep"; ZeRO stages; schedules;
    recompute) are iterables of names or values, None meaning all."""
    o = _capi.dt_plan_options()
    _capi.dt_plan_options_init(o, _capi.DT_PLAN_OPTIONS_VERSION)
    o.global_batch = _integer(global_batch, "global_batch")
    bits = {"tp": _capi.DT_PLAN_DIM_TP, "pp": _capi.DT_PLAN_DIM_PP, "cp": _capi.DT_PLAN_DIM_CP,
            "ep": _capi.DT_PLAN_DIM_EP}
    if dimensions is not None:
        o.dimensions = sum(bits[d] for d in set(dimensions))
    if zero_stages is not None:
        o.zero_stages = sum(1 << _integer(s, "zero_stages") for s in set(zero_stages))
    if schedules is not None:
        o.schedules = sum(1 << int(_choice(PipelineKind, s, "schedules")) for s in set(schedules))
    if recompute is not None:
        o.recompute = sum(1 << int(_choice(PlanRecompute, r, "recompute")) for r in set(recompute))
    for name, value in (("max_micro_batch", max_micro_batch), ("max_virtual_stages", max_virtual_stages)):
        if value is not None:
            setattr(o, name, _integer(value, name))
    if sequence_parallel is not None:
        o.sequence_parallel = int(bool(sequence_parallel))
    if memory_fraction is not None:
        o.memory_fraction = _real(memory_fraction, "memory_fraction")
    if keep is not None:
        o.keep = _integer(keep, "keep")
    return o


class Plan(_Handle):
    """Every configuration of ``cluster``'s GPUs for ``model``, the fastest ``keep`` ranked.

    Keyword options: ``dimensions`` (searched among "tp", "pp", "cp", "ep"), ``zero_stages``,
    ``schedules``, ``recompute``, ``max_micro_batch``, ``max_virtual_stages``,
    ``sequence_parallel``, ``memory_fraction``, ``keep``.
    """

    _noun = "plan"

    def __init__(self, model, cluster, global_batch, **options):
        self._handle = _capi.dt_plan_create(model._c(), cluster._c(), _plan_options(global_batch, **options))

    def close(self):
        """Frees the plan. Safe to call twice."""
        handle, self._handle = self._handle, None
        if handle is not None:
            _capi.dt_plan_destroy(handle)

    def summary(self):
        """A dict: configurations ``evaluated``, ``feasible``, ``kept`` and the search's ``seconds``."""
        s = _capi.dt_plan_summary()
        s.version = _capi.DT_PLAN_SUMMARY_VERSION
        _capi.dt_plan_info(self._live(), s)
        return {"evaluated": s.evaluated, "feasible": s.feasible, "kept": s.kept, "seconds": s.seconds}

    def ranked(self):
        """The kept :class:`PlanEstimate` list, fastest first."""
        handle = self._live()
        out = []
        for i in range(self.summary()["kept"]):
            e = _capi.dt_plan_estimate()
            e.version = _capi.DT_PLAN_ESTIMATE_VERSION
            _capi.dt_plan_ranked(handle, i, e)
            out.append(PlanEstimate._from(e))
        return out

    def rejections(self):
        """``{PlanReason: PlanRejection}`` for every reason that rejected something."""
        handle = self._live()
        found = {}
        for reason in PlanReason:
            if reason == PlanReason.ACCEPTED:
                continue
            r = _capi.dt_plan_rejection()
            r.version = _capi.DT_PLAN_REJECTION_VERSION
            _capi.dt_plan_rejected(handle, reason, r)
            if r.count:
                found[reason] = PlanRejection(reason, r.count, PlanConfig._from(r.example), r.message)
        return found

    def write(self, path, format="table", top=0):
        """Writes the ``top`` fastest (0: all kept) as "table", "json" or "svg" ("-": standard output)."""
        _capi.dt_plan_write(self._live(), os.fspath(path), _choice(PlanFormat, format, "format"),
                            _integer(top, "top"))


def plan_evaluate(model, cluster, config, global_batch, **options):
    """The :class:`PlanEstimate` of one :class:`PlanConfig`; raises :class:`PlanRejectedError`
    (``reason``, and ``estimate`` for memory) when it is rejected."""
    e = _capi.dt_plan_estimate()
    e.version = _capi.DT_PLAN_ESTIMATE_VERSION
    try:
        _capi.dt_plan_evaluate(model._c(), cluster._c(), _plan_options(global_batch, **options), config._c(), e)
    except InvalidArgumentError as error:
        if e.reason == PlanReason.ACCEPTED:
            raise
        raise PlanRejectedError(error, PlanEstimate._from(e)) from None
    return PlanEstimate._from(e)


def zero_memory(unit_elements, stage, ranks, rank=0, dtype="bfloat16", kind="adamw", **optimizer):
    """What a :class:`Zero` over units of ``unit_elements`` elements will hold on ``rank``
    right after creation (a :class:`ZeroMemory`), for optimizer ``kind`` and its options."""
    if dtype not in _DTYPES:
        raise InvalidArgumentError(_capi.DT_ERR_INVALID_ARGUMENT,
                                   f"dtype: {dtype!r} is not one of {', '.join(map(repr, _DTYPES))}")
    m = _capi.dt_plan_zero_memory(list(unit_elements), _integer(stage, "stage"), _integer(ranks, "ranks"),
                                  _integer(rank, "rank"), _DTYPES[dtype], _options(kind, **optimizer))
    return ZeroMemory._from_c(m)
