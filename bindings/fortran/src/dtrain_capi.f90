! Generated from the headers in capi/include/dtrain by bindings/fortran/generate.py; do not edit.
!
! The raw C API of libdtrain: every DT_API function as a bind(C) interface, every
! struct as a bind(C) type of the same layout, every constant. See generate.py for
! how C types map to Fortran, and the module dtrain for the high-level layer.
module dtrain_capi
  use, intrinsic :: iso_c_binding
  implicit none
  public

  ! DLPack device types and dtype codes
  integer(c_int), parameter :: kDLCPU = 1
  integer(c_int), parameter :: kDLCUDA = 2
  integer(c_int), parameter :: kDLCUDAHost = 3
  integer(c_int), parameter :: kDLInt = 0
  integer(c_int), parameter :: kDLUInt = 1
  integer(c_int), parameter :: kDLFloat = 2
  integer(c_int), parameter :: kDLBfloat = 4

  ! dt_backend
  integer(c_int), parameter :: DT_BACKEND_AUTO = 0
  integer(c_int), parameter :: DT_BACKEND_UCX = 1
  integer(c_int), parameter :: DT_BACKEND_NCCL = 2

  ! dt_reduce_op
  integer(c_int), parameter :: DT_SUM = 0
  integer(c_int), parameter :: DT_AVG = 1
  integer(c_int), parameter :: DT_MAX = 2
  integer(c_int), parameter :: DT_MIN = 3
  integer(c_int), parameter :: DT_PROD = 4

  ! dt_p2p_kind
  integer(c_int), parameter :: DT_P2P_SEND = 0
  integer(c_int), parameter :: DT_P2P_RECV = 1

  ! dt_op_kind
  integer(c_int), parameter :: DT_OP_ALL = 0
  integer(c_int), parameter :: DT_OP_ALLREDUCE = 1
  integer(c_int), parameter :: DT_OP_REDUCE_SCATTER = 2
  integer(c_int), parameter :: DT_OP_ALLGATHER = 3
  integer(c_int), parameter :: DT_OP_BROADCAST = 4
  integer(c_int), parameter :: DT_OP_ALLTOALL = 5
  integer(c_int), parameter :: DT_OP_ALLTOALLV = 6
  integer(c_int), parameter :: DT_OP_BARRIER = 7
  integer(c_int), parameter :: DT_OP_REDUCE = 8
  integer(c_int), parameter :: DT_OP_GATHER = 9
  integer(c_int), parameter :: DT_OP_SCATTER = 10
  integer(c_int), parameter :: DT_OP_ALLGATHERV = 11
  integer(c_int), parameter :: DT_OP_REDUCE_SCATTERV = 12
  integer(c_int), parameter :: DT_OP_SEND = 13
  integer(c_int), parameter :: DT_OP_RECV = 14
  integer(c_int), parameter :: DT_OP_P2P_GROUP = 15

  ! dt_cp_layout
  integer(c_int), parameter :: DT_CP_CONTIGUOUS = 0
  integer(c_int), parameter :: DT_CP_ZIGZAG = 1

  ! dt_ddp_compression
  integer(c_int), parameter :: DT_DDP_COMPRESS_NONE = 0
  integer(c_int), parameter :: DT_DDP_COMPRESS_F16 = 1
  integer(c_int), parameter :: DT_DDP_COMPRESS_BF16 = 2

  ! dt_bucket_state
  integer(c_int), parameter :: DT_BUCKET_WAITING = 0
  integer(c_int), parameter :: DT_BUCKET_IN_FLIGHT = 1
  integer(c_int), parameter :: DT_BUCKET_REDUCED = 2
  integer(c_int), parameter :: DT_BUCKET_FAILED = 3

  ! dt_log_level
  integer(c_int), parameter :: DT_LOG_ERROR = 0
  integer(c_int), parameter :: DT_LOG_WARN = 1
  integer(c_int), parameter :: DT_LOG_INFO = 2
  integer(c_int), parameter :: DT_LOG_DEBUG = 3
  integer(c_int), parameter :: DT_LOG_TRACE = 4

  ! dt_moe_scoring
  integer(c_int), parameter :: DT_MOE_SOFTMAX = 0
  integer(c_int), parameter :: DT_MOE_SIGMOID = 1

  ! dt_moe_drop_policy
  integer(c_int), parameter :: DT_MOE_DROP_BY_POSITION = 0
  integer(c_int), parameter :: DT_MOE_DROP_BY_SCORE = 1

  ! dt_moe_activation
  integer(c_int), parameter :: DT_MOE_GELU_TANH = 0
  integer(c_int), parameter :: DT_MOE_GELU_ERF = 1
  integer(c_int), parameter :: DT_MOE_SILU = 2

  ! dt_optimizer_kind
  integer(c_int), parameter :: DT_OPTIM_SGD = 0
  integer(c_int), parameter :: DT_OPTIM_ADAMW = 1

  ! dt_pipeline_schedule_kind
  integer(c_int), parameter :: DT_PIPELINE_GPIPE = 0
  integer(c_int), parameter :: DT_PIPELINE_1F1B = 1
  integer(c_int), parameter :: DT_PIPELINE_INTERLEAVED_1F1B = 2
  integer(c_int), parameter :: DT_PIPELINE_ZB_H1 = 3

  ! dt_pipeline_action_kind
  integer(c_int), parameter :: DT_PIPELINE_FORWARD = 0
  integer(c_int), parameter :: DT_PIPELINE_BACKWARD = 1
  integer(c_int), parameter :: DT_PIPELINE_BACKWARD_INPUT = 2
  integer(c_int), parameter :: DT_PIPELINE_BACKWARD_WEIGHT = 3
  integer(c_int), parameter :: DT_PIPELINE_SEND_ACTIVATION = 4
  integer(c_int), parameter :: DT_PIPELINE_RECV_ACTIVATION = 5
  integer(c_int), parameter :: DT_PIPELINE_SEND_GRAD = 6
  integer(c_int), parameter :: DT_PIPELINE_RECV_GRAD = 7

  ! dt_plan_recompute
  integer(c_int), parameter :: DT_PLAN_RECOMPUTE_NONE = 0
  integer(c_int), parameter :: DT_PLAN_RECOMPUTE_SELECTIVE = 1
  integer(c_int), parameter :: DT_PLAN_RECOMPUTE_FULL = 2

  ! dt_plan_dimension
  integer(c_int), parameter :: DT_PLAN_DIM_TP = 1
  integer(c_int), parameter :: DT_PLAN_DIM_PP = 2
  integer(c_int), parameter :: DT_PLAN_DIM_CP = 4
  integer(c_int), parameter :: DT_PLAN_DIM_EP = 8

  ! dt_plan_reason
  integer(c_int), parameter :: DT_PLAN_ACCEPTED = 0
  integer(c_int), parameter :: DT_PLAN_REJECT_GPUS = 1
  integer(c_int), parameter :: DT_PLAN_REJECT_HEADS_TP = 2
  integer(c_int), parameter :: DT_PLAN_REJECT_FFN_TP = 3
  integer(c_int), parameter :: DT_PLAN_REJECT_LAYERS_PP = 4
  integer(c_int), parameter :: DT_PLAN_REJECT_SEQ_CP = 5
  integer(c_int), parameter :: DT_PLAN_REJECT_EXPERTS_EP = 6
  integer(c_int), parameter :: DT_PLAN_REJECT_BATCH = 7
  integer(c_int), parameter :: DT_PLAN_REJECT_SCHEDULE = 8
  integer(c_int), parameter :: DT_PLAN_REJECT_MEMORY = 9

  ! dt_plan_format
  integer(c_int), parameter :: DT_PLAN_TABLE = 0
  integer(c_int), parameter :: DT_PLAN_JSON = 1
  integer(c_int), parameter :: DT_PLAN_SVG = 2

  ! dt_status
  integer(c_int), parameter :: DT_OK = 0
  integer(c_int), parameter :: DT_INPROGRESS = 1
  integer(c_int), parameter :: DT_ERR_INVALID_ARGUMENT = -1
  integer(c_int), parameter :: DT_ERR_INVALID_USAGE = -2
  integer(c_int), parameter :: DT_ERR_UNSUPPORTED = -3
  integer(c_int), parameter :: DT_ERR_OUT_OF_MEMORY = -4
  integer(c_int), parameter :: DT_ERR_TIMEOUT = -5
  integer(c_int), parameter :: DT_ERR_REMOTE = -6
  integer(c_int), parameter :: DT_ERR_TRANSPORT = -7
  integer(c_int), parameter :: DT_ERR_ABORTED = -8
  integer(c_int), parameter :: DT_ERR_AUTH = -9
  integer(c_int), parameter :: DT_ERR_MISMATCH = -10
  integer(c_int), parameter :: DT_ERR_INTERNAL = -11
  integer(c_int), parameter :: DT_ERR_IO = -12

  ! dt_tp_region
  integer(c_int), parameter :: DT_TP_COPY = 0
  integer(c_int), parameter :: DT_TP_REDUCE = 1
  integer(c_int), parameter :: DT_TP_SCATTER = 2
  integer(c_int), parameter :: DT_TP_GATHER = 3
  integer(c_int), parameter :: DT_TP_SEQ_GATHER = 4
  integer(c_int), parameter :: DT_TP_SEQ_REDUCE_SCATTER = 5

  ! dt_tp_shard_kind
  integer(c_int), parameter :: DT_TP_SHARD_ROWS = 0
  integer(c_int), parameter :: DT_TP_SHARD_COLUMNS = 1
  integer(c_int), parameter :: DT_TP_SHARD_QKV = 2

  ! macros
  integer(c_int), parameter :: DT_COMM_OPTIONS_VERSION = 1
  integer(c_int), parameter :: DT_OP_STATS_VERSION = 1
  integer(c_int), parameter :: DT_UNDEF = -huge(0_c_int) - 1_c_int
  integer(c_int), parameter :: DT_DDP_OPTIONS_VERSION = 2
  integer(c_int), parameter :: DT_MESH_MAX_DIMS = 8
  integer(c_int), parameter :: DT_MESH_MAX_NAME = 15
  character(len=*), parameter :: DT_MOE_EXPERT_GRAD_DIMS = "dp,cp"
  character(len=*), parameter :: DT_MOE_DENSE_GRAD_DIMS = "dp,cp,ep"
  integer(c_int), parameter :: DT_MOE_OPTIONS_VERSION = 1
  integer(c_int), parameter :: DT_OPTIMIZER_OPTIONS_VERSION = 1
  integer(c_int), parameter :: DT_OPTIMIZER_STEP_INFO_VERSION = 1
  integer(c_int), parameter :: DT_PIPELINE_SCHEDULE_OPTIONS_VERSION = 1
  integer(c_int), parameter :: DT_PIPELINE_SCHEDULE_MAX_UNITS = 1048576
  integer(c_int), parameter :: DT_PIPELINE_OPTIONS_VERSION = 1
  integer(c_int), parameter :: DT_PIPELINE_STEP_INFO_VERSION = 1
  integer(c_int), parameter :: DT_PLAN_MODEL_VERSION = 1
  integer(c_int), parameter :: DT_PLAN_CLUSTER_VERSION = 2
  integer(c_int), parameter :: DT_PLAN_OPTIONS_VERSION = 1
  integer(c_int), parameter :: DT_PLAN_CONFIG_VERSION = 1
  integer(c_int), parameter :: DT_PLAN_ESTIMATE_VERSION = 1
  integer(c_int), parameter :: DT_PLAN_SUMMARY_VERSION = 1
  integer(c_int), parameter :: DT_PLAN_REJECTION_VERSION = 1
  integer(c_int), parameter :: DT_TP_SEQUENCE_PARALLEL = 1
  integer(c_int), parameter :: DT_TP_GATHER_OUTPUT = 2
  integer(c_int), parameter :: DT_TP_ACCUMULATE = 4
  integer(c_int), parameter :: DT_VERSION_MAJOR = 0
  integer(c_int), parameter :: DT_VERSION_MINOR = 1
  integer(c_int), parameter :: DT_VERSION_PATCH = 0
  integer(c_int), parameter :: DT_ZERO_OPTIONS_VERSION = 3
  integer(c_int), parameter :: DT_ZERO_MEMORY_VERSION = 1

  type, bind(C) :: DLDevice
    integer(c_int) :: device_type  ! int
    integer(c_int32_t) :: device_id  ! int32_t
  end type DLDevice

  type, bind(C) :: DLDataType
    integer(c_int8_t) :: code  ! uint8_t
    integer(c_int8_t) :: bits  ! uint8_t
    integer(c_int16_t) :: lanes  ! uint16_t
  end type DLDataType

  type, bind(C) :: DLTensor
    type(c_ptr) :: data  ! void *
    type(DLDevice) :: device  ! DLDevice
    integer(c_int32_t) :: ndim  ! int32_t
    type(DLDataType) :: dtype  ! DLDataType
    type(c_ptr) :: shape  ! int64_t *
    type(c_ptr) :: strides  ! int64_t *
    integer(c_int64_t) :: byte_offset  ! uint64_t
  end type DLTensor

  type, bind(C) :: dt_comm_options
    integer(c_int) :: version  ! unsigned
    integer(c_int) :: rank  ! int
    integer(c_int) :: world_size  ! int
    type(c_ptr) :: store  ! const char *
    type(c_ptr) :: auth_token  ! const char *
    integer(c_int) :: backend  ! dt_backend
    integer(c_int) :: device  ! int
    integer(c_int) :: timeout_ms  ! int
    type(c_funptr) :: oob_allgather  ! dt_oob_allgather_fn
    type(c_ptr) :: oob_user  ! void *
  end type dt_comm_options

  type, bind(C) :: dt_p2p_op
    integer(c_int) :: kind  ! int
    type(c_ptr) :: tensor  ! const DLTensor *
    integer(c_int) :: peer  ! int
    integer(c_int) :: tag  ! int
  end type dt_p2p_op

  type, bind(C) :: dt_op_stats
    integer(c_int) :: version  ! unsigned
    integer(c_int64_t) :: count  ! int64_t
    integer(c_int64_t) :: failed  ! int64_t
    integer(c_int64_t) :: bytes  ! int64_t
    real(c_double) :: seconds  ! double
  end type dt_op_stats

  type, bind(C) :: dt_ddp_options
    integer(c_int) :: version  ! unsigned
    integer(c_int64_t) :: bucket_bytes  ! int64_t
    integer(c_int) :: compression  ! dt_ddp_compression
    integer(c_int) :: find_unused  ! int
    integer(c_int) :: weighted  ! int
    type(c_ptr) :: stream  ! void *
  end type dt_ddp_options

  type, bind(C) :: dt_moe_options
    integer(c_int) :: version  ! unsigned
    integer(c_int) :: num_experts  ! int
    integer(c_int) :: top_k  ! int
    integer(c_int) :: scoring  ! dt_moe_scoring
    integer(c_int) :: normalize  ! int
    real(c_double) :: capacity_factor  ! double
    integer(c_int) :: drop_policy  ! dt_moe_drop_policy
  end type dt_moe_options

  type, bind(C) :: dt_optimizer_options
    integer(c_int) :: version  ! unsigned
    integer(c_int) :: kind  ! dt_optimizer_kind
    real(c_float) :: lr  ! float
    real(c_float) :: weight_decay  ! float
    real(c_float) :: momentum  ! float
    real(c_float) :: dampening  ! float
    integer(c_int) :: nesterov  ! int
    real(c_float) :: beta1  ! float
    real(c_float) :: beta2  ! float
    real(c_float) :: eps  ! float
    real(c_float) :: max_grad_norm  ! float
    real(c_float) :: loss_scale  ! float
    integer(c_int) :: dynamic_loss_scale  ! int
    real(c_float) :: growth_factor  ! float
    real(c_float) :: backoff_factor  ! float
    integer(c_int) :: growth_interval  ! int
    type(c_ptr) :: comm  ! dt_comm *
  end type dt_optimizer_options

  type, bind(C) :: dt_optimizer_step_info
    integer(c_int) :: version  ! unsigned
    integer(c_int) :: skipped  ! int
    real(c_double) :: grad_norm  ! double
    integer(c_int64_t) :: step  ! int64_t
    real(c_float) :: loss_scale  ! float
  end type dt_optimizer_step_info

  type, bind(C) :: dt_pipeline_action
    integer(c_int) :: kind  ! dt_pipeline_action_kind
    integer(c_int) :: chunk  ! int
    integer(c_int) :: microbatch  ! int
    integer(c_int) :: peer  ! int
  end type dt_pipeline_action

  type, bind(C) :: dt_pipeline_schedule_options
    integer(c_int) :: version  ! unsigned
    integer(c_int) :: kind  ! dt_pipeline_schedule_kind
    integer(c_int) :: stages  ! int
    integer(c_int) :: microbatches  ! int
    integer(c_int) :: chunks  ! int
  end type dt_pipeline_schedule_options

  type, bind(C) :: dt_pipeline_options
    integer(c_int) :: version  ! unsigned
    integer(c_int64_t) :: activation_elements  ! int64_t
    type(DLDataType) :: activation_dtype  ! DLDataType
    type(c_funptr) :: forward  ! dt_pipeline_forward_fn
    type(c_funptr) :: backward  ! dt_pipeline_backward_fn
    type(c_funptr) :: backward_weight  ! dt_pipeline_backward_weight_fn
    type(c_funptr) :: chunk_done  ! dt_pipeline_chunk_done_fn
    type(c_ptr) :: user  ! void *
  end type dt_pipeline_options

  type, bind(C) :: dt_pipeline_step_info
    integer(c_int) :: version  ! unsigned
    real(c_double) :: step_seconds  ! double
    real(c_double) :: recv_wait_seconds  ! double
    real(c_double) :: comm_wait_seconds  ! double
    real(c_double) :: bubble_fraction  ! double
    integer(c_int) :: peak_in_flight  ! int
  end type dt_pipeline_step_info

  type, bind(C) :: dt_plan_model
    integer(c_int) :: version  ! unsigned
    integer(c_int) :: layers  ! int
    integer(c_int) :: hidden  ! int
    integer(c_int) :: heads  ! int
    integer(c_int) :: kv_heads  ! int
    integer(c_int) :: ffn_hidden  ! int
    integer(c_int) :: vocab  ! int
    integer(c_int) :: seq_len  ! int
    integer(c_int) :: experts  ! int
    integer(c_int) :: top_k  ! int
  end type dt_plan_model

  type, bind(C) :: dt_plan_cluster
    integer(c_int) :: version  ! unsigned
    integer(c_int) :: nodes  ! int
    integer(c_int) :: gpus_per_node  ! int
    real(c_double) :: gpu_memory  ! double
    real(c_double) :: peak_flops  ! double
    real(c_double) :: memory_bandwidth  ! double
    real(c_double) :: gemm_efficiency  ! double
    real(c_double) :: intra_bandwidth  ! double
    real(c_double) :: intra_latency  ! double
    real(c_double) :: inter_bandwidth  ! double
    real(c_double) :: inter_latency  ! double
    real(c_double) :: overlap  ! double
  end type dt_plan_cluster

  type, bind(C) :: dt_plan_options
    integer(c_int) :: version  ! unsigned
    integer(c_int64_t) :: global_batch  ! int64_t
    integer(c_int) :: dimensions  ! unsigned
    integer(c_int) :: zero_stages  ! unsigned
    integer(c_int) :: schedules  ! unsigned
    integer(c_int) :: recompute  ! unsigned
    integer(c_int) :: max_micro_batch  ! int
    integer(c_int) :: max_virtual_stages  ! int
    integer(c_int) :: sequence_parallel  ! int
    real(c_double) :: memory_fraction  ! double
    integer(c_size_t) :: keep  ! size_t
  end type dt_plan_options

  type, bind(C) :: dt_plan_config
    integer(c_int) :: version  ! unsigned
    integer(c_int) :: dp  ! int
    integer(c_int) :: tp  ! int
    integer(c_int) :: pp  ! int
    integer(c_int) :: cp  ! int
    integer(c_int) :: ep  ! int
    integer(c_int) :: zero_stage  ! int
    integer(c_int) :: schedule  ! dt_pipeline_schedule_kind
    integer(c_int) :: virtual_stages  ! int
    integer(c_int) :: micro_batch  ! int
    integer(c_int) :: recompute  ! dt_plan_recompute
  end type dt_plan_config

  type, bind(C) :: dt_plan_estimate
    integer(c_int) :: version  ! unsigned
    integer(c_int) :: reason  ! dt_plan_reason
    type(dt_plan_config) :: config  ! dt_plan_config
    integer(c_int64_t) :: micro_batches  ! int64_t
    integer(c_int64_t) :: mem_parameters  ! int64_t
    integer(c_int64_t) :: mem_gradients  ! int64_t
    integer(c_int64_t) :: mem_optimizer_state  ! int64_t
    integer(c_int64_t) :: mem_master_weights  ! int64_t
    integer(c_int64_t) :: mem_activations  ! int64_t
    integer(c_int64_t) :: mem_activations_without_recompute  ! int64_t
    integer(c_int64_t) :: mem_communication  ! int64_t
    integer(c_int64_t) :: mem_total  ! int64_t
    real(c_double) :: time_compute  ! double
    real(c_double) :: time_recompute  ! double
    real(c_double) :: time_bubble  ! double
    real(c_double) :: time_tp  ! double
    real(c_double) :: time_cp  ! double
    real(c_double) :: time_ep  ! double
    real(c_double) :: time_pp  ! double
    real(c_double) :: time_dp  ! double
    real(c_double) :: time_optimizer  ! double
    real(c_double) :: time_step  ! double
    real(c_double) :: model_flops  ! double
    real(c_double) :: hardware_flops  ! double
    real(c_double) :: mfu  ! double
    real(c_double) :: tflops_per_gpu  ! double
  end type dt_plan_estimate

  type, bind(C) :: dt_plan_summary
    integer(c_int) :: version  ! unsigned
    integer(c_int64_t) :: evaluated  ! int64_t
    integer(c_int64_t) :: feasible  ! int64_t
    integer(c_size_t) :: kept  ! size_t
    real(c_double) :: seconds  ! double
  end type dt_plan_summary

  type, bind(C) :: dt_plan_rejection
    integer(c_int) :: version  ! unsigned
    integer(c_int64_t) :: count  ! int64_t
    type(dt_plan_config) :: example  ! dt_plan_config
    type(c_ptr) :: message  ! const char *
  end type dt_plan_rejection

  type, bind(C) :: dt_zero_options
    integer(c_int) :: version  ! unsigned
    integer(c_int) :: stage  ! int
    integer(c_int64_t) :: bucket_bytes  ! int64_t
    type(c_ptr) :: unit_sizes  ! const size_t *
    integer(c_size_t) :: unit_count  ! size_t
    integer(c_int) :: prefetch  ! int
    type(c_ptr) :: stream  ! void *
    type(c_ptr) :: norm_excluded  ! const size_t *
    integer(c_size_t) :: norm_excluded_count  ! size_t
  end type dt_zero_options

  type, bind(C) :: dt_zero_memory
    integer(c_int) :: version  ! unsigned
    integer(c_int64_t) :: parameters  ! int64_t
    integer(c_int64_t) :: gradients  ! int64_t
    integer(c_int64_t) :: optimizer_state  ! int64_t
    integer(c_int64_t) :: master_weights  ! int64_t
    integer(c_int64_t) :: communication  ! int64_t
    integer(c_int64_t) :: padding  ! int64_t
    integer(c_int64_t) :: peak  ! int64_t
  end type dt_zero_memory

  abstract interface
    function dt_oob_allgather_fn(user, send, recv, bytes) bind(C) result(res)
      import
      type(c_ptr), value :: user  ! void *
      type(c_ptr), value :: send  ! const void *
      type(c_ptr), value :: recv  ! void *
      integer(c_size_t), value :: bytes  ! size_t
      integer(c_int) :: res  ! dt_status
    end function dt_oob_allgather_fn
    subroutine dt_log_fn(user, level, rank, message) bind(C)
      import
      type(c_ptr), value :: user  ! void *
      integer(c_int), value :: level  ! dt_log_level
      integer(c_int), value :: rank  ! int
      type(c_ptr), value :: message  ! const char *
    end subroutine dt_log_fn
    function dt_pipeline_forward_fn(user, chunk, microbatch, input, output) bind(C) result(res)
      import
      type(c_ptr), value :: user  ! void *
      integer(c_int), value :: chunk  ! int
      integer(c_int), value :: microbatch  ! int
      type(c_ptr), value :: input  ! const DLTensor *
      type(c_ptr), value :: output  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_forward_fn
    function dt_pipeline_backward_fn(user, chunk, microbatch, grad_output, &
        grad_input) bind(C) result(res)
      import
      type(c_ptr), value :: user  ! void *
      integer(c_int), value :: chunk  ! int
      integer(c_int), value :: microbatch  ! int
      type(c_ptr), value :: grad_output  ! const DLTensor *
      type(c_ptr), value :: grad_input  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_backward_fn
    function dt_pipeline_backward_weight_fn(user, chunk, microbatch) bind(C) result(res)
      import
      type(c_ptr), value :: user  ! void *
      integer(c_int), value :: chunk  ! int
      integer(c_int), value :: microbatch  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_backward_weight_fn
    function dt_pipeline_chunk_done_fn(user, chunk) bind(C) result(res)
      import
      type(c_ptr), value :: user  ! void *
      integer(c_int), value :: chunk  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_chunk_done_fn
  end interface

  interface
    function dt_comm_options_init(opts, version) bind(C, name="dt_comm_options_init") result(res)
      import
      type(c_ptr), value :: opts  ! dt_comm_options *
      integer(c_int), value :: version  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_comm_options_init
    function dt_comm_create(out, opts) bind(C, name="dt_comm_create") result(res)
      import
      type(c_ptr), optional :: out  ! dt_comm * *
      type(c_ptr), value :: opts  ! const dt_comm_options *
      integer(c_int) :: res  ! dt_status
    end function dt_comm_create
    function dt_comm_split(out, parent, color, key) bind(C, name="dt_comm_split") result(res)
      import
      type(c_ptr), optional :: out  ! dt_comm * *
      type(c_ptr), value :: parent  ! dt_comm *
      integer(c_int), value :: color  ! int
      integer(c_int), value :: key  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_comm_split
    function dt_comm_bind_thread(comm, bind) bind(C, name="dt_comm_bind_thread") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      integer(c_int), value :: bind  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_comm_bind_thread
    function dt_comm_rank(comm, out) bind(C, name="dt_comm_rank") result(res)
      import
      type(c_ptr), value :: comm  ! const dt_comm *
      type(c_ptr), value :: out  ! int *
      integer(c_int) :: res  ! dt_status
    end function dt_comm_rank
    function dt_comm_size(comm, out) bind(C, name="dt_comm_size") result(res)
      import
      type(c_ptr), value :: comm  ! const dt_comm *
      type(c_ptr), value :: out  ! int *
      integer(c_int) :: res  ! dt_status
    end function dt_comm_size
    function dt_comm_abort(comm) bind(C, name="dt_comm_abort") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      integer(c_int) :: res  ! dt_status
    end function dt_comm_abort
    function dt_comm_destroy(comm) bind(C, name="dt_comm_destroy") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      integer(c_int) :: res  ! dt_status
    end function dt_comm_destroy
    function dt_allreduce(comm, send, recv, op, stream, &
        req) bind(C, name="dt_allreduce") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: send  ! const DLTensor *
      type(c_ptr), value :: recv  ! DLTensor *
      integer(c_int), value :: op  ! dt_reduce_op
      type(c_ptr), value :: stream  ! void *
      type(c_ptr), optional :: req  ! dt_request * *
      integer(c_int) :: res  ! dt_status
    end function dt_allreduce
    function dt_reduce_scatter(comm, send, recv, op, stream, &
        req) bind(C, name="dt_reduce_scatter") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: send  ! const DLTensor *
      type(c_ptr), value :: recv  ! DLTensor *
      integer(c_int), value :: op  ! dt_reduce_op
      type(c_ptr), value :: stream  ! void *
      type(c_ptr), optional :: req  ! dt_request * *
      integer(c_int) :: res  ! dt_status
    end function dt_reduce_scatter
    function dt_allgather(comm, send, recv, stream, req) bind(C, name="dt_allgather") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: send  ! const DLTensor *
      type(c_ptr), value :: recv  ! DLTensor *
      type(c_ptr), value :: stream  ! void *
      type(c_ptr), optional :: req  ! dt_request * *
      integer(c_int) :: res  ! dt_status
    end function dt_allgather
    function dt_broadcast(comm, buf, root, stream, req) bind(C, name="dt_broadcast") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: buf  ! DLTensor *
      integer(c_int), value :: root  ! int
      type(c_ptr), value :: stream  ! void *
      type(c_ptr), optional :: req  ! dt_request * *
      integer(c_int) :: res  ! dt_status
    end function dt_broadcast
    function dt_alltoall(comm, send, recv, stream, req) bind(C, name="dt_alltoall") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: send  ! const DLTensor *
      type(c_ptr), value :: recv  ! DLTensor *
      type(c_ptr), value :: stream  ! void *
      type(c_ptr), optional :: req  ! dt_request * *
      integer(c_int) :: res  ! dt_status
    end function dt_alltoall
    function dt_alltoallv(comm, send, send_counts, recv, recv_counts, stream, &
        req) bind(C, name="dt_alltoallv") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: send  ! const DLTensor *
      type(c_ptr), value :: send_counts  ! const int64_t *
      type(c_ptr), value :: recv  ! DLTensor *
      type(c_ptr), value :: recv_counts  ! const int64_t *
      type(c_ptr), value :: stream  ! void *
      type(c_ptr), optional :: req  ! dt_request * *
      integer(c_int) :: res  ! dt_status
    end function dt_alltoallv
    function dt_reduce(comm, send, recv, op, root, stream, &
        req) bind(C, name="dt_reduce") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: send  ! const DLTensor *
      type(c_ptr), value :: recv  ! DLTensor *
      integer(c_int), value :: op  ! dt_reduce_op
      integer(c_int), value :: root  ! int
      type(c_ptr), value :: stream  ! void *
      type(c_ptr), optional :: req  ! dt_request * *
      integer(c_int) :: res  ! dt_status
    end function dt_reduce
    function dt_gather(comm, send, recv, root, stream, req) bind(C, name="dt_gather") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: send  ! const DLTensor *
      type(c_ptr), value :: recv  ! DLTensor *
      integer(c_int), value :: root  ! int
      type(c_ptr), value :: stream  ! void *
      type(c_ptr), optional :: req  ! dt_request * *
      integer(c_int) :: res  ! dt_status
    end function dt_gather
    function dt_scatter(comm, send, recv, root, stream, req) bind(C, name="dt_scatter") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: send  ! const DLTensor *
      type(c_ptr), value :: recv  ! DLTensor *
      integer(c_int), value :: root  ! int
      type(c_ptr), value :: stream  ! void *
      type(c_ptr), optional :: req  ! dt_request * *
      integer(c_int) :: res  ! dt_status
    end function dt_scatter
    function dt_allgatherv(comm, send, recv, recv_counts, stream, &
        req) bind(C, name="dt_allgatherv") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: send  ! const DLTensor *
      type(c_ptr), value :: recv  ! DLTensor *
      type(c_ptr), value :: recv_counts  ! const int64_t *
      type(c_ptr), value :: stream  ! void *
      type(c_ptr), optional :: req  ! dt_request * *
      integer(c_int) :: res  ! dt_status
    end function dt_allgatherv
    function dt_reduce_scatterv(comm, send, recv_counts, recv, op, stream, &
        req) bind(C, name="dt_reduce_scatterv") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: send  ! const DLTensor *
      type(c_ptr), value :: recv_counts  ! const int64_t *
      type(c_ptr), value :: recv  ! DLTensor *
      integer(c_int), value :: op  ! dt_reduce_op
      type(c_ptr), value :: stream  ! void *
      type(c_ptr), optional :: req  ! dt_request * *
      integer(c_int) :: res  ! dt_status
    end function dt_reduce_scatterv
    function dt_send(comm, buf, peer, tag, stream, req) bind(C, name="dt_send") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: buf  ! const DLTensor *
      integer(c_int), value :: peer  ! int
      integer(c_int), value :: tag  ! int
      type(c_ptr), value :: stream  ! void *
      type(c_ptr), optional :: req  ! dt_request * *
      integer(c_int) :: res  ! dt_status
    end function dt_send
    function dt_recv(comm, buf, peer, tag, stream, req) bind(C, name="dt_recv") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: buf  ! DLTensor *
      integer(c_int), value :: peer  ! int
      integer(c_int), value :: tag  ! int
      type(c_ptr), value :: stream  ! void *
      type(c_ptr), optional :: req  ! dt_request * *
      integer(c_int) :: res  ! dt_status
    end function dt_recv
    function dt_p2p_group(comm, ops, count, stream, req) bind(C, name="dt_p2p_group") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: ops  ! const dt_p2p_op *
      integer(c_int), value :: count  ! int
      type(c_ptr), value :: stream  ! void *
      type(c_ptr), optional :: req  ! dt_request * *
      integer(c_int) :: res  ! dt_status
    end function dt_p2p_group
    function dt_barrier(comm) bind(C, name="dt_barrier") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      integer(c_int) :: res  ! dt_status
    end function dt_barrier
    function dt_request_wait(req, timeout_ms) bind(C, name="dt_request_wait") result(res)
      import
      type(c_ptr), value :: req  ! dt_request *
      integer(c_int), value :: timeout_ms  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_request_wait
    function dt_request_test(req) bind(C, name="dt_request_test") result(res)
      import
      type(c_ptr), value :: req  ! dt_request *
      integer(c_int) :: res  ! dt_status
    end function dt_request_test
    subroutine dt_request_free(req) bind(C, name="dt_request_free")
      import
      type(c_ptr), value :: req  ! dt_request *
    end subroutine dt_request_free
    function dt_comm_stats(comm, kind, out) bind(C, name="dt_comm_stats") result(res)
      import
      type(c_ptr), value :: comm  ! const dt_comm *
      integer(c_int), value :: kind  ! dt_op_kind
      type(c_ptr), value :: out  ! dt_op_stats *
      integer(c_int) :: res  ! dt_status
    end function dt_comm_stats
    function dt_cp_positions(layout, cp_size, cp_rank, &
        positions) bind(C, name="dt_cp_positions") result(res)
      import
      integer(c_int), value :: layout  ! dt_cp_layout
      integer(c_int), value :: cp_size  ! int
      integer(c_int), value :: cp_rank  ! int
      type(c_ptr), value :: positions  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_cp_positions
    function dt_cp_shard(layout, cp_size, cp_rank, full, &
        local) bind(C, name="dt_cp_shard") result(res)
      import
      integer(c_int), value :: layout  ! dt_cp_layout
      integer(c_int), value :: cp_size  ! int
      integer(c_int), value :: cp_rank  ! int
      type(c_ptr), value :: full  ! const DLTensor *
      type(c_ptr), value :: local  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_cp_shard
    function dt_cp_unshard(layout, cp_size, cp_rank, local, &
        full) bind(C, name="dt_cp_unshard") result(res)
      import
      integer(c_int), value :: layout  ! dt_cp_layout
      integer(c_int), value :: cp_size  ! int
      integer(c_int), value :: cp_rank  ! int
      type(c_ptr), value :: local  ! const DLTensor *
      type(c_ptr), value :: full  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_cp_unshard
    function dt_cp_attention(q, k, v, q_positions, k_positions, causal, scale, o, &
        lse) bind(C, name="dt_cp_attention") result(res)
      import
      type(c_ptr), value :: q  ! const DLTensor *
      type(c_ptr), value :: k  ! const DLTensor *
      type(c_ptr), value :: v  ! const DLTensor *
      type(c_ptr), value :: q_positions  ! const DLTensor *
      type(c_ptr), value :: k_positions  ! const DLTensor *
      integer(c_int), value :: causal  ! int
      real(c_double), value :: scale  ! double
      type(c_ptr), value :: o  ! DLTensor *
      type(c_ptr), value :: lse  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_cp_attention
    function dt_cp_attention_merge(o, lse, o_other, &
        lse_other) bind(C, name="dt_cp_attention_merge") result(res)
      import
      type(c_ptr), value :: o  ! DLTensor *
      type(c_ptr), value :: lse  ! DLTensor *
      type(c_ptr), value :: o_other  ! const DLTensor *
      type(c_ptr), value :: lse_other  ! const DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_cp_attention_merge
    function dt_cp_ring_attention_forward(comm, layout, causal, scale, q, k, v, o, &
        lse) bind(C, name="dt_cp_ring_attention_forward") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      integer(c_int), value :: layout  ! dt_cp_layout
      integer(c_int), value :: causal  ! int
      real(c_double), value :: scale  ! double
      type(c_ptr), value :: q  ! const DLTensor *
      type(c_ptr), value :: k  ! const DLTensor *
      type(c_ptr), value :: v  ! const DLTensor *
      type(c_ptr), value :: o  ! DLTensor *
      type(c_ptr), value :: lse  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_cp_ring_attention_forward
    function dt_cp_ring_attention_backward(comm, layout, causal, scale, q, k, v, o, lse, d_o, dq, &
        dk, dv) bind(C, name="dt_cp_ring_attention_backward") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      integer(c_int), value :: layout  ! dt_cp_layout
      integer(c_int), value :: causal  ! int
      real(c_double), value :: scale  ! double
      type(c_ptr), value :: q  ! const DLTensor *
      type(c_ptr), value :: k  ! const DLTensor *
      type(c_ptr), value :: v  ! const DLTensor *
      type(c_ptr), value :: o  ! const DLTensor *
      type(c_ptr), value :: lse  ! const DLTensor *
      type(c_ptr), value :: d_o  ! const DLTensor *
      type(c_ptr), value :: dq  ! DLTensor *
      type(c_ptr), value :: dk  ! DLTensor *
      type(c_ptr), value :: dv  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_cp_ring_attention_backward
    function dt_cp_ulysses_attention_forward(comm, layout, causal, scale, q, k, v, o, &
        lse) bind(C, name="dt_cp_ulysses_attention_forward") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      integer(c_int), value :: layout  ! dt_cp_layout
      integer(c_int), value :: causal  ! int
      real(c_double), value :: scale  ! double
      type(c_ptr), value :: q  ! const DLTensor *
      type(c_ptr), value :: k  ! const DLTensor *
      type(c_ptr), value :: v  ! const DLTensor *
      type(c_ptr), value :: o  ! DLTensor *
      type(c_ptr), value :: lse  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_cp_ulysses_attention_forward
    function dt_cp_ulysses_attention_backward(comm, layout, causal, scale, q, k, v, o, lse, d_o, dq, &
        dk, dv) bind(C, name="dt_cp_ulysses_attention_backward") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      integer(c_int), value :: layout  ! dt_cp_layout
      integer(c_int), value :: causal  ! int
      real(c_double), value :: scale  ! double
      type(c_ptr), value :: q  ! const DLTensor *
      type(c_ptr), value :: k  ! const DLTensor *
      type(c_ptr), value :: v  ! const DLTensor *
      type(c_ptr), value :: o  ! const DLTensor *
      type(c_ptr), value :: lse  ! const DLTensor *
      type(c_ptr), value :: d_o  ! const DLTensor *
      type(c_ptr), value :: dq  ! DLTensor *
      type(c_ptr), value :: dk  ! DLTensor *
      type(c_ptr), value :: dv  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_cp_ulysses_attention_backward
    function dt_ddp_options_init(opts, version) bind(C, name="dt_ddp_options_init") result(res)
      import
      type(c_ptr), value :: opts  ! dt_ddp_options *
      integer(c_int), value :: version  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_ddp_options_init
    function dt_ddp_create(out, comm, grads, n, opts) bind(C, name="dt_ddp_create") result(res)
      import
      type(c_ptr), optional :: out  ! dt_ddp * *
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), intent(in) :: grads(*)  ! const DLTensor * const *
      integer(c_size_t), value :: n  ! size_t
      type(c_ptr), value :: opts  ! const dt_ddp_options *
      integer(c_int) :: res  ! dt_status
    end function dt_ddp_create
    function dt_ddp_destroy(ddp) bind(C, name="dt_ddp_destroy") result(res)
      import
      type(c_ptr), value :: ddp  ! dt_ddp *
      integer(c_int) :: res  ! dt_status
    end function dt_ddp_destroy
    function dt_ddp_mark_ready(ddp, index) bind(C, name="dt_ddp_mark_ready") result(res)
      import
      type(c_ptr), value :: ddp  ! dt_ddp *
      integer(c_size_t), value :: index  ! size_t
      integer(c_int) :: res  ! dt_status
    end function dt_ddp_mark_ready
    function dt_ddp_set_sync(ddp, sync) bind(C, name="dt_ddp_set_sync") result(res)
      import
      type(c_ptr), value :: ddp  ! dt_ddp *
      integer(c_int), value :: sync  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_ddp_set_sync
    function dt_ddp_set_local_weight(ddp, &
        weight) bind(C, name="dt_ddp_set_local_weight") result(res)
      import
      type(c_ptr), value :: ddp  ! dt_ddp *
      real(c_double), value :: weight  ! double
      integer(c_int) :: res  ! dt_status
    end function dt_ddp_set_local_weight
    function dt_ddp_wait(ddp, timeout_ms) bind(C, name="dt_ddp_wait") result(res)
      import
      type(c_ptr), value :: ddp  ! dt_ddp *
      integer(c_int), value :: timeout_ms  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_ddp_wait
    function dt_ddp_bucket_count(ddp, out) bind(C, name="dt_ddp_bucket_count") result(res)
      import
      type(c_ptr), value :: ddp  ! const dt_ddp *
      type(c_ptr), value :: out  ! size_t *
      integer(c_int) :: res  ! dt_status
    end function dt_ddp_bucket_count
    function dt_ddp_bucket_of(ddp, index, out) bind(C, name="dt_ddp_bucket_of") result(res)
      import
      type(c_ptr), value :: ddp  ! const dt_ddp *
      integer(c_size_t), value :: index  ! size_t
      type(c_ptr), value :: out  ! size_t *
      integer(c_int) :: res  ! dt_status
    end function dt_ddp_bucket_of
    function dt_ddp_bucket_state(ddp, bucket, out) bind(C, name="dt_ddp_bucket_state") result(res)
      import
      type(c_ptr), value :: ddp  ! const dt_ddp *
      integer(c_size_t), value :: bucket  ! size_t
      type(c_ptr), value :: out  ! dt_bucket_state *
      integer(c_int) :: res  ! dt_status
    end function dt_ddp_bucket_state
    function dt_ddp_broadcast_parameters(comm, params, n, &
        root) bind(C, name="dt_ddp_broadcast_parameters") result(res)
      import
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), intent(in) :: params(*)  ! DLTensor * const *
      integer(c_size_t), value :: n  ! size_t
      integer(c_int), value :: root  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_ddp_broadcast_parameters
    function dt_set_log_callback(fn, user) bind(C, name="dt_set_log_callback") result(res)
      import
      type(c_funptr), value :: fn  ! dt_log_fn
      type(c_ptr), value :: user  ! void *
      integer(c_int) :: res  ! dt_status
    end function dt_set_log_callback
    function dt_set_log_level(level) bind(C, name="dt_set_log_level") result(res)
      import
      integer(c_int), value :: level  ! dt_log_level
      integer(c_int) :: res  ! dt_status
    end function dt_set_log_level
    function dt_mesh_create(out, comm, ndims, names, &
        sizes) bind(C, name="dt_mesh_create") result(res)
      import
      type(c_ptr), optional :: out  ! dt_mesh * *
      type(c_ptr), value :: comm  ! dt_comm *
      integer(c_int), value :: ndims  ! int
      type(c_ptr), intent(in) :: names(*)  ! const char * const *
      type(c_ptr), value :: sizes  ! const int *
      integer(c_int) :: res  ! dt_status
    end function dt_mesh_create
    function dt_mesh_destroy(mesh) bind(C, name="dt_mesh_destroy") result(res)
      import
      type(c_ptr), value :: mesh  ! dt_mesh *
      integer(c_int) :: res  ! dt_status
    end function dt_mesh_destroy
    function dt_mesh_ndims(mesh, out) bind(C, name="dt_mesh_ndims") result(res)
      import
      type(c_ptr), value :: mesh  ! const dt_mesh *
      type(c_ptr), value :: out  ! int *
      integer(c_int) :: res  ! dt_status
    end function dt_mesh_ndims
    function dt_mesh_size(mesh, out) bind(C, name="dt_mesh_size") result(res)
      import
      type(c_ptr), value :: mesh  ! const dt_mesh *
      type(c_ptr), value :: out  ! int *
      integer(c_int) :: res  ! dt_status
    end function dt_mesh_size
    function dt_mesh_rank(mesh, out) bind(C, name="dt_mesh_rank") result(res)
      import
      type(c_ptr), value :: mesh  ! const dt_mesh *
      type(c_ptr), value :: out  ! int *
      integer(c_int) :: res  ! dt_status
    end function dt_mesh_rank
    function dt_mesh_dim_name(mesh, dim, out) bind(C, name="dt_mesh_dim_name") result(res)
      import
      type(c_ptr), value :: mesh  ! const dt_mesh *
      integer(c_int), value :: dim  ! int
      type(c_ptr), optional :: out  ! const char * *
      integer(c_int) :: res  ! dt_status
    end function dt_mesh_dim_name
    function dt_mesh_dim_index(mesh, name, out) bind(C, name="dt_mesh_dim_index") result(res)
      import
      type(c_ptr), value :: mesh  ! const dt_mesh *
      type(c_ptr), value :: name  ! const char *
      type(c_ptr), value :: out  ! int *
      integer(c_int) :: res  ! dt_status
    end function dt_mesh_dim_index
    function dt_mesh_dim_size(mesh, name, out) bind(C, name="dt_mesh_dim_size") result(res)
      import
      type(c_ptr), value :: mesh  ! const dt_mesh *
      type(c_ptr), value :: name  ! const char *
      type(c_ptr), value :: out  ! int *
      integer(c_int) :: res  ! dt_status
    end function dt_mesh_dim_size
    function dt_mesh_coord(mesh, name, out) bind(C, name="dt_mesh_coord") result(res)
      import
      type(c_ptr), value :: mesh  ! const dt_mesh *
      type(c_ptr), value :: name  ! const char *
      type(c_ptr), value :: out  ! int *
      integer(c_int) :: res  ! dt_status
    end function dt_mesh_coord
    function dt_mesh_coords_of(mesh, rank, coords, &
        ncoords) bind(C, name="dt_mesh_coords_of") result(res)
      import
      type(c_ptr), value :: mesh  ! const dt_mesh *
      integer(c_int), value :: rank  ! int
      type(c_ptr), value :: coords  ! int *
      integer(c_int), value :: ncoords  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_mesh_coords_of
    function dt_mesh_rank_at(mesh, coords, ncoords, out) bind(C, name="dt_mesh_rank_at") result(res)
      import
      type(c_ptr), value :: mesh  ! const dt_mesh *
      type(c_ptr), value :: coords  ! const int *
      integer(c_int), value :: ncoords  ! int
      type(c_ptr), value :: out  ! int *
      integer(c_int) :: res  ! dt_status
    end function dt_mesh_rank_at
    function dt_mesh_group_ranks(mesh, names, ranks, capacity, &
        count) bind(C, name="dt_mesh_group_ranks") result(res)
      import
      type(c_ptr), value :: mesh  ! const dt_mesh *
      type(c_ptr), value :: names  ! const char *
      type(c_ptr), value :: ranks  ! int *
      integer(c_int), value :: capacity  ! int
      type(c_ptr), value :: count  ! int *
      integer(c_int) :: res  ! dt_status
    end function dt_mesh_group_ranks
    function dt_mesh_comm(mesh, names, out) bind(C, name="dt_mesh_comm") result(res)
      import
      type(c_ptr), value :: mesh  ! dt_mesh *
      type(c_ptr), value :: names  ! const char *
      type(c_ptr), optional :: out  ! dt_comm * *
      integer(c_int) :: res  ! dt_status
    end function dt_mesh_comm
    function dt_moe_options_init(opts, version) bind(C, name="dt_moe_options_init") result(res)
      import
      type(c_ptr), value :: opts  ! dt_moe_options *
      integer(c_int), value :: version  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_moe_options_init
    function dt_moe_route(logits, opts, weights, experts, &
        dropped) bind(C, name="dt_moe_route") result(res)
      import
      type(c_ptr), value :: logits  ! const DLTensor *
      type(c_ptr), value :: opts  ! const dt_moe_options *
      type(c_ptr), value :: weights  ! DLTensor *
      type(c_ptr), value :: experts  ! DLTensor *
      type(c_ptr), value :: dropped  ! int64_t *
      integer(c_int) :: res  ! dt_status
    end function dt_moe_route
    function dt_moe_route_backward(logits, d_weights, opts, &
        d_logits) bind(C, name="dt_moe_route_backward") result(res)
      import
      type(c_ptr), value :: logits  ! const DLTensor *
      type(c_ptr), value :: d_weights  ! const DLTensor *
      type(c_ptr), value :: opts  ! const dt_moe_options *
      type(c_ptr), value :: d_logits  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_moe_route_backward
    function dt_moe_balance_loss(logits, opts, coeff, loss, counts, &
        d_logits) bind(C, name="dt_moe_balance_loss") result(res)
      import
      type(c_ptr), value :: logits  ! const DLTensor *
      type(c_ptr), value :: opts  ! const dt_moe_options *
      real(c_double), value :: coeff  ! double
      type(c_ptr), value :: loss  ! double *
      type(c_ptr), value :: counts  ! DLTensor *
      type(c_ptr), value :: d_logits  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_moe_balance_loss
    function dt_moe_z_loss(logits, coeff, loss, d_logits) bind(C, name="dt_moe_z_loss") result(res)
      import
      type(c_ptr), value :: logits  ! const DLTensor *
      real(c_double), value :: coeff  ! double
      type(c_ptr), value :: loss  ! double *
      type(c_ptr), value :: d_logits  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_moe_z_loss
    function dt_moe_plan_create(out, ep, experts, hidden, &
        opts) bind(C, name="dt_moe_plan_create") result(res)
      import
      type(c_ptr), optional :: out  ! dt_moe_plan * *
      type(c_ptr), value :: ep  ! dt_comm *
      type(c_ptr), value :: experts  ! const DLTensor *
      integer(c_int64_t), value :: hidden  ! int64_t
      type(c_ptr), value :: opts  ! const dt_moe_options *
      integer(c_int) :: res  ! dt_status
    end function dt_moe_plan_create
    function dt_moe_plan_destroy(plan) bind(C, name="dt_moe_plan_destroy") result(res)
      import
      type(c_ptr), value :: plan  ! dt_moe_plan *
      integer(c_int) :: res  ! dt_status
    end function dt_moe_plan_destroy
    function dt_moe_plan_local_experts(plan, first, &
        count) bind(C, name="dt_moe_plan_local_experts") result(res)
      import
      type(c_ptr), value :: plan  ! const dt_moe_plan *
      type(c_ptr), value :: first  ! int *
      type(c_ptr), value :: count  ! int *
      integer(c_int) :: res  ! dt_status
    end function dt_moe_plan_local_experts
    function dt_moe_plan_received(plan, rows) bind(C, name="dt_moe_plan_received") result(res)
      import
      type(c_ptr), value :: plan  ! const dt_moe_plan *
      type(c_ptr), value :: rows  ! int64_t *
      integer(c_int) :: res  ! dt_status
    end function dt_moe_plan_received
    function dt_moe_plan_expert_counts(plan, counts, &
        n) bind(C, name="dt_moe_plan_expert_counts") result(res)
      import
      type(c_ptr), value :: plan  ! const dt_moe_plan *
      type(c_ptr), value :: counts  ! int64_t *
      integer(c_int), value :: n  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_moe_plan_expert_counts
    function dt_moe_dispatch(plan, tokens, received) bind(C, name="dt_moe_dispatch") result(res)
      import
      type(c_ptr), value :: plan  ! dt_moe_plan *
      type(c_ptr), value :: tokens  ! const DLTensor *
      type(c_ptr), value :: received  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_moe_dispatch
    function dt_moe_combine(plan, expert_out, weights, &
        output) bind(C, name="dt_moe_combine") result(res)
      import
      type(c_ptr), value :: plan  ! dt_moe_plan *
      type(c_ptr), value :: expert_out  ! const DLTensor *
      type(c_ptr), value :: weights  ! const DLTensor *
      type(c_ptr), value :: output  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_moe_combine
    function dt_moe_combine_backward(plan, d_out, weights, d_expert_out, &
        d_weights) bind(C, name="dt_moe_combine_backward") result(res)
      import
      type(c_ptr), value :: plan  ! dt_moe_plan *
      type(c_ptr), value :: d_out  ! const DLTensor *
      type(c_ptr), value :: weights  ! const DLTensor *
      type(c_ptr), value :: d_expert_out  ! DLTensor *
      type(c_ptr), value :: d_weights  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_moe_combine_backward
    function dt_moe_dispatch_backward(plan, d_received, &
        d_tokens) bind(C, name="dt_moe_dispatch_backward") result(res)
      import
      type(c_ptr), value :: plan  ! dt_moe_plan *
      type(c_ptr), value :: d_received  ! const DLTensor *
      type(c_ptr), value :: d_tokens  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_moe_dispatch_backward
    function dt_moe_experts_forward(x, counts, w1, w2, activation, hidden, &
        y) bind(C, name="dt_moe_experts_forward") result(res)
      import
      type(c_ptr), value :: x  ! const DLTensor *
      type(c_ptr), value :: counts  ! const DLTensor *
      type(c_ptr), value :: w1  ! const DLTensor *
      type(c_ptr), value :: w2  ! const DLTensor *
      integer(c_int), value :: activation  ! dt_moe_activation
      type(c_ptr), value :: hidden  ! DLTensor *
      type(c_ptr), value :: y  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_moe_experts_forward
    function dt_moe_experts_backward(x, counts, w1, w2, activation, hidden, dy, dx, dw1, &
        dw2) bind(C, name="dt_moe_experts_backward") result(res)
      import
      type(c_ptr), value :: x  ! const DLTensor *
      type(c_ptr), value :: counts  ! const DLTensor *
      type(c_ptr), value :: w1  ! const DLTensor *
      type(c_ptr), value :: w2  ! const DLTensor *
      integer(c_int), value :: activation  ! dt_moe_activation
      type(c_ptr), value :: hidden  ! const DLTensor *
      type(c_ptr), value :: dy  ! const DLTensor *
      type(c_ptr), value :: dx  ! DLTensor *
      type(c_ptr), value :: dw1  ! DLTensor *
      type(c_ptr), value :: dw2  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_moe_experts_backward
    function dt_optimizer_options_init(opts, &
        version) bind(C, name="dt_optimizer_options_init") result(res)
      import
      type(c_ptr), value :: opts  ! dt_optimizer_options *
      integer(c_int), value :: version  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_optimizer_options_init
    function dt_optimizer_create(out, params, grads, n, &
        opts) bind(C, name="dt_optimizer_create") result(res)
      import
      type(c_ptr), optional :: out  ! dt_optimizer * *
      type(c_ptr), value :: params  ! DLTensor *
      type(c_ptr), value :: grads  ! DLTensor *
      integer(c_size_t), value :: n  ! size_t
      type(c_ptr), value :: opts  ! const dt_optimizer_options *
      integer(c_int) :: res  ! dt_status
    end function dt_optimizer_create
    function dt_optimizer_step(opt, info) bind(C, name="dt_optimizer_step") result(res)
      import
      type(c_ptr), value :: opt  ! dt_optimizer *
      type(c_ptr), value :: info  ! dt_optimizer_step_info *
      integer(c_int) :: res  ! dt_status
    end function dt_optimizer_step
    function dt_optimizer_zero_grad(opt) bind(C, name="dt_optimizer_zero_grad") result(res)
      import
      type(c_ptr), value :: opt  ! dt_optimizer *
      integer(c_int) :: res  ! dt_status
    end function dt_optimizer_zero_grad
    function dt_optimizer_set_lr(opt, lr) bind(C, name="dt_optimizer_set_lr") result(res)
      import
      type(c_ptr), value :: opt  ! dt_optimizer *
      real(c_float), value :: lr  ! float
      integer(c_int) :: res  ! dt_status
    end function dt_optimizer_set_lr
    function dt_optimizer_lr(opt, out) bind(C, name="dt_optimizer_lr") result(res)
      import
      type(c_ptr), value :: opt  ! const dt_optimizer *
      type(c_ptr), value :: out  ! float *
      integer(c_int) :: res  ! dt_status
    end function dt_optimizer_lr
    function dt_optimizer_loss_scale(opt, out) bind(C, name="dt_optimizer_loss_scale") result(res)
      import
      type(c_ptr), value :: opt  ! const dt_optimizer *
      type(c_ptr), value :: out  ! float *
      integer(c_int) :: res  ! dt_status
    end function dt_optimizer_loss_scale
    function dt_optimizer_destroy(opt) bind(C, name="dt_optimizer_destroy") result(res)
      import
      type(c_ptr), value :: opt  ! dt_optimizer *
      integer(c_int) :: res  ! dt_status
    end function dt_optimizer_destroy
    function dt_pipeline_schedule_options_init(opts, &
        version) bind(C, name="dt_pipeline_schedule_options_init") result(res)
      import
      type(c_ptr), value :: opts  ! dt_pipeline_schedule_options *
      integer(c_int), value :: version  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_schedule_options_init
    function dt_pipeline_schedule_create(out, &
        opts) bind(C, name="dt_pipeline_schedule_create") result(res)
      import
      type(c_ptr), optional :: out  ! dt_pipeline_schedule * *
      type(c_ptr), value :: opts  ! const dt_pipeline_schedule_options *
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_schedule_create
    function dt_pipeline_schedule_destroy(s) bind(C, name="dt_pipeline_schedule_destroy") result(res)
      import
      type(c_ptr), value :: s  ! dt_pipeline_schedule *
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_schedule_destroy
    function dt_pipeline_schedule_length(s, rank, &
        out) bind(C, name="dt_pipeline_schedule_length") result(res)
      import
      type(c_ptr), value :: s  ! const dt_pipeline_schedule *
      integer(c_int), value :: rank  ! int
      type(c_ptr), value :: out  ! size_t *
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_schedule_length
    function dt_pipeline_schedule_action(s, rank, index, &
        out) bind(C, name="dt_pipeline_schedule_action") result(res)
      import
      type(c_ptr), value :: s  ! const dt_pipeline_schedule *
      integer(c_int), value :: rank  ! int
      integer(c_size_t), value :: index  ! size_t
      type(c_ptr), value :: out  ! dt_pipeline_action *
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_schedule_action
    function dt_pipeline_schedule_bubble_fraction(s, &
        out) bind(C, name="dt_pipeline_schedule_bubble_fraction") result(res)
      import
      type(c_ptr), value :: s  ! const dt_pipeline_schedule *
      type(c_ptr), value :: out  ! double *
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_schedule_bubble_fraction
    function dt_pipeline_schedule_peak_in_flight(s, rank, &
        out) bind(C, name="dt_pipeline_schedule_peak_in_flight") result(res)
      import
      type(c_ptr), value :: s  ! const dt_pipeline_schedule *
      integer(c_int), value :: rank  ! int
      type(c_ptr), value :: out  ! int *
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_schedule_peak_in_flight
    function dt_pipeline_options_init(opts, &
        version) bind(C, name="dt_pipeline_options_init") result(res)
      import
      type(c_ptr), value :: opts  ! dt_pipeline_options *
      integer(c_int), value :: version  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_options_init
    function dt_pipeline_create(out, comm, schedule, &
        opts) bind(C, name="dt_pipeline_create") result(res)
      import
      type(c_ptr), optional :: out  ! dt_pipeline * *
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), value :: schedule  ! const dt_pipeline_schedule *
      type(c_ptr), value :: opts  ! const dt_pipeline_options *
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_create
    function dt_pipeline_destroy(p) bind(C, name="dt_pipeline_destroy") result(res)
      import
      type(c_ptr), value :: p  ! dt_pipeline *
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_destroy
    function dt_pipeline_step(p, info) bind(C, name="dt_pipeline_step") result(res)
      import
      type(c_ptr), value :: p  ! dt_pipeline *
      type(c_ptr), value :: info  ! dt_pipeline_step_info *
      integer(c_int) :: res  ! dt_status
    end function dt_pipeline_step
    function dt_plan_model_init(model, version) bind(C, name="dt_plan_model_init") result(res)
      import
      type(c_ptr), value :: model  ! dt_plan_model *
      integer(c_int), value :: version  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_plan_model_init
    function dt_plan_options_init(opts, version) bind(C, name="dt_plan_options_init") result(res)
      import
      type(c_ptr), value :: opts  ! dt_plan_options *
      integer(c_int), value :: version  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_plan_options_init
    function dt_plan_config_init(config, version) bind(C, name="dt_plan_config_init") result(res)
      import
      type(c_ptr), value :: config  ! dt_plan_config *
      integer(c_int), value :: version  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_plan_config_init
    function dt_plan_cluster_preset(out, name, &
        nodes) bind(C, name="dt_plan_cluster_preset") result(res)
      import
      type(c_ptr), value :: out  ! dt_plan_cluster *
      type(c_ptr), value :: name  ! const char *
      integer(c_int), value :: nodes  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_plan_cluster_preset
    function dt_plan_cluster_load(out, path) bind(C, name="dt_plan_cluster_load") result(res)
      import
      type(c_ptr), value :: out  ! dt_plan_cluster *
      type(c_ptr), value :: path  ! const char *
      integer(c_int) :: res  ! dt_status
    end function dt_plan_cluster_load
    function dt_plan_create(out, model, cluster, opts) bind(C, name="dt_plan_create") result(res)
      import
      type(c_ptr), optional :: out  ! dt_plan * *
      type(c_ptr), value :: model  ! const dt_plan_model *
      type(c_ptr), value :: cluster  ! const dt_plan_cluster *
      type(c_ptr), value :: opts  ! const dt_plan_options *
      integer(c_int) :: res  ! dt_status
    end function dt_plan_create
    function dt_plan_destroy(plan) bind(C, name="dt_plan_destroy") result(res)
      import
      type(c_ptr), value :: plan  ! dt_plan *
      integer(c_int) :: res  ! dt_status
    end function dt_plan_destroy
    function dt_plan_info(plan, out) bind(C, name="dt_plan_info") result(res)
      import
      type(c_ptr), value :: plan  ! const dt_plan *
      type(c_ptr), value :: out  ! dt_plan_summary *
      integer(c_int) :: res  ! dt_status
    end function dt_plan_info
    function dt_plan_ranked(plan, index, out) bind(C, name="dt_plan_ranked") result(res)
      import
      type(c_ptr), value :: plan  ! const dt_plan *
      integer(c_size_t), value :: index  ! size_t
      type(c_ptr), value :: out  ! dt_plan_estimate *
      integer(c_int) :: res  ! dt_status
    end function dt_plan_ranked
    function dt_plan_rejected(plan, reason, out) bind(C, name="dt_plan_rejected") result(res)
      import
      type(c_ptr), value :: plan  ! const dt_plan *
      integer(c_int), value :: reason  ! dt_plan_reason
      type(c_ptr), value :: out  ! dt_plan_rejection *
      integer(c_int) :: res  ! dt_status
    end function dt_plan_rejected
    function dt_plan_evaluate(model, cluster, opts, config, &
        out) bind(C, name="dt_plan_evaluate") result(res)
      import
      type(c_ptr), value :: model  ! const dt_plan_model *
      type(c_ptr), value :: cluster  ! const dt_plan_cluster *
      type(c_ptr), value :: opts  ! const dt_plan_options *
      type(c_ptr), value :: config  ! const dt_plan_config *
      type(c_ptr), value :: out  ! dt_plan_estimate *
      integer(c_int) :: res  ! dt_status
    end function dt_plan_evaluate
    function dt_plan_write(plan, path, format, top) bind(C, name="dt_plan_write") result(res)
      import
      type(c_ptr), value :: plan  ! const dt_plan *
      type(c_ptr), value :: path  ! const char *
      integer(c_int), value :: format  ! dt_plan_format
      integer(c_size_t), value :: top  ! size_t
      integer(c_int) :: res  ! dt_status
    end function dt_plan_write
    function dt_plan_zero_memory(unit_elements, units, stage, ranks, rank, dtype, optim, &
        out) bind(C, name="dt_plan_zero_memory") result(res)
      import
      type(c_ptr), value :: unit_elements  ! const int64_t *
      integer(c_size_t), value :: units  ! size_t
      integer(c_int), value :: stage  ! int
      integer(c_int), value :: ranks  ! int
      integer(c_int), value :: rank  ! int
      type(DLDataType), value :: dtype  ! DLDataType
      type(c_ptr), value :: optim  ! const dt_optimizer_options *
      type(c_ptr), value :: out  ! dt_zero_memory *
      integer(c_int) :: res  ! dt_status
    end function dt_plan_zero_memory
    function dt_status_string(status) bind(C, name="dt_status_string") result(res)
      import
      integer(c_int), value :: status  ! dt_status
      type(c_ptr) :: res  ! const char *
    end function dt_status_string
    function dt_error_last() bind(C, name="dt_error_last") result(res)
      import
      type(c_ptr) :: res  ! const char *
    end function dt_error_last
    function dt_tensor_check(tensor, count) bind(C, name="dt_tensor_check") result(res)
      import
      type(c_ptr), value :: tensor  ! const DLTensor *
      type(c_ptr), value :: count  ! int64_t *
      integer(c_int) :: res  ! dt_status
    end function dt_tensor_check
    function dt_tp_region_forward(tp, region, input, &
        output) bind(C, name="dt_tp_region_forward") result(res)
      import
      type(c_ptr), value :: tp  ! dt_comm *
      integer(c_int), value :: region  ! dt_tp_region
      type(c_ptr), value :: input  ! const DLTensor *
      type(c_ptr), value :: output  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_tp_region_forward
    function dt_tp_region_backward(tp, region, grad_out, &
        grad_in) bind(C, name="dt_tp_region_backward") result(res)
      import
      type(c_ptr), value :: tp  ! dt_comm *
      integer(c_int), value :: region  ! dt_tp_region
      type(c_ptr), value :: grad_out  ! const DLTensor *
      type(c_ptr), value :: grad_in  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_tp_region_backward
    function dt_tp_column_linear_forward(tp, x, weight, bias, y, &
        flags) bind(C, name="dt_tp_column_linear_forward") result(res)
      import
      type(c_ptr), value :: tp  ! dt_comm *
      type(c_ptr), value :: x  ! const DLTensor *
      type(c_ptr), value :: weight  ! const DLTensor *
      type(c_ptr), value :: bias  ! const DLTensor *
      type(c_ptr), value :: y  ! DLTensor *
      integer(c_int), value :: flags  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_tp_column_linear_forward
    function dt_tp_column_linear_backward(tp, x, weight, dy, dx, dweight, dbias, &
        flags) bind(C, name="dt_tp_column_linear_backward") result(res)
      import
      type(c_ptr), value :: tp  ! dt_comm *
      type(c_ptr), value :: x  ! const DLTensor *
      type(c_ptr), value :: weight  ! const DLTensor *
      type(c_ptr), value :: dy  ! const DLTensor *
      type(c_ptr), value :: dx  ! DLTensor *
      type(c_ptr), value :: dweight  ! DLTensor *
      type(c_ptr), value :: dbias  ! DLTensor *
      integer(c_int), value :: flags  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_tp_column_linear_backward
    function dt_tp_row_linear_forward(tp, x, weight, bias, y, &
        flags) bind(C, name="dt_tp_row_linear_forward") result(res)
      import
      type(c_ptr), value :: tp  ! dt_comm *
      type(c_ptr), value :: x  ! const DLTensor *
      type(c_ptr), value :: weight  ! const DLTensor *
      type(c_ptr), value :: bias  ! const DLTensor *
      type(c_ptr), value :: y  ! DLTensor *
      integer(c_int), value :: flags  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_tp_row_linear_forward
    function dt_tp_row_linear_backward(tp, x, weight, dy, dx, dweight, dbias, &
        flags) bind(C, name="dt_tp_row_linear_backward") result(res)
      import
      type(c_ptr), value :: tp  ! dt_comm *
      type(c_ptr), value :: x  ! const DLTensor *
      type(c_ptr), value :: weight  ! const DLTensor *
      type(c_ptr), value :: dy  ! const DLTensor *
      type(c_ptr), value :: dx  ! DLTensor *
      type(c_ptr), value :: dweight  ! DLTensor *
      type(c_ptr), value :: dbias  ! DLTensor *
      integer(c_int), value :: flags  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_tp_row_linear_backward
    function dt_tp_embedding_forward(tp, table, ids, output, &
        flags) bind(C, name="dt_tp_embedding_forward") result(res)
      import
      type(c_ptr), value :: tp  ! dt_comm *
      type(c_ptr), value :: table  ! const DLTensor *
      type(c_ptr), value :: ids  ! const DLTensor *
      type(c_ptr), value :: output  ! DLTensor *
      integer(c_int), value :: flags  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_tp_embedding_forward
    function dt_tp_embedding_backward(tp, ids, dout, dtable, &
        flags) bind(C, name="dt_tp_embedding_backward") result(res)
      import
      type(c_ptr), value :: tp  ! dt_comm *
      type(c_ptr), value :: ids  ! const DLTensor *
      type(c_ptr), value :: dout  ! const DLTensor *
      type(c_ptr), value :: dtable  ! DLTensor *
      integer(c_int), value :: flags  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_tp_embedding_backward
    function dt_tp_cross_entropy_forward(tp, logits, targets, loss, lse, label_smoothing, &
        ignore_index) bind(C, name="dt_tp_cross_entropy_forward") result(res)
      import
      type(c_ptr), value :: tp  ! dt_comm *
      type(c_ptr), value :: logits  ! const DLTensor *
      type(c_ptr), value :: targets  ! const DLTensor *
      type(c_ptr), value :: loss  ! DLTensor *
      type(c_ptr), value :: lse  ! DLTensor *
      real(c_float), value :: label_smoothing  ! float
      integer(c_int64_t), value :: ignore_index  ! int64_t
      integer(c_int) :: res  ! dt_status
    end function dt_tp_cross_entropy_forward
    function dt_tp_cross_entropy_backward(tp, logits, targets, lse, dloss, dlogits, label_smoothing, &
        ignore_index) bind(C, name="dt_tp_cross_entropy_backward") result(res)
      import
      type(c_ptr), value :: tp  ! dt_comm *
      type(c_ptr), value :: logits  ! const DLTensor *
      type(c_ptr), value :: targets  ! const DLTensor *
      type(c_ptr), value :: lse  ! const DLTensor *
      type(c_ptr), value :: dloss  ! const DLTensor *
      type(c_ptr), value :: dlogits  ! DLTensor *
      real(c_float), value :: label_smoothing  ! float
      integer(c_int64_t), value :: ignore_index  ! int64_t
      integer(c_int) :: res  ! dt_status
    end function dt_tp_cross_entropy_backward
    function dt_tp_shard(kind, full, local, rank, size, q_heads, &
        kv_heads) bind(C, name="dt_tp_shard") result(res)
      import
      integer(c_int), value :: kind  ! dt_tp_shard_kind
      type(c_ptr), value :: full  ! const DLTensor *
      type(c_ptr), value :: local  ! DLTensor *
      integer(c_int), value :: rank  ! int
      integer(c_int), value :: size  ! int
      integer(c_int), value :: q_heads  ! int
      integer(c_int), value :: kv_heads  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_tp_shard
    function dt_tp_unshard(tp, kind, local, full, q_heads, &
        kv_heads) bind(C, name="dt_tp_unshard") result(res)
      import
      type(c_ptr), value :: tp  ! dt_comm *
      integer(c_int), value :: kind  ! dt_tp_shard_kind
      type(c_ptr), value :: local  ! const DLTensor *
      type(c_ptr), value :: full  ! DLTensor *
      integer(c_int), value :: q_heads  ! int
      integer(c_int), value :: kv_heads  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_tp_unshard
    subroutine dt_version(major, minor, patch) bind(C, name="dt_version")
      import
      type(c_ptr), value :: major  ! int *
      type(c_ptr), value :: minor  ! int *
      type(c_ptr), value :: patch  ! int *
    end subroutine dt_version
    function dt_build_info() bind(C, name="dt_build_info") result(res)
      import
      type(c_ptr) :: res  ! const char *
    end function dt_build_info
    function dt_zero_options_init(opts, version) bind(C, name="dt_zero_options_init") result(res)
      import
      type(c_ptr), value :: opts  ! dt_zero_options *
      integer(c_int), value :: version  ! unsigned
      integer(c_int) :: res  ! dt_status
    end function dt_zero_options_init
    function dt_zero_create(out, comm, params, n, optim, &
        opts) bind(C, name="dt_zero_create") result(res)
      import
      type(c_ptr), optional :: out  ! dt_zero * *
      type(c_ptr), value :: comm  ! dt_comm *
      type(c_ptr), intent(in) :: params(*)  ! const DLTensor * const *
      integer(c_size_t), value :: n  ! size_t
      type(c_ptr), value :: optim  ! const dt_optimizer_options *
      type(c_ptr), value :: opts  ! const dt_zero_options *
      integer(c_int) :: res  ! dt_status
    end function dt_zero_create
    function dt_zero_destroy(z) bind(C, name="dt_zero_destroy") result(res)
      import
      type(c_ptr), value :: z  ! dt_zero *
      integer(c_int) :: res  ! dt_status
    end function dt_zero_destroy
    function dt_zero_parameter(z, index, out) bind(C, name="dt_zero_parameter") result(res)
      import
      type(c_ptr), value :: z  ! dt_zero *
      integer(c_size_t), value :: index  ! size_t
      type(c_ptr), value :: out  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_zero_parameter
    function dt_zero_gradient(z, index, out) bind(C, name="dt_zero_gradient") result(res)
      import
      type(c_ptr), value :: z  ! dt_zero *
      integer(c_size_t), value :: index  ! size_t
      type(c_ptr), value :: out  ! DLTensor *
      integer(c_int) :: res  ! dt_status
    end function dt_zero_gradient
    function dt_zero_mark_ready(z, index) bind(C, name="dt_zero_mark_ready") result(res)
      import
      type(c_ptr), value :: z  ! dt_zero *
      integer(c_size_t), value :: index  ! size_t
      integer(c_int) :: res  ! dt_status
    end function dt_zero_mark_ready
    function dt_zero_wait(z, timeout_ms) bind(C, name="dt_zero_wait") result(res)
      import
      type(c_ptr), value :: z  ! dt_zero *
      integer(c_int), value :: timeout_ms  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_zero_wait
    function dt_zero_set_sync(z, sync) bind(C, name="dt_zero_set_sync") result(res)
      import
      type(c_ptr), value :: z  ! dt_zero *
      integer(c_int), value :: sync  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_zero_set_sync
    function dt_zero_step(z, info) bind(C, name="dt_zero_step") result(res)
      import
      type(c_ptr), value :: z  ! dt_zero *
      type(c_ptr), value :: info  ! dt_optimizer_step_info *
      integer(c_int) :: res  ! dt_status
    end function dt_zero_step
    function dt_zero_gather(z, unit) bind(C, name="dt_zero_gather") result(res)
      import
      type(c_ptr), value :: z  ! dt_zero *
      integer(c_size_t), value :: unit  ! size_t
      integer(c_int) :: res  ! dt_status
    end function dt_zero_gather
    function dt_zero_gather_wait(z, unit, &
        timeout_ms) bind(C, name="dt_zero_gather_wait") result(res)
      import
      type(c_ptr), value :: z  ! dt_zero *
      integer(c_size_t), value :: unit  ! size_t
      integer(c_int), value :: timeout_ms  ! int
      integer(c_int) :: res  ! dt_status
    end function dt_zero_gather_wait
    function dt_zero_release(z, unit) bind(C, name="dt_zero_release") result(res)
      import
      type(c_ptr), value :: z  ! dt_zero *
      integer(c_size_t), value :: unit  ! size_t
      integer(c_int) :: res  ! dt_status
    end function dt_zero_release
    function dt_zero_unit_count(z, out) bind(C, name="dt_zero_unit_count") result(res)
      import
      type(c_ptr), value :: z  ! const dt_zero *
      type(c_ptr), value :: out  ! size_t *
      integer(c_int) :: res  ! dt_status
    end function dt_zero_unit_count
    function dt_zero_set_lr(z, lr) bind(C, name="dt_zero_set_lr") result(res)
      import
      type(c_ptr), value :: z  ! dt_zero *
      real(c_float), value :: lr  ! float
      integer(c_int) :: res  ! dt_status
    end function dt_zero_set_lr
    function dt_zero_loss_scale(z, out) bind(C, name="dt_zero_loss_scale") result(res)
      import
      type(c_ptr), value :: z  ! const dt_zero *
      type(c_ptr), value :: out  ! float *
      integer(c_int) :: res  ! dt_status
    end function dt_zero_loss_scale
    function dt_zero_memory_usage(z, out) bind(C, name="dt_zero_memory_usage") result(res)
      import
      type(c_ptr), value :: z  ! const dt_zero *
      type(c_ptr), value :: out  ! dt_zero_memory *
      integer(c_int) :: res  ! dt_status
    end function dt_zero_memory_usage
    function dt_zero_save(z, dir) bind(C, name="dt_zero_save") result(res)
      import
      type(c_ptr), value :: z  ! dt_zero *
      type(c_ptr), value :: dir  ! const char *
      integer(c_int) :: res  ! dt_status
    end function dt_zero_save
    function dt_zero_load(z, dir) bind(C, name="dt_zero_load") result(res)
      import
      type(c_ptr), value :: z  ! dt_zero *
      type(c_ptr), value :: dir  ! const char *
      integer(c_int) :: res  ! dt_status
    end function dt_zero_load
  end interface
end module dtrain_capi
