"""
    DTrain

Julia binding of libdtrain, distributed training as an embeddable library.

Arrays are handed to the library as borrowed DLPack tensors: dense host arrays of
`Float32`, `Float64`, `Float16`, `Int32`, `Int64`, `Int8` or `UInt8`, or CUDA
device memory described by a [`DeviceBuffer`](@ref). Handles
(`Comm`, `Request`, `Optimizer`, `DDP`, `Zero`, `Mesh`, `PipelineSchedule`, `MoePlan`, `Plan`) are freed by `close` or, failing that, by their
finalizers, which only release local resources and never communicate.

The library is `ENV["LIBDTRAIN"]` when set, otherwise `libdtrain.so.0` from the
system's library path; it is opened on first use.
"""
module DTrain

using Libdl

export DTrainError, Status, status_string
export DT_OK, DT_INPROGRESS, DT_ERR_INVALID_ARGUMENT, DT_ERR_INVALID_USAGE, DT_ERR_UNSUPPORTED,
       DT_ERR_OUT_OF_MEMORY, DT_ERR_TIMEOUT, DT_ERR_REMOTE, DT_ERR_TRANSPORT, DT_ERR_ABORTED,
       DT_ERR_AUTH, DT_ERR_MISMATCH, DT_ERR_INTERNAL, DT_ERR_IO
export Backend, DT_BACKEND_AUTO, DT_BACKEND_UCX, DT_BACKEND_NCCL
export ReduceOp, DT_SUM, DT_AVG, DT_MAX, DT_MIN, DT_PROD
export Comm, comm_rank, comm_size, abort, barrier, bind_thread
export LogLevel, DT_LOG_ERROR, DT_LOG_WARN, DT_LOG_INFO, DT_LOG_DEBUG, DT_LOG_TRACE, set_log_level, set_log_callback
export Request, test
export allreduce!, reduce_scatter!, allgather!, alltoall!, alltoallv!, send, recv!
export iallreduce!, ireduce_scatter!, iallgather!, ibroadcast!, ialltoall!, ialltoallv!, isend, irecv!
export reduce!, scatter!, allgatherv!, reduce_scatterv!, ireduce!, igather!, iscatter!, iallgatherv!,
       ireduce_scatterv!
export P2POp, p2p_group, ip2p_group
export OpKind, OpStats, comm_stats, DT_OP_ALL, DT_OP_ALLREDUCE, DT_OP_REDUCE_SCATTER, DT_OP_ALLGATHER,
       DT_OP_BROADCAST, DT_OP_ALLTOALL, DT_OP_ALLTOALLV, DT_OP_BARRIER, DT_OP_REDUCE, DT_OP_GATHER, DT_OP_SCATTER,
       DT_OP_ALLGATHERV, DT_OP_REDUCE_SCATTERV, DT_OP_SEND, DT_OP_RECV, DT_OP_P2P_GROUP
export tensor_check, DeviceBuffer
export Optimizer, OptimizerKind, DT_OPTIM_SGD, DT_OPTIM_ADAMW, StepInfo, step!, zero_grad!,
       learning_rate, set_learning_rate!, loss_scale
export DDP, Compression, DT_DDP_COMPRESS_NONE, DT_DDP_COMPRESS_F16, DT_DDP_COMPRESS_BF16,
       BucketState, DT_BUCKET_WAITING, DT_BUCKET_IN_FLIGHT, DT_BUCKET_REDUCED, DT_BUCKET_FAILED,
       mark_ready!, set_sync!, is_sync, no_sync, set_local_weight!, bucket_count, bucket_of,
       bucket_state, broadcast_parameters!
export Zero, ZeroMemory, parameter, gradient, gather!, gather_wait, release!, with_unit, unit_count,
       memory_usage, save_checkpoint, load_checkpoint!
export Mesh, mesh_ndims, mesh_size, mesh_rank, mesh_dim_name, mesh_dim_index, mesh_dim_size, mesh_coord,
       mesh_coords_of, mesh_rank_at, mesh_group_ranks, mesh_comm
export PipelineSchedule, PipelineAction, PipelineScheduleKind, DT_PIPELINE_GPIPE, DT_PIPELINE_1F1B,
       DT_PIPELINE_INTERLEAVED_1F1B, DT_PIPELINE_ZB_H1, PipelineActionKind, DT_PIPELINE_FORWARD,
       DT_PIPELINE_BACKWARD, DT_PIPELINE_BACKWARD_INPUT, DT_PIPELINE_BACKWARD_WEIGHT, DT_PIPELINE_SEND_ACTIVATION,
       DT_PIPELINE_RECV_ACTIVATION, DT_PIPELINE_SEND_GRAD, DT_PIPELINE_RECV_GRAD, action_count, action, actions,
       bubble_fraction, peak_in_flight, Pipeline, PipelineStepInfo
export MoeOptions, MoeScoring, DT_MOE_SOFTMAX, DT_MOE_SIGMOID, MoeDropPolicy, DT_MOE_DROP_BY_POSITION,
       DT_MOE_DROP_BY_SCORE, MOE_EXPERT_GRAD_DIMS, MOE_DENSE_GRAD_DIMS, moe_route, moe_route_backward,
       moe_balance_loss, moe_z_loss, MoePlan, moe_local_experts, moe_received, moe_expert_counts, moe_dispatch,
       moe_dispatch!, moe_combine, moe_combine!, moe_combine_backward, moe_combine_backward!, moe_dispatch_backward,
       moe_dispatch_backward!, MoeActivation, DT_MOE_GELU_TANH, DT_MOE_GELU_ERF,
       DT_MOE_SILU, moe_experts_forward, moe_experts_backward
export CpLayout, DT_CP_CONTIGUOUS, DT_CP_ZIGZAG, cp_positions, cp_shard!, cp_unshard!, attention, attention_merge!,
       ring_attention_forward, ring_attention_backward, ulysses_attention_forward, ulysses_attention_backward
export Plan, PlanModel, PlanCluster, PlanOptions, PlanConfig, PlanEstimate, PlanSummary, PlanRecompute,
       DT_PLAN_RECOMPUTE_NONE, DT_PLAN_RECOMPUTE_SELECTIVE, DT_PLAN_RECOMPUTE_FULL, PlanDimension, DT_PLAN_DIM_TP,
       DT_PLAN_DIM_PP, DT_PLAN_DIM_CP, DT_PLAN_DIM_EP, PlanReason, DT_PLAN_ACCEPTED, DT_PLAN_REJECT_GPUS,
       DT_PLAN_REJECT_HEADS_TP, DT_PLAN_REJECT_FFN_TP, DT_PLAN_REJECT_LAYERS_PP, DT_PLAN_REJECT_SEQ_CP,
       DT_PLAN_REJECT_EXPERTS_EP, DT_PLAN_REJECT_BATCH, DT_PLAN_REJECT_SCHEDULE, DT_PLAN_REJECT_MEMORY, PlanFormat,
       DT_PLAN_TABLE, DT_PLAN_JSON, DT_PLAN_SVG, cluster_preset, cluster_load, plan_summary, plan_ranked,
       plan_rejection, plan_write, plan_evaluate, zero_memory

include("library.jl")
include("status.jl")
include("version.jl")
include("log.jl")
include("dlpack.jl")
include("tensor.jl")
include("options.jl")
include("oob.jl")
include("comm.jl")
include("request.jl")
include("collectives.jl")
include("p2p.jl")
include("optimizer.jl")
include("ddp.jl")
include("zero.jl")
include("mesh.jl")
include("tp.jl")
include("pipeline.jl")
include("moe.jl")
include("pipeline_executor.jl")
include("cp.jl")
include("plan.jl")
include("stats.jl")

end # module
