"""Status codes, reduce ops, backends, optimizer kinds, DDP, pipeline, tensor-parallel and planner enums, with the C API's values."""

import enum

from . import _capi

#: An integer option left unset: the default, or what the environment says.
UNDEF = _capi.DT_UNDEF


class Status(enum.IntEnum):
    OK = _capi.DT_OK
    INPROGRESS = _capi.DT_INPROGRESS
    ERR_INVALID_ARGUMENT = _capi.DT_ERR_INVALID_ARGUMENT
    ERR_INVALID_USAGE = _capi.DT_ERR_INVALID_USAGE
    ERR_UNSUPPORTED = _capi.DT_ERR_UNSUPPORTED
    ERR_OUT_OF_MEMORY = _capi.DT_ERR_OUT_OF_MEMORY
    ERR_TIMEOUT = _capi.DT_ERR_TIMEOUT
    ERR_REMOTE = _capi.DT_ERR_REMOTE
    ERR_TRANSPORT = _capi.DT_ERR_TRANSPORT
    ERR_ABORTED = _capi.DT_ERR_ABORTED
    ERR_AUTH = _capi.DT_ERR_AUTH
    ERR_MISMATCH = _capi.DT_ERR_MISMATCH
    ERR_INTERNAL = _capi.DT_ERR_INTERNAL
    ERR_IO = _capi.DT_ERR_IO


class ReduceOp(enum.IntEnum):
    SUM = _capi.DT_SUM
    AVG = _capi.DT_AVG
    MAX = _capi.DT_MAX
    MIN = _capi.DT_MIN
    PROD = _capi.DT_PROD


class OpKind(enum.IntEnum):
    """The kinds of operation :meth:`Comm.stats` counts (dt_op_kind); ALL sums them."""
    ALL = _capi.DT_OP_ALL
    ALLREDUCE = _capi.DT_OP_ALLREDUCE
    REDUCE_SCATTER = _capi.DT_OP_REDUCE_SCATTER
    ALLGATHER = _capi.DT_OP_ALLGATHER
    BROADCAST = _capi.DT_OP_BROADCAST
    ALLTOALL = _capi.DT_OP_ALLTOALL
    ALLTOALLV = _capi.DT_OP_ALLTOALLV
    BARRIER = _capi.DT_OP_BARRIER
    REDUCE = _capi.DT_OP_REDUCE
    GATHER = _capi.DT_OP_GATHER
    SCATTER = _capi.DT_OP_SCATTER
    ALLGATHERV = _capi.DT_OP_ALLGATHERV
    REDUCE_SCATTERV = _capi.DT_OP_REDUCE_SCATTERV
    SEND = _capi.DT_OP_SEND
    RECV = _capi.DT_OP_RECV
    P2P_GROUP = _capi.DT_OP_P2P_GROUP


class Backend(enum.IntEnum):
    AUTO = _capi.DT_BACKEND_AUTO
    UCX = _capi.DT_BACKEND_UCX
    NCCL = _capi.DT_BACKEND_NCCL


class OptimizerKind(enum.IntEnum):
    SGD = _capi.DT_OPTIM_SGD
    ADAMW = _capi.DT_OPTIM_ADAMW


class Compression(enum.IntEnum):
    """The type a :class:`DDP`'s gradients travel in (``dt_ddp_compression``)."""
    NONE = _capi.DT_DDP_COMPRESS_NONE
    F16 = _capi.DT_DDP_COMPRESS_F16
    BF16 = _capi.DT_DDP_COMPRESS_BF16


class BucketState(enum.IntEnum):
    """Where a :class:`DDP` bucket is in the current step (``dt_bucket_state``)."""
    WAITING = _capi.DT_BUCKET_WAITING
    IN_FLIGHT = _capi.DT_BUCKET_IN_FLIGHT
    REDUCED = _capi.DT_BUCKET_REDUCED
    FAILED = _capi.DT_BUCKET_FAILED


class PipelineKind(enum.IntEnum):
    """The algorithm of a :class:`PipelineSchedule` (``dt_pipeline_schedule_kind``)."""
    GPIPE = _capi.DT_PIPELINE_GPIPE
    ONE_F_ONE_B = _capi.DT_PIPELINE_1F1B
    INTERLEAVED_1F1B = _capi.DT_PIPELINE_INTERLEAVED_1F1B
    ZB_H1 = _capi.DT_PIPELINE_ZB_H1


class PipelineActionKind(enum.IntEnum):
    """What one step of a pipeline schedule does (``dt_pipeline_action_kind``)."""
    FORWARD = _capi.DT_PIPELINE_FORWARD
    BACKWARD = _capi.DT_PIPELINE_BACKWARD
    BACKWARD_INPUT = _capi.DT_PIPELINE_BACKWARD_INPUT
    BACKWARD_WEIGHT = _capi.DT_PIPELINE_BACKWARD_WEIGHT
    SEND_ACTIVATION = _capi.DT_PIPELINE_SEND_ACTIVATION
    RECV_ACTIVATION = _capi.DT_PIPELINE_RECV_ACTIVATION
    SEND_GRAD = _capi.DT_PIPELINE_SEND_GRAD
    RECV_GRAD = _capi.DT_PIPELINE_RECV_GRAD


def status_or_int(value):
    """``value`` as a Status when it is one; statuses a newer library adds stay ints."""
    try:
        return Status(value)
    except ValueError:
        return int(value)


class TpRegion(enum.IntEnum):
    """The conjugate mappings (dt_tp_region)."""
    COPY = _capi.DT_TP_COPY
    REDUCE = _capi.DT_TP_REDUCE
    SCATTER = _capi.DT_TP_SCATTER
    GATHER = _capi.DT_TP_GATHER
    SEQ_GATHER = _capi.DT_TP_SEQ_GATHER
    SEQ_REDUCE_SCATTER = _capi.DT_TP_SEQ_REDUCE_SCATTER


class TpShardKind(enum.IntEnum):
    """How a full weight is split (dt_tp_shard_kind)."""
    ROWS = _capi.DT_TP_SHARD_ROWS
    COLUMNS = _capi.DT_TP_SHARD_COLUMNS
    QKV = _capi.DT_TP_SHARD_QKV


class PlanRecompute(enum.IntEnum):
    """Activation recomputation a plan considers (``dt_plan_recompute``)."""
    NONE = _capi.DT_PLAN_RECOMPUTE_NONE
    SELECTIVE = _capi.DT_PLAN_RECOMPUTE_SELECTIVE
    FULL = _capi.DT_PLAN_RECOMPUTE_FULL


class PlanReason(enum.IntEnum):
    """Why a configuration was rejected (``dt_plan_reason``)."""
    ACCEPTED = _capi.DT_PLAN_ACCEPTED
    GPUS = _capi.DT_PLAN_REJECT_GPUS
    HEADS_TP = _capi.DT_PLAN_REJECT_HEADS_TP
    FFN_TP = _capi.DT_PLAN_REJECT_FFN_TP
    LAYERS_PP = _capi.DT_PLAN_REJECT_LAYERS_PP
    SEQ_CP = _capi.DT_PLAN_REJECT_SEQ_CP
    EXPERTS_EP = _capi.DT_PLAN_REJECT_EXPERTS_EP
    BATCH = _capi.DT_PLAN_REJECT_BATCH
    SCHEDULE = _capi.DT_PLAN_REJECT_SCHEDULE
    MEMORY = _capi.DT_PLAN_REJECT_MEMORY


class PlanFormat(enum.IntEnum):
    """Output formats of :meth:`Plan.write` (``dt_plan_format``)."""
    TABLE = _capi.DT_PLAN_TABLE
    JSON = _capi.DT_PLAN_JSON
    SVG = _capi.DT_PLAN_SVG
