"""dtrain: distributed training collectives, data parallelism, ZeRO, the device mesh, tensor, pipeline,
expert and context parallelism, optimizers and the parallelism planner over libdtrain.

    import numpy as np
    import dtrain

    with dtrain.Comm() as comm:
        grad = np.ones(1024, dtype=np.float32)
        comm.allreduce(grad, op="avg")

Tensors are numpy arrays or any object with ``__dlpack__`` (torch, cupy, jax)
or the buffer protocol. Failures raise :class:`Error` subclasses, one per
status code.
"""

from ._constants import (UNDEF, Backend, BucketState, Compression, OptimizerKind, PipelineActionKind, PipelineKind,
                         PlanFormat, PlanReason, PlanRecompute, ReduceOp, Status)
from ._errors import (AbortedError, AuthError, Error, InternalError, InvalidArgumentError,
                      InvalidUsageError, IoError, MismatchError, OutOfMemoryError, RemoteError, TimeoutError,
                      TransportError, UnsupportedError)
from ._library import build_info, error_last, status_string, tensor_check, version
from ._log import LogLevel, set_log_handler, set_log_level
from ._comm import Comm, OpStats, P2POp
from ._constants import OpKind
from ._request import Request
from ._optim import Optimizer, StepInfo
from ._ddp import DDP, broadcast_parameters
from ._device_array import DeviceArray
from ._zero import Zero, ZeroMemory
from ._mesh import Mesh
from . import _tp as tp
from ._pipeline import PipelineAction, PipelineSchedule
from ._moe import (DENSE_GRAD_DIMS, EXPERT_GRAD_DIMS, MoeActivation, MoeDropPolicy, MoeOptions, MoePlan,
                   MoeScoring, moe_balance_loss, moe_experts_backward, moe_experts_forward, moe_route,
                   moe_route_backward, moe_z_loss)
from ._pipeline_executor import Pipeline, PipelineStepInfo
from ._cp import (CpLayout, attention, attention_merge, cp_positions, cp_shard, cp_unshard,
                  ring_attention_backward, ring_attention_forward, ulysses_attention_backward,
                  ulysses_attention_forward)
from ._plan import (Plan, PlanCluster, PlanConfig, PlanEstimate, PlanModel, PlanRejectedError, PlanRejection,
                    cluster_load, cluster_preset, plan_evaluate, zero_memory)

# The C API's constants under their short names: dtrain.SUM, dtrain.ERR_TIMEOUT, ...
globals().update({member.name: member for member in Status})
globals().update({member.name: member for member in ReduceOp})
globals().update({f"BACKEND_{member.name}": member for member in Backend})
globals().update({f"OPTIM_{member.name}": member for member in OptimizerKind})
globals().update({f"COMPRESS_{member.name}": member for member in Compression})
globals().update({f"BUCKET_{member.name}": member for member in BucketState})

__version__ = "%d.%d.%d" % version()

__all__ = [
    "Comm", "P2POp", "Request", "OpStats", "OpKind", "Optimizer", "StepInfo", "DDP", "broadcast_parameters", "version",
    "Zero", "ZeroMemory", "DeviceArray",
    "Mesh", "tp", "PipelineSchedule", "PipelineAction", "PipelineKind", "PipelineActionKind",
    "Pipeline", "PipelineStepInfo",
    "MoeOptions", "MoePlan", "MoeScoring", "MoeDropPolicy", "moe_route", "moe_route_backward",
    "moe_balance_loss", "moe_z_loss", "MoeActivation", "moe_experts_forward", "moe_experts_backward",
    "EXPERT_GRAD_DIMS", "DENSE_GRAD_DIMS",
    "CpLayout", "cp_positions", "cp_shard", "cp_unshard", "attention", "attention_merge",
    "ring_attention_forward", "ring_attention_backward", "ulysses_attention_forward", "ulysses_attention_backward",
    "Plan", "PlanModel", "PlanCluster", "PlanConfig", "PlanEstimate", "PlanRejection", "PlanRejectedError",
    "PlanRecompute", "PlanReason", "PlanFormat", "cluster_preset", "cluster_load", "plan_evaluate", "zero_memory",
    "build_info", "status_string", "error_last", "tensor_check", "LogLevel", "set_log_handler", "set_log_level",
    "Status", "ReduceOp", "Backend", "OptimizerKind", "Compression", "BucketState", "UNDEF",
    "Error", "InvalidArgumentError", "InvalidUsageError", "UnsupportedError", "OutOfMemoryError",
    "TimeoutError", "RemoteError", "TransportError", "AbortedError", "AuthError", "MismatchError",
    "InternalError", "IoError",
] + [m.name for m in Status] + [m.name for m in ReduceOp]
__all__ += [f"BACKEND_{m.name}" for m in Backend] + [f"OPTIM_{m.name}" for m in OptimizerKind]
__all__ += [f"COMPRESS_{m.name}" for m in Compression] + [f"BUCKET_{m.name}" for m in BucketState]
