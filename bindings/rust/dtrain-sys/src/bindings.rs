// Generated from capi/include/dtrain.h by regenerate.sh; do not edit.

pub const DT_VERSION_MAJOR: u32 = 0;
pub const DT_VERSION_MINOR: u32 = 1;
pub const DT_VERSION_PATCH: u32 = 0;
pub const DT_COMM_OPTIONS_VERSION: u32 = 1;
pub const DT_OP_STATS_VERSION: u32 = 1;
pub const DT_OPTIMIZER_OPTIONS_VERSION: u32 = 1;
pub const DT_OPTIMIZER_STEP_INFO_VERSION: u32 = 1;
pub const DT_DDP_OPTIONS_VERSION: u32 = 2;
pub const DT_ZERO_OPTIONS_VERSION: u32 = 3;
pub const DT_ZERO_MEMORY_VERSION: u32 = 1;
pub const DT_MESH_MAX_DIMS: u32 = 8;
pub const DT_MESH_MAX_NAME: u32 = 15;
pub const DT_TP_SEQUENCE_PARALLEL: u32 = 1;
pub const DT_TP_GATHER_OUTPUT: u32 = 2;
pub const DT_TP_ACCUMULATE: u32 = 4;
pub const DT_PIPELINE_SCHEDULE_OPTIONS_VERSION: u32 = 1;
pub const DT_PIPELINE_SCHEDULE_MAX_UNITS: u32 = 1048576;
pub const DT_PIPELINE_OPTIONS_VERSION: u32 = 1;
pub const DT_PIPELINE_STEP_INFO_VERSION: u32 = 1;
pub const DT_MOE_EXPERT_GRAD_DIMS: &[u8; 6usize] = b"dp,cp\0";
pub const DT_MOE_DENSE_GRAD_DIMS: &[u8; 9usize] = b"dp,cp,ep\0";
pub const DT_MOE_OPTIONS_VERSION: u32 = 1;
pub const DT_PLAN_MODEL_VERSION: u32 = 1;
pub const DT_PLAN_CLUSTER_VERSION: u32 = 2;
pub const DT_PLAN_OPTIONS_VERSION: u32 = 1;
pub const DT_PLAN_CONFIG_VERSION: u32 = 1;
pub const DT_PLAN_ESTIMATE_VERSION: u32 = 1;
pub const DT_PLAN_SUMMARY_VERSION: u32 = 1;
pub const DT_PLAN_REJECTION_VERSION: u32 = 1;
pub type __uint8_t = ::std::os::raw::c_uchar;
pub type __uint16_t = ::std::os::raw::c_ushort;
pub type __int64_t = ::std::os::raw::c_long;
pub type __uint64_t = ::std::os::raw::c_ulong;
#[doc = "< success"]
pub const DT_OK: dt_status = 0;
#[doc = "< a request has not finished yet"]
pub const DT_INPROGRESS: dt_status = 1;
#[doc = "< a bad argument; nothing was changed"]
pub const DT_ERR_INVALID_ARGUMENT: dt_status = -1;
#[doc = "< a call out of order or on the wrong object"]
pub const DT_ERR_INVALID_USAGE: dt_status = -2;
#[doc = "< not available in this build or on this machine"]
pub const DT_ERR_UNSUPPORTED: dt_status = -3;
#[doc = "< an allocation failed, or the store is full"]
pub const DT_ERR_OUT_OF_MEMORY: dt_status = -4;
#[doc = "< a deadline passed; names the ranks not heard from"]
pub const DT_ERR_TIMEOUT: dt_status = -5;
#[doc = "< a peer failed; names the rank"]
pub const DT_ERR_REMOTE: dt_status = -6;
#[doc = "< the network or transport failed"]
pub const DT_ERR_TRANSPORT: dt_status = -7;
#[doc = "< the communicator was aborted or is broken"]
pub const DT_ERR_ABORTED: dt_status = -8;
#[doc = "< rendezvous refused the job's secret"]
pub const DT_ERR_AUTH: dt_status = -9;
#[doc = "< ranks disagree about a collective"]
pub const DT_ERR_MISMATCH: dt_status = -10;
#[doc = "< a bug in libdtrain; please report it"]
pub const DT_ERR_INTERNAL: dt_status = -11;
#[doc = "< a file could not be read or written; names it"]
pub const DT_ERR_IO: dt_status = -12;
#[doc = " What every fallible call returns: DT_OK, DT_INPROGRESS, or a negative error. Values are fixed forever."]
pub type dt_status = ::std::os::raw::c_int;
extern "C" {
    #[doc = " A short, static description of a status (\"invalid argument\"). Never NULL;"]
    #[doc = " an unknown value gives \"unknown status\"."]
    pub fn dt_status_string(status: dt_status) -> *const ::std::os::raw::c_char;
}
extern "C" {
    #[doc = " The message of the last failure on the calling thread. Never NULL: an empty"]
    #[doc = " string when this thread has seen no failure. The text is owned by the library"]
    #[doc = " and stays valid until the next libdtrain call on this thread."]
    pub fn dt_error_last() -> *const ::std::os::raw::c_char;
}
extern "C" {
    #[doc = " The version of the library loaded at run time, which may differ from the"]
    #[doc = " DT_VERSION_* macros the caller was compiled with. Any pointer may be NULL."]
    pub fn dt_version(
        major: *mut ::std::os::raw::c_int,
        minor: *mut ::std::os::raw::c_int,
        patch: *mut ::std::os::raw::c_int,
    );
}
extern "C" {
    #[doc = " A static, human-readable description of the build: version, the backends and"]
    #[doc = " devices compiled in, and which of them were found at run time, e.g."]
    #[doc = " \"libdtrain 0.1.0; backends: self; ucx: 1.13.1; cuda: compiled, no device; nccl: not compiled\"."]
    #[doc = " Owned by the library; never NULL."]
    pub fn dt_build_info() -> *const ::std::os::raw::c_char;
}
#[doc = "< an operation failed"]
pub const DT_LOG_ERROR: dt_log_level = 0;
#[doc = "< something the user should know (the default level)"]
pub const DT_LOG_WARN: dt_log_level = 1;
#[doc = "< what a job is doing, a few lines per job"]
pub const DT_LOG_INFO: dt_log_level = 2;
#[doc = "< every refusal and choice, for finding a problem"]
pub const DT_LOG_DEBUG: dt_log_level = 3;
#[doc = "< every operation"]
pub const DT_LOG_TRACE: dt_log_level = 4;
#[doc = " How much a log line matters; a level lets through itself and the ones above it."]
pub type dt_log_level = ::std::os::raw::c_uint;
#[doc = " Receives one log line: its `level`, the `rank` of the process's most"]
#[doc = " recent communicator (-1 before there is one) and the `message`, UTF-8"]
#[doc = " text without time, rank, level or trailing newline, owned by the library"]
#[doc = " and valid only during the call. `user` is what dt_set_log_callback() was"]
#[doc = " given."]
pub type dt_log_fn = ::std::option::Option<
    unsafe extern "C" fn(
        user: *mut ::std::os::raw::c_void,
        level: dt_log_level,
        rank: ::std::os::raw::c_int,
        message: *const ::std::os::raw::c_char,
    ),
>;
extern "C" {
    #[doc = " Sends every log line at or above the level to `fn` instead of stderr or"]
    #[doc = " DTRAIN_LOG_FILE; `fn` NULL restores them (`user` is then ignored)."]
    #[doc = ""]
    #[doc = " `fn` is called on whichever thread logs, libdtrain's own included, but"]
    #[doc = " never by two threads at once: calls are serialised. It must return"]
    #[doc = " promptly and must not call libdtrain (a call that logs would wait for the"]
    #[doc = " callback to return). When dt_set_log_callback() returns, the previous"]
    #[doc = " callback is no longer running and will not be called again, so its"]
    #[doc = " `user` may be freed. Always DT_OK."]
    pub fn dt_set_log_callback(fn_: dt_log_fn, user: *mut ::std::os::raw::c_void) -> dt_status;
}
extern "C" {
    #[doc = " Sets the level, in place of DTRAIN_LOG_LEVEL's (which is not read again)."]
    #[doc = " A value outside dt_log_level is DT_ERR_INVALID_ARGUMENT and changes"]
    #[doc = " nothing."]
    pub fn dt_set_log_level(level: dt_log_level) -> dt_status;
}
pub const kDLCPU: DLDeviceType = 1;
pub const kDLCUDA: DLDeviceType = 2;
pub const kDLCUDAHost: DLDeviceType = 3;
pub const kDLOpenCL: DLDeviceType = 4;
pub const kDLVulkan: DLDeviceType = 7;
pub const kDLMetal: DLDeviceType = 8;
pub const kDLVPI: DLDeviceType = 9;
pub const kDLROCM: DLDeviceType = 10;
pub const kDLROCMHost: DLDeviceType = 11;
pub const kDLExtDev: DLDeviceType = 12;
pub const kDLCUDAManaged: DLDeviceType = 13;
pub type DLDeviceType = ::std::os::raw::c_uint;
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct DLDevice {
    pub device_type: DLDeviceType,
    pub device_id: ::std::os::raw::c_int,
}
#[test]
fn bindgen_test_layout_DLDevice() {
    assert_eq!(
        ::std::mem::size_of::<DLDevice>(),
        8usize,
        concat!("Size of: ", stringify!(DLDevice))
    );
    assert_eq!(
        ::std::mem::align_of::<DLDevice>(),
        4usize,
        concat!("Alignment of ", stringify!(DLDevice))
    );
    fn test_field_device_type() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<DLDevice>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).device_type) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(DLDevice),
                "::",
                stringify!(device_type)
            )
        );
    }
    test_field_device_type();
    fn test_field_device_id() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<DLDevice>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).device_id) as usize - ptr as usize
            },
            4usize,
            concat!(
                "Offset of field: ",
                stringify!(DLDevice),
                "::",
                stringify!(device_id)
            )
        );
    }
    test_field_device_id();
}
pub const kDLInt: DLDataTypeCode = 0;
pub const kDLUInt: DLDataTypeCode = 1;
pub const kDLFloat: DLDataTypeCode = 2;
pub const kDLOpaqueHandle: DLDataTypeCode = 3;
pub const kDLBfloat: DLDataTypeCode = 4;
pub const kDLComplex: DLDataTypeCode = 5;
pub type DLDataTypeCode = ::std::os::raw::c_uint;
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct DLDataType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}
#[test]
fn bindgen_test_layout_DLDataType() {
    assert_eq!(
        ::std::mem::size_of::<DLDataType>(),
        4usize,
        concat!("Size of: ", stringify!(DLDataType))
    );
    assert_eq!(
        ::std::mem::align_of::<DLDataType>(),
        2usize,
        concat!("Alignment of ", stringify!(DLDataType))
    );
    fn test_field_code() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<DLDataType>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).code) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(DLDataType),
                "::",
                stringify!(code)
            )
        );
    }
    test_field_code();
    fn test_field_bits() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<DLDataType>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).bits) as usize - ptr as usize
            },
            1usize,
            concat!(
                "Offset of field: ",
                stringify!(DLDataType),
                "::",
                stringify!(bits)
            )
        );
    }
    test_field_bits();
    fn test_field_lanes() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<DLDataType>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).lanes) as usize - ptr as usize
            },
            2usize,
            concat!(
                "Offset of field: ",
                stringify!(DLDataType),
                "::",
                stringify!(lanes)
            )
        );
    }
    test_field_lanes();
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct DLTensor {
    pub data: *mut ::std::os::raw::c_void,
    pub device: DLDevice,
    pub ndim: ::std::os::raw::c_int,
    pub dtype: DLDataType,
    pub shape: *mut i64,
    pub strides: *mut i64,
    pub byte_offset: u64,
}
#[test]
fn bindgen_test_layout_DLTensor() {
    assert_eq!(
        ::std::mem::size_of::<DLTensor>(),
        48usize,
        concat!("Size of: ", stringify!(DLTensor))
    );
    assert_eq!(
        ::std::mem::align_of::<DLTensor>(),
        8usize,
        concat!("Alignment of ", stringify!(DLTensor))
    );
    fn test_field_data() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<DLTensor>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).data) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(DLTensor),
                "::",
                stringify!(data)
            )
        );
    }
    test_field_data();
    fn test_field_device() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<DLTensor>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).device) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(DLTensor),
                "::",
                stringify!(device)
            )
        );
    }
    test_field_device();
    fn test_field_ndim() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<DLTensor>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).ndim) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(DLTensor),
                "::",
                stringify!(ndim)
            )
        );
    }
    test_field_ndim();
    fn test_field_dtype() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<DLTensor>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).dtype) as usize - ptr as usize
            },
            20usize,
            concat!(
                "Offset of field: ",
                stringify!(DLTensor),
                "::",
                stringify!(dtype)
            )
        );
    }
    test_field_dtype();
    fn test_field_shape() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<DLTensor>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).shape) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(DLTensor),
                "::",
                stringify!(shape)
            )
        );
    }
    test_field_shape();
    fn test_field_strides() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<DLTensor>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).strides) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(DLTensor),
                "::",
                stringify!(strides)
            )
        );
    }
    test_field_strides();
    fn test_field_byte_offset() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<DLTensor>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).byte_offset) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(DLTensor),
                "::",
                stringify!(byte_offset)
            )
        );
    }
    test_field_byte_offset();
}
extern "C" {
    #[doc = " Checks that `tensor` is one libdtrain accepts and returns its element count"]
    #[doc = " in `*count` (may be NULL). DT_ERR_INVALID_ARGUMENT for a malformed tensor,"]
    #[doc = " DT_ERR_UNSUPPORTED for a device this machine cannot use; dt_error_last()"]
    #[doc = " says which property is wrong."]
    pub fn dt_tensor_check(tensor: *const DLTensor, count: *mut i64) -> dt_status;
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_comm {
    _unused: [u8; 0],
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_request {
    _unused: [u8; 0],
}
#[doc = "< NCCL for CUDA tensors when every rank has its own GPU and NCCL loads; UCX otherwise"]
pub const DT_BACKEND_AUTO: dt_backend = 0;
#[doc = "< UCX"]
pub const DT_BACKEND_UCX: dt_backend = 1;
#[doc = "< NCCL for CUDA tensors, required"]
pub const DT_BACKEND_NCCL: dt_backend = 2;
#[doc = " The transport of a communicator's collectives."]
pub type dt_backend = ::std::os::raw::c_uint;
#[doc = "< the sum"]
pub const DT_SUM: dt_reduce_op = 0;
#[doc = "< floating-point dtypes only"]
pub const DT_AVG: dt_reduce_op = 1;
#[doc = "< the largest"]
pub const DT_MAX: dt_reduce_op = 2;
#[doc = "< the smallest"]
pub const DT_MIN: dt_reduce_op = 3;
#[doc = "< the product"]
pub const DT_PROD: dt_reduce_op = 4;
#[doc = " How a reduction combines the ranks' elements."]
pub type dt_reduce_op = ::std::os::raw::c_uint;
#[doc = " The out-of-band allgather a caller may supply for rendezvous (for example an"]
#[doc = " MPI_Allgather). Every rank contributes `bytes` bytes from `send`; `recv`"]
#[doc = " receives world_size * bytes, in rank order. Returns DT_OK or an error."]
pub type dt_oob_allgather_fn = ::std::option::Option<
    unsafe extern "C" fn(
        user: *mut ::std::os::raw::c_void,
        send: *const ::std::os::raw::c_void,
        recv: *mut ::std::os::raw::c_void,
        bytes: usize,
    ) -> dt_status,
>;
#[doc = " Options for dt_comm_create(). Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_comm_options {
    #[doc = "< DT_COMM_OPTIONS_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< DT_UNDEF: from the environment"]
    pub rank: ::std::os::raw::c_int,
    #[doc = "< DT_UNDEF: from the environment"]
    pub world_size: ::std::os::raw::c_int,
    #[doc = "< \"host:port\" of the rendezvous store; NULL: environment"]
    pub store: *const ::std::os::raw::c_char,
    #[doc = "< shared secret; NULL: DTRAIN_AUTH_TOKEN"]
    pub auth_token: *const ::std::os::raw::c_char,
    #[doc = "< DT_BACKEND_AUTO (0) unless set"]
    pub backend: dt_backend,
    #[doc = "< CUDA ordinal; DT_UNDEF: the local rank modulo the devices, or CPU"]
    pub device: ::std::os::raw::c_int,
    #[doc = "< DT_UNDEF: DTRAIN_TIMEOUT_MS or 300000"]
    pub timeout_ms: ::std::os::raw::c_int,
    #[doc = "< NULL: rendezvous through the store"]
    pub oob_allgather: dt_oob_allgather_fn,
    #[doc = "< passed to oob_allgather"]
    pub oob_user: *mut ::std::os::raw::c_void,
}
#[test]
fn bindgen_test_layout_dt_comm_options() {
    assert_eq!(
        ::std::mem::size_of::<dt_comm_options>(),
        64usize,
        concat!("Size of: ", stringify!(dt_comm_options))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_comm_options>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_comm_options))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_comm_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_comm_options),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_rank() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_comm_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).rank) as usize - ptr as usize
            },
            4usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_comm_options),
                "::",
                stringify!(rank)
            )
        );
    }
    test_field_rank();
    fn test_field_world_size() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_comm_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).world_size) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_comm_options),
                "::",
                stringify!(world_size)
            )
        );
    }
    test_field_world_size();
    fn test_field_store() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_comm_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).store) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_comm_options),
                "::",
                stringify!(store)
            )
        );
    }
    test_field_store();
    fn test_field_auth_token() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_comm_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).auth_token) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_comm_options),
                "::",
                stringify!(auth_token)
            )
        );
    }
    test_field_auth_token();
    fn test_field_backend() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_comm_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).backend) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_comm_options),
                "::",
                stringify!(backend)
            )
        );
    }
    test_field_backend();
    fn test_field_device() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_comm_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).device) as usize - ptr as usize
            },
            36usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_comm_options),
                "::",
                stringify!(device)
            )
        );
    }
    test_field_device();
    fn test_field_timeout_ms() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_comm_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).timeout_ms) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_comm_options),
                "::",
                stringify!(timeout_ms)
            )
        );
    }
    test_field_timeout_ms();
    fn test_field_oob_allgather() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_comm_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).oob_allgather) as usize - ptr as usize
            },
            48usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_comm_options),
                "::",
                stringify!(oob_allgather)
            )
        );
    }
    test_field_oob_allgather();
    fn test_field_oob_user() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_comm_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).oob_user) as usize - ptr as usize
            },
            56usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_comm_options),
                "::",
                stringify!(oob_user)
            )
        );
    }
    test_field_oob_user();
}
extern "C" {
    #[doc = " Fills `opts` with the defaults of options version `version` (pass"]
    #[doc = " DT_COMM_OPTIONS_VERSION). Only the fields that version has are written."]
    #[doc = " DT_ERR_INVALID_ARGUMENT for NULL, version 0 or a version newer than this"]
    #[doc = " library's."]
    pub fn dt_comm_options_init(
        opts: *mut dt_comm_options,
        version: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Creates a communicator. `opts` NULL takes everything from the environment."]
    #[doc = " A world of one needs no store and no peer. The new communicator belongs to"]
    #[doc = " the caller (dt_comm_destroy())."]
    #[doc = ""]
    #[doc = " Network exposure (UCX backend): the ranks first compare their hosts"]
    #[doc = " through the rendezvous. When all share one host (one kernel boot, one"]
    #[doc = " network namespace), UCX uses shared memory and loopback only; otherwise it"]
    #[doc = " uses the interfaces named by DTRAIN_NET_IFNAME (a name or comma-separated"]
    #[doc = " list), by default the one through which the host reaches the store, and"]
    #[doc = " the host's RDMA ports. DTRAIN_NET_IFNAME, when set, applies to every job; a"]
    #[doc = " UCX_NET_DEVICES set by the user is left as it is. Every TCP listener UCX"]
    #[doc = " opens beyond loopback takes connections from the job's hosts' addresses"]
    #[doc = " alone (a socket filter drops other sources). UCX authenticates no peer:"]
    #[doc = " processes on the job's hosts, or sending from their addresses, can still"]
    #[doc = " connect. DT_ERR_INVALID_ARGUMENT: DTRAIN_NET_IFNAME names an interface"]
    #[doc = " this host lacks."]
    pub fn dt_comm_create(out: *mut *mut dt_comm, opts: *const dt_comm_options) -> dt_status;
}
extern "C" {
    #[doc = " Splits `parent` like MPI_Comm_split: ranks with the same `color` form a new"]
    #[doc = " communicator, ordered by `key` and then by parent rank. Collective over"]
    #[doc = " `parent`. `color` DT_UNDEF leaves this rank out (`*out` set to NULL);"]
    #[doc = " other negative colors are invalid. The result belongs to the caller and"]
    #[doc = " outlives nothing: destroy it before its parent."]
    pub fn dt_comm_split(
        out: *mut *mut dt_comm,
        parent: *mut dt_comm,
        color: ::std::os::raw::c_int,
        key: ::std::os::raw::c_int,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Binds `comm` to the calling thread (`bind` nonzero): from then on only this"]
    #[doc = " thread may run its collectives, point-to-point calls and splits, and any"]
    #[doc = " other gets DT_ERR_INVALID_USAGE (see \"Threads\" above). Call it when a"]
    #[doc = " communicator moves to another thread, a worker that trains say. `bind`"]
    #[doc = " 0 unbinds it: any thread may call, one at a time, and the program orders"]
    #[doc = " the calls alike on every rank. Local: talks to no other rank."]
    pub fn dt_comm_bind_thread(comm: *mut dt_comm, bind: ::std::os::raw::c_int) -> dt_status;
}
extern "C" {
    #[doc = " This process's rank in `comm`, 0 to size - 1, into *out."]
    pub fn dt_comm_rank(comm: *const dt_comm, out: *mut ::std::os::raw::c_int) -> dt_status;
}
extern "C" {
    #[doc = " The number of ranks in `comm` into *out."]
    pub fn dt_comm_size(comm: *const dt_comm, out: *mut ::std::os::raw::c_int) -> dt_status;
}
extern "C" {
    #[doc = " Aborts every pending and future operation on `comm`: waiters return"]
    #[doc = " DT_ERR_ABORTED. Safe from any thread at any time; never blocks."]
    pub fn dt_comm_abort(comm: *mut dt_comm) -> dt_status;
}
extern "C" {
    #[doc = " Destroys `comm` (NULL: no-op). Pending operations are aborted first."]
    pub fn dt_comm_destroy(comm: *mut dt_comm) -> dt_status;
}
extern "C" {
    #[doc = " recv[i] = op over ranks of send[i]; send and recv have the same count and dtype."]
    pub fn dt_allreduce(
        comm: *mut dt_comm,
        send: *const DLTensor,
        recv: *mut DLTensor,
        op: dt_reduce_op,
        stream: *mut ::std::os::raw::c_void,
        req: *mut *mut dt_request,
    ) -> dt_status;
}
extern "C" {
    #[doc = " send holds size * count elements; rank r receives block r reduced over ranks."]
    pub fn dt_reduce_scatter(
        comm: *mut dt_comm,
        send: *const DLTensor,
        recv: *mut DLTensor,
        op: dt_reduce_op,
        stream: *mut ::std::os::raw::c_void,
        req: *mut *mut dt_request,
    ) -> dt_status;
}
extern "C" {
    #[doc = " send holds count elements; recv holds size * count, in rank order."]
    pub fn dt_allgather(
        comm: *mut dt_comm,
        send: *const DLTensor,
        recv: *mut DLTensor,
        stream: *mut ::std::os::raw::c_void,
        req: *mut *mut dt_request,
    ) -> dt_status;
}
extern "C" {
    #[doc = " `buf` on `root` is copied into `buf` on every rank."]
    pub fn dt_broadcast(
        comm: *mut dt_comm,
        buf: *mut DLTensor,
        root: ::std::os::raw::c_int,
        stream: *mut ::std::os::raw::c_void,
        req: *mut *mut dt_request,
    ) -> dt_status;
}
extern "C" {
    #[doc = " send and recv hold size * count elements; block j of send goes to rank j."]
    pub fn dt_alltoall(
        comm: *mut dt_comm,
        send: *const DLTensor,
        recv: *mut DLTensor,
        stream: *mut ::std::os::raw::c_void,
        req: *mut *mut dt_request,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Like dt_alltoall with per-rank element counts. Blocks are packed in rank"]
    #[doc = " order: send_counts[j] elements go to rank j, recv_counts[j] come from rank j."]
    #[doc = " Both arrays have `size` entries, none negative; their sums may not exceed the"]
    #[doc = " tensors' counts. A count that disagrees with the peer's gives DT_ERR_MISMATCH:"]
    #[doc = " on every rank, with no recv written, where all ranks run on one host (the"]
    #[doc = " collectives then go through shared memory and every rank sees every"]
    #[doc = " rank's counts); otherwise on the rank that receives it."]
    pub fn dt_alltoallv(
        comm: *mut dt_comm,
        send: *const DLTensor,
        send_counts: *const i64,
        recv: *mut DLTensor,
        recv_counts: *const i64,
        stream: *mut ::std::os::raw::c_void,
        req: *mut *mut dt_request,
    ) -> dt_status;
}
extern "C" {
    #[doc = " recv = op over ranks of send, on `root` alone. send has the same count on"]
    #[doc = " every rank. On the root recv has send's count and dtype; recv == send"]
    #[doc = " (same data pointer) is in place. Off the root `recv` is ignored: neither"]
    #[doc = " checked nor written, and it may be NULL."]
    pub fn dt_reduce(
        comm: *mut dt_comm,
        send: *const DLTensor,
        recv: *mut DLTensor,
        op: dt_reduce_op,
        root: ::std::os::raw::c_int,
        stream: *mut ::std::os::raw::c_void,
        req: *mut *mut dt_request,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Every rank's send (count elements, the same count on every rank) lands in"]
    #[doc = " block r (elements [r * count, (r + 1) * count)) of recv on `root`, which"]
    #[doc = " holds size * count elements. On the root send may be recv's block `root`"]
    #[doc = " (in place); any other overlap is undefined. Off the root `recv` is"]
    #[doc = " ignored (neither checked nor written) and may be NULL."]
    pub fn dt_gather(
        comm: *mut dt_comm,
        send: *const DLTensor,
        recv: *mut DLTensor,
        root: ::std::os::raw::c_int,
        stream: *mut ::std::os::raw::c_void,
        req: *mut *mut dt_request,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Block r of send on `root` (elements [r * count, (r + 1) * count), send"]
    #[doc = " holding size * count elements) is copied into recv (count elements, the"]
    #[doc = " same count on every rank) of rank r. On the root recv may be send's block"]
    #[doc = " `root` (in place); any other overlap is undefined. Off the root `send` is"]
    #[doc = " ignored (neither checked nor read) and may be NULL."]
    pub fn dt_scatter(
        comm: *mut dt_comm,
        send: *const DLTensor,
        recv: *mut DLTensor,
        root: ::std::os::raw::c_int,
        stream: *mut ::std::os::raw::c_void,
        req: *mut *mut dt_request,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Like dt_allgather with a count per rank: recv_counts has `size` entries,"]
    #[doc = " the same on every rank, none negative (zeros allowed); send holds exactly"]
    #[doc = " recv_counts[rank] elements. Rank r's send lands in recv at elements"]
    #[doc = " [recv_counts[0] + ... + recv_counts[r - 1], ... + recv_counts[r]), packed in"]
    #[doc = " rank order; the counts may add up to less than recv holds, and the"]
    #[doc = " elements past their sum are not written. send may be this rank's block of"]
    #[doc = " recv (in place); any other overlap is undefined."]
    pub fn dt_allgatherv(
        comm: *mut dt_comm,
        send: *const DLTensor,
        recv: *mut DLTensor,
        recv_counts: *const i64,
        stream: *mut ::std::os::raw::c_void,
        req: *mut *mut dt_request,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Like dt_reduce_scatter with a count per rank: send holds blocks packed in"]
    #[doc = " rank order, block r having recv_counts[r] elements (the counts have"]
    #[doc = " `size` entries, the same on every rank, none negative, zeros allowed, and"]
    #[doc = " add up to at most send's count; elements past their sum are not read);"]
    #[doc = " recv holds exactly recv_counts[rank] elements and receives block `rank`"]
    #[doc = " reduced with `op` over the ranks. recv may be this rank's block of send"]
    #[doc = " (in place); any other overlap is undefined."]
    pub fn dt_reduce_scatterv(
        comm: *mut dt_comm,
        send: *const DLTensor,
        recv_counts: *const i64,
        recv: *mut DLTensor,
        op: dt_reduce_op,
        stream: *mut ::std::os::raw::c_void,
        req: *mut *mut dt_request,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Point-to-point. `tag` >= 0; messages between two ranks with one tag arrive in order."]
    pub fn dt_send(
        comm: *mut dt_comm,
        buf: *const DLTensor,
        peer: ::std::os::raw::c_int,
        tag: ::std::os::raw::c_int,
        stream: *mut ::std::os::raw::c_void,
        req: *mut *mut dt_request,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Receives into `buf` what `peer` sends with dt_send() and the same `tag`; see dt_send()."]
    pub fn dt_recv(
        comm: *mut dt_comm,
        buf: *mut DLTensor,
        peer: ::std::os::raw::c_int,
        tag: ::std::os::raw::c_int,
        stream: *mut ::std::os::raw::c_void,
        req: *mut *mut dt_request,
    ) -> dt_status;
}
pub const DT_P2P_SEND: dt_p2p_kind = 0;
pub const DT_P2P_RECV: dt_p2p_kind = 1;
#[doc = " What a dt_p2p_op does: values fixed forever."]
pub type dt_p2p_kind = ::std::os::raw::c_uint;
#[doc = " One send or receive of a dt_p2p_group(), as dt_send / dt_recv take it."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_p2p_op {
    #[doc = "< a dt_p2p_kind"]
    pub kind: ::std::os::raw::c_int,
    #[doc = "< sent from, or received into"]
    pub tensor: *const DLTensor,
    #[doc = "< the other rank, 0 <= peer < size (oneself included)"]
    pub peer: ::std::os::raw::c_int,
    #[doc = "< >= 0; matches the peer's dt_send / dt_recv / group op with this tag"]
    pub tag: ::std::os::raw::c_int,
}
#[test]
fn bindgen_test_layout_dt_p2p_op() {
    assert_eq!(
        ::std::mem::size_of::<dt_p2p_op>(),
        24usize,
        concat!("Size of: ", stringify!(dt_p2p_op))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_p2p_op>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_p2p_op))
    );
    fn test_field_kind() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_p2p_op>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).kind) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_p2p_op),
                "::",
                stringify!(kind)
            )
        );
    }
    test_field_kind();
    fn test_field_tensor() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_p2p_op>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).tensor) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_p2p_op),
                "::",
                stringify!(tensor)
            )
        );
    }
    test_field_tensor();
    fn test_field_peer() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_p2p_op>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).peer) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_p2p_op),
                "::",
                stringify!(peer)
            )
        );
    }
    test_field_peer();
    fn test_field_tag() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_p2p_op>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).tag) as usize - ptr as usize
            },
            20usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_p2p_op),
                "::",
                stringify!(tag)
            )
        );
    }
    test_field_tag();
}
extern "C" {
    #[doc = " Starts the `count` (>= 1) sends and receives of `ops` together, every one"]
    #[doc = " posted before any is waited for, and completes them as one: a single"]
    #[doc = " request (or, with req NULL, one return) for the group, DT_OK once every op"]
    #[doc = " has completed, otherwise the first error. Because nothing waits before"]
    #[doc = " everything is posted, patterns that deadlock with blocking calls (each rank"]
    #[doc = " sending a large buffer to both ring neighbours before receiving) complete."]
    #[doc = " Each op matches the peer's messages exactly as dt_send / dt_recv would"]
    #[doc = " (and may be matched by them): same tag and size, messages with one tag"]
    #[doc = " between two ranks arrive in the order posted, a size that differs from the"]
    #[doc = " peer's gives DT_ERR_MISMATCH. A send to oneself is buffered, as dt_send's"]
    #[doc = " is: the group does not wait for its receive (except over NCCL, below)."]
    #[doc = " Every op is checked before any starts; one bad op (kind not a"]
    #[doc = " dt_p2p_kind, NULL or invalid tensor, peer out of range, negative tag), ops"]
    #[doc = " NULL or count < 1 gives DT_ERR_INVALID_ARGUMENT naming it (\"ops[2].peer"]
    #[doc = " ...\") and starts nothing. A tensor may not appear in two ops of a group"]
    #[doc = " that write it. Where CUDA tensors go through NCCL, a group mixing host and"]
    #[doc = " CUDA tensors is refused with DT_ERR_UNSUPPORTED, as any NCCL operation that"]
    #[doc = " mixes them; over NCCL tags select nothing, as for dt_send / dt_recv there"]
    #[doc = " (messages between two ranks match in the order posted), and a group's"]
    #[doc = " message to oneself must be received within the same group."]
    pub fn dt_p2p_group(
        comm: *mut dt_comm,
        ops: *const dt_p2p_op,
        count: ::std::os::raw::c_int,
        stream: *mut ::std::os::raw::c_void,
        req: *mut *mut dt_request,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Returns when every rank has entered the barrier."]
    pub fn dt_barrier(comm: *mut dt_comm) -> dt_status;
}
extern "C" {
    #[doc = " Waits for `req` for at most `timeout_ms` (negative: the communicator's"]
    #[doc = " deadline). Returns the operation's status, or DT_ERR_TIMEOUT. Waiting again"]
    #[doc = " on a finished request returns the same status."]
    pub fn dt_request_wait(req: *mut dt_request, timeout_ms: ::std::os::raw::c_int) -> dt_status;
}
extern "C" {
    #[doc = " DT_OK when done, DT_INPROGRESS while running, or the operation's error."]
    pub fn dt_request_test(req: *mut dt_request) -> dt_status;
}
extern "C" {
    #[doc = " Releases `req` (NULL: no-op). An operation still running goes on; its"]
    #[doc = " buffers must stay valid until it completes or the communicator is destroyed."]
    pub fn dt_request_free(req: *mut dt_request);
}
pub const DT_OP_ALL: dt_op_kind = 0;
pub const DT_OP_ALLREDUCE: dt_op_kind = 1;
pub const DT_OP_REDUCE_SCATTER: dt_op_kind = 2;
pub const DT_OP_ALLGATHER: dt_op_kind = 3;
pub const DT_OP_BROADCAST: dt_op_kind = 4;
pub const DT_OP_ALLTOALL: dt_op_kind = 5;
pub const DT_OP_ALLTOALLV: dt_op_kind = 6;
pub const DT_OP_BARRIER: dt_op_kind = 7;
pub const DT_OP_REDUCE: dt_op_kind = 8;
pub const DT_OP_GATHER: dt_op_kind = 9;
pub const DT_OP_SCATTER: dt_op_kind = 10;
pub const DT_OP_ALLGATHERV: dt_op_kind = 11;
pub const DT_OP_REDUCE_SCATTERV: dt_op_kind = 12;
pub const DT_OP_SEND: dt_op_kind = 13;
pub const DT_OP_RECV: dt_op_kind = 14;
pub const DT_OP_P2P_GROUP: dt_op_kind = 15;
#[doc = " The kinds of operation a communicator counts (dt_comm_stats). Values are"]
#[doc = " fixed forever; DT_OP_ALL asks for the sum over every kind."]
pub type dt_op_kind = ::std::os::raw::c_uint;
#[doc = " What a communicator's operations of one kind added up to on this rank,"]
#[doc = " since it was created (dt_comm_stats). The caller sets `version`"]
#[doc = " (DT_OP_STATS_VERSION, or use the _INIT macro); the library writes the"]
#[doc = " other fields of that version. Grows only at its end."]
#[doc = ""]
#[doc = " An operation counts once it has finished, successfully or not; one still"]
#[doc = " running does not. `bytes` is the size of this rank's buffer the operation"]
#[doc = " is about: the send tensor (allreduce, reduce_scatter, allgather,"]
#[doc = " alltoall, alltoallv, reduce, gather, allgatherv, reduce_scatterv, send),"]
#[doc = " the buffer of a broadcast, the receive tensor of scatter and recv, all the"]
#[doc = " tensors of a p2p_group together, and 0 for a barrier. `seconds` is the"]
#[doc = " time from the call to the operation's completion, summed. Operations"]
#[doc = " libdtrain runs for itself on the communicator (a DDP's bucket"]
#[doc = " allreduces, a ZeRO step's collectives) count as the caller's do."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_op_stats {
    #[doc = "< DT_OP_STATS_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< operations finished"]
    pub count: i64,
    #[doc = "< of those, the ones that ended with an error"]
    pub failed: i64,
    #[doc = "< bytes, as above, summed"]
    pub bytes: i64,
    #[doc = "< from start to completion, summed"]
    pub seconds: f64,
}
#[test]
fn bindgen_test_layout_dt_op_stats() {
    assert_eq!(
        ::std::mem::size_of::<dt_op_stats>(),
        40usize,
        concat!("Size of: ", stringify!(dt_op_stats))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_op_stats>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_op_stats))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_op_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_op_stats),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_count() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_op_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).count) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_op_stats),
                "::",
                stringify!(count)
            )
        );
    }
    test_field_count();
    fn test_field_failed() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_op_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).failed) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_op_stats),
                "::",
                stringify!(failed)
            )
        );
    }
    test_field_failed();
    fn test_field_bytes() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_op_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).bytes) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_op_stats),
                "::",
                stringify!(bytes)
            )
        );
    }
    test_field_bytes();
    fn test_field_seconds() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_op_stats>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).seconds) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_op_stats),
                "::",
                stringify!(seconds)
            )
        );
    }
    test_field_seconds();
}
extern "C" {
    #[doc = " Fills `out` (its version set) with the totals of `comm`'s operations of"]
    #[doc = " `kind` on this rank (DT_OP_ALL: of every kind). Local: sends nothing, may"]
    #[doc = " be called at any time, also on a broken communicator. DT_ERR_INVALID_ARGUMENT"]
    #[doc = " for a NULL `comm` or `out`, an `out->version` this library does not write,"]
    #[doc = " or a `kind` that is not a dt_op_kind."]
    #[doc = ""]
    #[doc = " Each operation is also kept in a ring of the last"]
    #[doc = " DTRAIN_FLIGHT_RECORDER_ENTRIES (default 512) operations, which the flight"]
    #[doc = " recorder writes to DTRAIN_FLIGHT_RECORDER_DIR when a communicator times"]
    #[doc = " out, loses a peer or is aborted, and on SIGUSR1; DTRAIN_TRACE_FILE"]
    #[doc = " writes every operation to a Chrome trace; DTRAIN_WAIT_WARN_S (default 30,"]
    #[doc = " 0: never) is how often a blocked call warns which ranks it waits for;"]
    #[doc = " DTRAIN_LOG_LEVEL=trace logs each operation. docs/observability.md"]
    #[doc = " describes the files."]
    pub fn dt_comm_stats(
        comm: *const dt_comm,
        kind: dt_op_kind,
        out: *mut dt_op_stats,
    ) -> dt_status;
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_optimizer {
    _unused: [u8; 0],
}
#[doc = "< SGD with optional momentum, Nesterov momentum and L2 weight decay"]
pub const DT_OPTIM_SGD: dt_optimizer_kind = 0;
#[doc = "< Adam with decoupled weight decay and bias correction"]
pub const DT_OPTIM_ADAMW: dt_optimizer_kind = 1;
#[doc = " The update rule of a dt_optimizer."]
pub type dt_optimizer_kind = ::std::os::raw::c_uint;
#[doc = " Options for dt_optimizer_create(). Grows only at its end. The formulas are"]
#[doc = " PyTorch's torch.optim.SGD and torch.optim.AdamW, and the loss scaler"]
#[doc = " follows torch.cuda.amp.GradScaler."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_optimizer_options {
    #[doc = "< DT_OPTIMIZER_OPTIONS_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< the update rule (default DT_OPTIM_ADAMW)"]
    pub kind: dt_optimizer_kind,
    #[doc = "< learning rate, >= 0 (default 1e-3)"]
    pub lr: f32,
    #[doc = "< >= 0; SGD: added to the gradient (L2), AdamW: decoupled (default 0)"]
    pub weight_decay: f32,
    #[doc = "< SGD, in [0, 1); 0: plain SGD (default 0)"]
    pub momentum: f32,
    #[doc = "< SGD, in [0, 1] (default 0)"]
    pub dampening: f32,
    #[doc = "< SGD, 0 or 1; 1 needs momentum > 0 and dampening 0 (default 0)"]
    pub nesterov: ::std::os::raw::c_int,
    #[doc = "< AdamW, in [0, 1) (default 0.9)"]
    pub beta1: f32,
    #[doc = "< AdamW, in [0, 1) (default 0.999)"]
    pub beta2: f32,
    #[doc = "< AdamW, > 0 (default 1e-8)"]
    pub eps: f32,
    #[doc = "< > 0: clip the global gradient norm to this; <= 0: no clipping"]
    pub max_grad_norm: f32,
    #[doc = "< the factor the gradients arrive multiplied by, > 0 (default 1)"]
    pub loss_scale: f32,
    #[doc = "< 0 or 1: adjust loss_scale as below (default 0)"]
    pub dynamic_loss_scale: ::std::os::raw::c_int,
    #[doc = "< dynamic: the scale grows by this after growth_interval clean steps, > 1 (default 2)"]
    pub growth_factor: f32,
    #[doc = "< dynamic: the scale shrinks by this on inf/NaN, in (0, 1) (default 0.5)"]
    pub backoff_factor: f32,
    #[doc = "< dynamic: clean steps between growths, > 0; DT_UNDEF: 2000"]
    pub growth_interval: ::std::os::raw::c_int,
    #[doc = " NULL: the tensors are the whole model. Otherwise they are this rank's"]
    #[doc = "shard of a model sharded over `comm`'s ranks: every step sums the squared"]
    #[doc = "gradient norm over them (an allreduce, so every rank must step together),"]
    #[doc = "which also makes all ranks skip together. Borrowed; it must stay open"]
    #[doc = "while the optimizer steps. Leave it NULL for replicated (DDP) tensors."]
    pub comm: *mut dt_comm,
}
#[test]
fn bindgen_test_layout_dt_optimizer_options() {
    assert_eq!(
        ::std::mem::size_of::<dt_optimizer_options>(),
        72usize,
        concat!("Size of: ", stringify!(dt_optimizer_options))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_optimizer_options>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_optimizer_options))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_kind() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).kind) as usize - ptr as usize
            },
            4usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(kind)
            )
        );
    }
    test_field_kind();
    fn test_field_lr() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).lr) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(lr)
            )
        );
    }
    test_field_lr();
    fn test_field_weight_decay() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).weight_decay) as usize - ptr as usize
            },
            12usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(weight_decay)
            )
        );
    }
    test_field_weight_decay();
    fn test_field_momentum() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).momentum) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(momentum)
            )
        );
    }
    test_field_momentum();
    fn test_field_dampening() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).dampening) as usize - ptr as usize
            },
            20usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(dampening)
            )
        );
    }
    test_field_dampening();
    fn test_field_nesterov() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).nesterov) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(nesterov)
            )
        );
    }
    test_field_nesterov();
    fn test_field_beta1() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).beta1) as usize - ptr as usize
            },
            28usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(beta1)
            )
        );
    }
    test_field_beta1();
    fn test_field_beta2() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).beta2) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(beta2)
            )
        );
    }
    test_field_beta2();
    fn test_field_eps() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).eps) as usize - ptr as usize
            },
            36usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(eps)
            )
        );
    }
    test_field_eps();
    fn test_field_max_grad_norm() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).max_grad_norm) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(max_grad_norm)
            )
        );
    }
    test_field_max_grad_norm();
    fn test_field_loss_scale() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).loss_scale) as usize - ptr as usize
            },
            44usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(loss_scale)
            )
        );
    }
    test_field_loss_scale();
    fn test_field_dynamic_loss_scale() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).dynamic_loss_scale) as usize - ptr as usize
            },
            48usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(dynamic_loss_scale)
            )
        );
    }
    test_field_dynamic_loss_scale();
    fn test_field_growth_factor() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).growth_factor) as usize - ptr as usize
            },
            52usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(growth_factor)
            )
        );
    }
    test_field_growth_factor();
    fn test_field_backoff_factor() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).backoff_factor) as usize - ptr as usize
            },
            56usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(backoff_factor)
            )
        );
    }
    test_field_backoff_factor();
    fn test_field_growth_interval() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).growth_interval) as usize - ptr as usize
            },
            60usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(growth_interval)
            )
        );
    }
    test_field_growth_interval();
    fn test_field_comm() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).comm) as usize - ptr as usize
            },
            64usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_options),
                "::",
                stringify!(comm)
            )
        );
    }
    test_field_comm();
}
#[doc = " What one dt_optimizer_step() did. The caller sets `version`"]
#[doc = " (DT_OPTIMIZER_STEP_INFO_VERSION, or use the _INIT macro); the library"]
#[doc = " writes the other fields of that version. Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_optimizer_step_info {
    #[doc = "< DT_OPTIMIZER_STEP_INFO_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< 1: a gradient held inf or NaN and nothing was updated"]
    pub skipped: ::std::os::raw::c_int,
    #[doc = "< global L2 norm of the unscaled gradients before clipping (inf or NaN when skipped)"]
    pub grad_norm: f64,
    #[doc = "< steps applied so far; skipped steps do not count"]
    pub step: i64,
    #[doc = "< the scale to multiply the next loss by"]
    pub loss_scale: f32,
}
#[test]
fn bindgen_test_layout_dt_optimizer_step_info() {
    assert_eq!(
        ::std::mem::size_of::<dt_optimizer_step_info>(),
        32usize,
        concat!("Size of: ", stringify!(dt_optimizer_step_info))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_optimizer_step_info>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_optimizer_step_info))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_step_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_step_info),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_skipped() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_step_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).skipped) as usize - ptr as usize
            },
            4usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_step_info),
                "::",
                stringify!(skipped)
            )
        );
    }
    test_field_skipped();
    fn test_field_grad_norm() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_step_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).grad_norm) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_step_info),
                "::",
                stringify!(grad_norm)
            )
        );
    }
    test_field_grad_norm();
    fn test_field_step() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_step_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).step) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_step_info),
                "::",
                stringify!(step)
            )
        );
    }
    test_field_step();
    fn test_field_loss_scale() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_optimizer_step_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).loss_scale) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_optimizer_step_info),
                "::",
                stringify!(loss_scale)
            )
        );
    }
    test_field_loss_scale();
}
extern "C" {
    #[doc = " Fills `opts` with the defaults of options version `version` (pass"]
    #[doc = " DT_OPTIMIZER_OPTIONS_VERSION). Only the fields that version has are"]
    #[doc = " written. DT_ERR_INVALID_ARGUMENT for NULL, version 0 or a version newer"]
    #[doc = " than this library's."]
    pub fn dt_optimizer_options_init(
        opts: *mut dt_optimizer_options,
        version: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Creates an optimizer over `n` > 0 parameters `params[i]` with their"]
    #[doc = " gradients `grads[i]`. `opts` NULL: AdamW with the defaults. Makes the"]
    #[doc = " float32 master weights of float16/bfloat16 parameters and zeroed optimizer"]
    #[doc = " state. DT_ERR_INVALID_ARGUMENT for a bad tensor, a gradient that does not"]
    #[doc = " match its parameter, overlapping tensors or a bad option (dt_error_last()"]
    #[doc = " names it), or tensors on more than one device; DT_ERR_UNSUPPORTED for"]
    #[doc = " kDLCUDA tensors without CUDA support or a device; DT_ERR_OUT_OF_MEMORY when"]
    #[doc = " the device cannot hold the master weights and state. Nothing is written on"]
    #[doc = " failure. The optimizer belongs to the caller (dt_optimizer_destroy())."]
    pub fn dt_optimizer_create(
        out: *mut *mut dt_optimizer,
        params: *mut DLTensor,
        grads: *mut DLTensor,
        n: usize,
        opts: *const dt_optimizer_options,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Takes one step (see the top of this header). `info` may be NULL; otherwise"]
    #[doc = " its version must be set. With a `comm`, a failed allreduce returns its"]
    #[doc = " error and nothing is updated."]
    pub fn dt_optimizer_step(
        opt: *mut dt_optimizer,
        info: *mut dt_optimizer_step_info,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Sets every gradient to zero."]
    pub fn dt_optimizer_zero_grad(opt: *mut dt_optimizer) -> dt_status;
}
extern "C" {
    #[doc = " Sets the learning rate of the next steps (>= 0, finite), e.g. for a schedule."]
    pub fn dt_optimizer_set_lr(opt: *mut dt_optimizer, lr: f32) -> dt_status;
}
extern "C" {
    #[doc = " The current learning rate."]
    pub fn dt_optimizer_lr(opt: *const dt_optimizer, out: *mut f32) -> dt_status;
}
extern "C" {
    #[doc = " The current loss scale: what to multiply the next loss by (1 without loss scaling)."]
    pub fn dt_optimizer_loss_scale(opt: *const dt_optimizer, out: *mut f32) -> dt_status;
}
extern "C" {
    #[doc = " Destroys `opt` (NULL: no-op), freeing master weights and state. The tensors stay the caller's."]
    pub fn dt_optimizer_destroy(opt: *mut dt_optimizer) -> dt_status;
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_ddp {
    _unused: [u8; 0],
}
pub const DT_DDP_COMPRESS_NONE: dt_ddp_compression = 0;
pub const DT_DDP_COMPRESS_F16: dt_ddp_compression = 1;
pub const DT_DDP_COMPRESS_BF16: dt_ddp_compression = 2;
#[doc = " The type gradients travel in. f32 and f64 gradients are cast down for the"]
#[doc = " allreduce and back; 16-bit gradients travel as they are."]
pub type dt_ddp_compression = ::std::os::raw::c_uint;
#[doc = "< some of its gradients are not marked yet; nothing sent"]
pub const DT_BUCKET_WAITING: dt_bucket_state = 0;
#[doc = "< its allreduce is running"]
pub const DT_BUCKET_IN_FLIGHT: dt_bucket_state = 1;
#[doc = "< its allreduce is done; dt_ddp_wait() copies the result back"]
pub const DT_BUCKET_REDUCED: dt_bucket_state = 2;
#[doc = "< its allreduce failed; dt_ddp_wait() reports why"]
pub const DT_BUCKET_FAILED: dt_bucket_state = 3;
#[doc = " Where a bucket is in the current step (see dt_ddp_bucket_state())."]
pub type dt_bucket_state = ::std::os::raw::c_uint;
#[doc = " Options for dt_ddp_create(); every rank must pass the same, but for `stream`."]
#[doc = " Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_ddp_options {
    #[doc = "< DT_DDP_OPTIONS_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< bucket size on the wire (after compression), >= 1;"]
    #[doc = "DT_UNDEF: 25 MiB"]
    pub bucket_bytes: i64,
    #[doc = "< DT_DDP_COMPRESS_NONE"]
    pub compression: dt_ddp_compression,
    #[doc = "< nonzero: gradients not marked in a step count as zero"]
    #[doc = "from this rank; 0 or DT_UNDEF: dt_ddp_wait() fails"]
    pub find_unused: ::std::os::raw::c_int,
    #[doc = "< nonzero: weight ranks by dt_ddp_set_local_weight();"]
    #[doc = "0 or DT_UNDEF: uniform average"]
    pub weighted: ::std::os::raw::c_int,
    #[doc = "< CUDA gradients: the cudaStream_t backward writes them"]
    #[doc = "on; NULL: the legacy default stream. Each rank its own;"]
    #[doc = "ignored for host gradients"]
    pub stream: *mut ::std::os::raw::c_void,
}
#[test]
fn bindgen_test_layout_dt_ddp_options() {
    assert_eq!(
        ::std::mem::size_of::<dt_ddp_options>(),
        40usize,
        concat!("Size of: ", stringify!(dt_ddp_options))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_ddp_options>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_ddp_options))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_ddp_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_ddp_options),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_bucket_bytes() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_ddp_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).bucket_bytes) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_ddp_options),
                "::",
                stringify!(bucket_bytes)
            )
        );
    }
    test_field_bucket_bytes();
    fn test_field_compression() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_ddp_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).compression) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_ddp_options),
                "::",
                stringify!(compression)
            )
        );
    }
    test_field_compression();
    fn test_field_find_unused() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_ddp_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).find_unused) as usize - ptr as usize
            },
            20usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_ddp_options),
                "::",
                stringify!(find_unused)
            )
        );
    }
    test_field_find_unused();
    fn test_field_weighted() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_ddp_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).weighted) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_ddp_options),
                "::",
                stringify!(weighted)
            )
        );
    }
    test_field_weighted();
    fn test_field_stream() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_ddp_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).stream) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_ddp_options),
                "::",
                stringify!(stream)
            )
        );
    }
    test_field_stream();
}
extern "C" {
    #[doc = " Fills `opts` with the defaults of options version `version` (pass"]
    #[doc = " DT_DDP_OPTIONS_VERSION). Only the fields that version has are written."]
    #[doc = " DT_ERR_INVALID_ARGUMENT for NULL, version 0 or a version newer than this"]
    #[doc = " library's."]
    pub fn dt_ddp_options_init(
        opts: *mut dt_ddp_options,
        version: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Creates a DDP over the `n` gradients `grads[0..n)` (registration order:"]
    #[doc = " forward order, first layer first). Collective over `comm`. `opts` NULL:"]
    #[doc = " defaults. DT_ERR_INVALID_ARGUMENT for a NULL, non-floating, non-compact or"]
    #[doc = " overlapping gradient, gradients that mix host and device memory, device"]
    #[doc = " gradients on a device other than the communicator's or misaligned for it,"]
    #[doc = " or a bad option; DT_ERR_UNSUPPORTED for CUDA gradients on a communicator"]
    #[doc = " without a CUDA device, or float64 CUDA gradients with compression (the"]
    #[doc = " other ranks then get DT_ERR_MISMATCH saying which rank refused);"]
    #[doc = " DT_ERR_MISMATCH when ranks disagree about the gradients or options. The"]
    #[doc = " result belongs to the caller."]
    pub fn dt_ddp_create(
        out: *mut *mut dt_ddp,
        comm: *mut dt_comm,
        grads: *const *const DLTensor,
        n: usize,
        opts: *const dt_ddp_options,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Destroys `ddp` (NULL: no-op). Allreduces still in flight are waited for,"]
    #[doc = " within the communicator's deadline, since they write into the DDP's buffers."]
    pub fn dt_ddp_destroy(ddp: *mut dt_ddp) -> dt_status;
}
extern "C" {
    #[doc = " Gradient `index` is final for this step: it is copied into its bucket, and"]
    #[doc = " the bucket's allreduce starts once the bucket is complete and every earlier"]
    #[doc = " bucket has started. Does nothing with sync off. DT_ERR_INVALID_ARGUMENT for"]
    #[doc = " an index >= n; DT_ERR_INVALID_USAGE for an index already marked in this step."]
    pub fn dt_ddp_mark_ready(ddp: *mut dt_ddp, index: usize) -> dt_status;
}
extern "C" {
    #[doc = " Turns averaging on (nonzero) or off (0) for the steps that follow; on at"]
    #[doc = " creation. DT_ERR_INVALID_USAGE while a step has marked gradients that"]
    #[doc = " dt_ddp_wait() has not finished."]
    pub fn dt_ddp_set_sync(ddp: *mut dt_ddp, sync: ::std::os::raw::c_int) -> dt_status;
}
extern "C" {
    #[doc = " This rank's weight in the average, from the next step on (1 until set):"]
    #[doc = " finite and >= 0, for example the number of samples in this rank's batch."]
    #[doc = " DT_ERR_INVALID_ARGUMENT otherwise; DT_ERR_INVALID_USAGE without the"]
    #[doc = " `weighted` option or after the step's first mark."]
    pub fn dt_ddp_set_local_weight(ddp: *mut dt_ddp, weight: f64) -> dt_status;
}
extern "C" {
    #[doc = " Finishes the step: starts the buckets not started yet, waits for all of"]
    #[doc = " them for at most `timeout_ms` (negative: the communicator's deadline) and"]
    #[doc = " leaves the averaged gradients in place. With sync off, returns DT_OK at"]
    #[doc = " once and changes nothing."]
    #[doc = ""]
    #[doc = " Gradients never marked in this step: DT_ERR_INVALID_USAGE naming them, the"]
    #[doc = " step abandoned and every gradient left as it was; or, with `find_unused`,"]
    #[doc = " they count as zero from this rank and receive the average like the others."]
    #[doc = " Weights that add up to zero: DT_ERR_INVALID_USAGE. After DT_ERR_TIMEOUT,"]
    #[doc = " DT_ERR_REMOTE or DT_ERR_TRANSPORT the communicator is broken and some"]
    #[doc = " gradients may already hold their averages. The next step starts afresh in"]
    #[doc = " every case."]
    pub fn dt_ddp_wait(ddp: *mut dt_ddp, timeout_ms: ::std::os::raw::c_int) -> dt_status;
}
extern "C" {
    #[doc = " The number of buckets."]
    pub fn dt_ddp_bucket_count(ddp: *const dt_ddp, out: *mut usize) -> dt_status;
}
extern "C" {
    #[doc = " The bucket that holds gradient `index`; bucket 0 starts first."]
    pub fn dt_ddp_bucket_of(ddp: *const dt_ddp, index: usize, out: *mut usize) -> dt_status;
}
extern "C" {
    #[doc = " Where bucket `bucket` is in the current step; never blocks."]
    pub fn dt_ddp_bucket_state(
        ddp: *const dt_ddp,
        bucket: usize,
        out: *mut dt_bucket_state,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Makes replicas start identical: every rank's `params[0..n)` become those of"]
    #[doc = " rank `root`. Collective over `comm` and blocking (the communicator's"]
    #[doc = " deadline). Any supported dtype, integer buffers included, all in host"]
    #[doc = " memory or all on the communicator's CUDA device (ordered as a collective"]
    #[doc = " with a NULL stream is, see comm.h; in place on return). DT_ERR_MISMATCH"]
    #[doc = " on every rank when ranks disagree about the count, dtypes, shapes or root;"]
    #[doc = " DT_ERR_INVALID_ARGUMENT on a rank whose own tensors or root are bad (the"]
    #[doc = " others then get DT_ERR_MISMATCH)."]
    pub fn dt_ddp_broadcast_parameters(
        comm: *mut dt_comm,
        params: *const *mut DLTensor,
        n: usize,
        root: ::std::os::raw::c_int,
    ) -> dt_status;
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_zero {
    _unused: [u8; 0],
}
#[doc = " Options for dt_zero_create(); every rank must pass the same, but for `stream`."]
#[doc = " Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_zero_options {
    #[doc = "< DT_ZERO_OPTIONS_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< 0, 1, 2 or 3 (default 1)"]
    pub stage: ::std::os::raw::c_int,
    #[doc = "< stages 0–2 without unit_sizes: unit size in bytes, >= 1;"]
    #[doc = "DT_UNDEF: 25 MiB"]
    pub bucket_bytes: i64,
    #[doc = " Unit u holds the next unit_sizes[u] > 0 parameters; they add up to the"]
    #[doc = "number of parameters. NULL: one unit per parameter in stage 3, buckets"]
    #[doc = "of bucket_bytes in stages 0–2. Read during dt_zero_create() only."]
    pub unit_sizes: *const usize,
    #[doc = "< entries in unit_sizes"]
    pub unit_count: usize,
    #[doc = "< stage 3: nonzero prefetches the next unit (default 1)"]
    pub prefetch: ::std::os::raw::c_int,
    #[doc = "< CUDA parameters: the cudaStream_t the trainer reads parameters"]
    #[doc = "and writes gradients on; NULL: the legacy default stream. Each"]
    #[doc = "rank its own; ignored in host memory"]
    pub stream: *mut ::std::os::raw::c_void,
    #[doc = " Indices of parameters left out of the gradient norm on this rank"]
    #[doc = "because a rank of `optim->comm` counts the same gradient (see \"With"]
    #[doc = "tensor or pipeline parallelism\"); they are still clipped and updated."]
    #[doc = "Each index < n, none repeated; needs `optim->comm`. NULL: none. Read"]
    #[doc = "during dt_zero_create() only; the dt_zero's ranks must pass the same."]
    pub norm_excluded: *const usize,
    #[doc = "< entries in norm_excluded"]
    pub norm_excluded_count: usize,
}
#[test]
fn bindgen_test_layout_dt_zero_options() {
    assert_eq!(
        ::std::mem::size_of::<dt_zero_options>(),
        64usize,
        concat!("Size of: ", stringify!(dt_zero_options))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_zero_options>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_zero_options))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_options),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_stage() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).stage) as usize - ptr as usize
            },
            4usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_options),
                "::",
                stringify!(stage)
            )
        );
    }
    test_field_stage();
    fn test_field_bucket_bytes() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).bucket_bytes) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_options),
                "::",
                stringify!(bucket_bytes)
            )
        );
    }
    test_field_bucket_bytes();
    fn test_field_unit_sizes() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).unit_sizes) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_options),
                "::",
                stringify!(unit_sizes)
            )
        );
    }
    test_field_unit_sizes();
    fn test_field_unit_count() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).unit_count) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_options),
                "::",
                stringify!(unit_count)
            )
        );
    }
    test_field_unit_count();
    fn test_field_prefetch() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).prefetch) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_options),
                "::",
                stringify!(prefetch)
            )
        );
    }
    test_field_prefetch();
    fn test_field_stream() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).stream) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_options),
                "::",
                stringify!(stream)
            )
        );
    }
    test_field_stream();
    fn test_field_norm_excluded() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).norm_excluded) as usize - ptr as usize
            },
            48usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_options),
                "::",
                stringify!(norm_excluded)
            )
        );
    }
    test_field_norm_excluded();
    fn test_field_norm_excluded_count() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).norm_excluded_count) as usize - ptr as usize
            },
            56usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_options),
                "::",
                stringify!(norm_excluded_count)
            )
        );
    }
    test_field_norm_excluded_count();
}
#[doc = " Bytes this rank holds now, by purpose. The caller sets `version`"]
#[doc = " (DT_ZERO_MEMORY_VERSION, or use the _INIT macro); the library writes the"]
#[doc = " other fields of that version. Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_zero_memory {
    #[doc = "< DT_ZERO_MEMORY_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< full parameters (stages 0–2), or shards plus gathered units (stage 3)"]
    pub parameters: i64,
    #[doc = "< full gradients (stages 0–1), or the gradient shard (stages 2–3)"]
    pub gradients: i64,
    #[doc = "< float32 momentum / moments of the elements this rank updates"]
    pub optimizer_state: i64,
    #[doc = "< float32 copies of the 16-bit parameters this rank updates"]
    pub master_weights: i64,
    #[doc = "< unit gradient buffers of stages 2–3 and scratch space"]
    pub communication: i64,
    #[doc = "< elements added to make units divisible by N, in bytes, included above"]
    pub padding: i64,
    #[doc = "< the largest total of the five above since creation"]
    pub peak: i64,
}
#[test]
fn bindgen_test_layout_dt_zero_memory() {
    assert_eq!(
        ::std::mem::size_of::<dt_zero_memory>(),
        64usize,
        concat!("Size of: ", stringify!(dt_zero_memory))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_zero_memory>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_zero_memory))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_memory>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_memory),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_parameters() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_memory>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).parameters) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_memory),
                "::",
                stringify!(parameters)
            )
        );
    }
    test_field_parameters();
    fn test_field_gradients() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_memory>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).gradients) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_memory),
                "::",
                stringify!(gradients)
            )
        );
    }
    test_field_gradients();
    fn test_field_optimizer_state() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_memory>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).optimizer_state) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_memory),
                "::",
                stringify!(optimizer_state)
            )
        );
    }
    test_field_optimizer_state();
    fn test_field_master_weights() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_memory>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).master_weights) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_memory),
                "::",
                stringify!(master_weights)
            )
        );
    }
    test_field_master_weights();
    fn test_field_communication() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_memory>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).communication) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_memory),
                "::",
                stringify!(communication)
            )
        );
    }
    test_field_communication();
    fn test_field_padding() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_memory>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).padding) as usize - ptr as usize
            },
            48usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_memory),
                "::",
                stringify!(padding)
            )
        );
    }
    test_field_padding();
    fn test_field_peak() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_zero_memory>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).peak) as usize - ptr as usize
            },
            56usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_zero_memory),
                "::",
                stringify!(peak)
            )
        );
    }
    test_field_peak();
}
extern "C" {
    #[doc = " Fills `opts` with the defaults of options version `version` (pass"]
    #[doc = " DT_ZERO_OPTIONS_VERSION). DT_ERR_INVALID_ARGUMENT for NULL, version 0 or a"]
    #[doc = " version newer than this library's."]
    pub fn dt_zero_options_init(
        opts: *mut dt_zero_options,
        version: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Creates a dt_zero over `n` > 0 parameters whose dtypes, shapes and initial"]
    #[doc = " values are `params[0..n)` (read here only; rank 0's values are used on"]
    #[doc = " every rank, so replicas start identical). Collective over `comm`."]
    #[doc = " `optim` NULL: AdamW with its defaults. `optim->comm`: NULL when the"]
    #[doc = " parameters are the whole model (the dt_zero sums the norm over `comm`"]
    #[doc = " itself); otherwise the ranks holding the model's other parts (see \"With"]
    #[doc = " tensor or pipeline parallelism\"), which the dt_zero holds like `comm` and"]
    #[doc = " allreduces on in dt_zero_step() (so nothing else may use it then); it must"]
    #[doc = " not be `comm`. `opts` NULL:"]
    #[doc = " defaults. DT_ERR_INVALID_ARGUMENT for a bad tensor, mixed dtypes or a bad"]
    #[doc = " option (`optim->comm` equal to `comm`, a bad `norm_excluded`), parameters that mix host and device memory or sit on a device"]
    #[doc = " other than the communicator's; DT_ERR_UNSUPPORTED for kDLCUDA tensors in"]
    #[doc = " a build or on a machine without CUDA, or on a communicator without a CUDA"]
    #[doc = " device; DT_ERR_MISMATCH when ranks disagree about the parameters or"]
    #[doc = " options. The result belongs to the"]
    #[doc = " caller."]
    pub fn dt_zero_create(
        out: *mut *mut dt_zero,
        comm: *mut dt_comm,
        params: *const *const DLTensor,
        n: usize,
        optim: *const dt_optimizer_options,
        opts: *const dt_zero_options,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Destroys `z` (NULL: no-op), waiting for communication still in flight within the deadline."]
    pub fn dt_zero_destroy(z: *mut dt_zero) -> dt_status;
}
extern "C" {
    #[doc = " Fills `out` with parameter `index`'s full tensor (its registered dtype and"]
    #[doc = " shape, compact, memory owned by `z` where the parameters are: host"]
    #[doc = " memory, or kDLCUDA on their device). Stage 3: only while its unit is"]
    #[doc = " gathered and waited for, DT_ERR_INVALID_USAGE otherwise."]
    pub fn dt_zero_parameter(z: *mut dt_zero, index: usize, out: *mut DLTensor) -> dt_status;
}
extern "C" {
    #[doc = " Fills `out` with the buffer parameter `index`'s gradient is added into in"]
    #[doc = " this micro-step (see the top of this header). DT_ERR_INVALID_USAGE once"]
    #[doc = " the gradient is marked in this micro-step."]
    pub fn dt_zero_gradient(z: *mut dt_zero, index: usize, out: *mut DLTensor) -> dt_status;
}
extern "C" {
    #[doc = " Gradient `index` is final for this micro-step; its unit's reduction starts"]
    #[doc = " when the unit is complete. DT_ERR_INVALID_ARGUMENT for an index >= n;"]
    #[doc = " DT_ERR_INVALID_USAGE when already marked in this micro-step."]
    pub fn dt_zero_mark_ready(z: *mut dt_zero, index: usize) -> dt_status;
}
extern "C" {
    #[doc = " Ends a micro-step: starts the reductions not started yet and waits for all"]
    #[doc = " of them for at most `timeout_ms` (negative: the communicator's deadline)."]
    #[doc = " DT_ERR_INVALID_USAGE naming the gradients never marked. The micro-step is"]
    #[doc = " then abandoned: stages 0–1 keep what it added in the full buffer; stages"]
    #[doc = " 2–3 keep the share of the units whose reduction had already finished (a"]
    #[doc = " unit's buffer is freed as soon as it is reduced) and drop the rest; either"]
    #[doc = " way dt_zero_step() refuses until a micro-step under sync ends in"]
    #[doc = " dt_zero_wait()."]
    pub fn dt_zero_wait(z: *mut dt_zero, timeout_ms: ::std::os::raw::c_int) -> dt_status;
}
extern "C" {
    #[doc = " Turns the allreduce of stages 0–1 on (nonzero, the default) or off for the"]
    #[doc = " micro-steps that follow (see \"Gradient accumulation\"). DT_ERR_INVALID_USAGE"]
    #[doc = " in the middle of a micro-step."]
    pub fn dt_zero_set_sync(z: *mut dt_zero, sync: ::std::os::raw::c_int) -> dt_status;
}
extern "C" {
    #[doc = " Applies the optimizer to the gradients accumulated since the last step"]
    #[doc = " (dtrain/optim.h: global norm over all shards, clipping, loss scale,"]
    #[doc = " skipped on inf/NaN), makes the parameters whole again (stages 1–2:"]
    #[doc = " allgather of the updated shards) and zeroes the gradients. Collective."]
    #[doc = " DT_ERR_INVALID_USAGE when the last micro-step was not ended with"]
    #[doc = " dt_zero_wait() under sync, or a stage 3 unit is still gathered. `info`"]
    #[doc = " may be NULL; otherwise its version must be set."]
    pub fn dt_zero_step(z: *mut dt_zero, info: *mut dt_optimizer_step_info) -> dt_status;
}
extern "C" {
    #[doc = " Starts making unit `unit` whole (stage 3: allgather of its shards), plus"]
    #[doc = " the prefetch described at the top. Does not block. Stages 0–2: returns at"]
    #[doc = " once. DT_ERR_INVALID_ARGUMENT for a unit >= the unit count."]
    pub fn dt_zero_gather(z: *mut dt_zero, unit: usize) -> dt_status;
}
extern "C" {
    #[doc = " Waits until unit `unit` is whole, for at most `timeout_ms` (negative: the"]
    #[doc = " communicator's deadline); then dt_zero_parameter() serves its parameters."]
    #[doc = " Gathers it first if dt_zero_gather() was not called. Stages 0–2: returns"]
    #[doc = " at once."]
    pub fn dt_zero_gather_wait(
        z: *mut dt_zero,
        unit: usize,
        timeout_ms: ::std::os::raw::c_int,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Hands unit `unit`'s full parameters back (stage 3: their memory is freed;"]
    #[doc = " views of them become invalid). Stages 0–2: returns at once."]
    #[doc = " DT_ERR_INVALID_USAGE for a unit that is not gathered."]
    pub fn dt_zero_release(z: *mut dt_zero, unit: usize) -> dt_status;
}
extern "C" {
    #[doc = " The number of units."]
    pub fn dt_zero_unit_count(z: *const dt_zero, out: *mut usize) -> dt_status;
}
extern "C" {
    #[doc = " Sets the learning rate of the next steps (>= 0, finite)."]
    pub fn dt_zero_set_lr(z: *mut dt_zero, lr: f32) -> dt_status;
}
extern "C" {
    #[doc = " The current loss scale: what to multiply the next loss by (1 without loss scaling)."]
    pub fn dt_zero_loss_scale(z: *const dt_zero, out: *mut f32) -> dt_status;
}
extern "C" {
    #[doc = " Fills `out` (its version set) with this rank's memory now and its peak."]
    #[doc = " In host memory a dt_zero keeps the buffers it releases (gathered units,"]
    #[doc = " unit gradient buffers) for the next buffer of the same size, so that a"]
    #[doc = " step does not map and fault in fresh pages for them; the fields above"]
    #[doc = " count only buffers in use, and what is in use plus what is kept never"]
    #[doc = " exceeds `peak`. CUDA memory goes back to the device's stream-ordered pool."]
    pub fn dt_zero_memory_usage(z: *const dt_zero, out: *mut dt_zero_memory) -> dt_status;
}
extern "C" {
    #[doc = " Writes a checkpoint into directory `dir` (created if missing), replacing"]
    #[doc = " the one there: each rank's shards of the master weights (the parameters"]
    #[doc = " themselves when they are float32) and optimizer state, in"]
    #[doc = " `shard-<rank>-<generation>.bin`, and rank 0's `metadata` (the generation,"]
    #[doc = " world size, stage, dtype, optimizer kind, step count, loss scale, every"]
    #[doc = " parameter's shape, and which elements and SHA-256 each shard file holds,"]
    #[doc = " by index in the concatenation of all parameters). Collective; call"]
    #[doc = " between steps."]
    #[doc = ""]
    #[doc = " Atomic and durable: the shard files of a new generation are written and"]
    #[doc = " fsynced first; once every rank has confirmed, rank 0 renames the new"]
    #[doc = " metadata over the old (fsyncing the directory), which commits the save;"]
    #[doc = " then it removes the files of earlier generations and of interrupted"]
    #[doc = " saves (other files in `dir` are left alone). A save that fails or is"]
    #[doc = " killed at any point before the commit leaves the previous checkpoint in"]
    #[doc = " `dir` loadable and unchanged; after the commit, the new one."]
    #[doc = " DT_ERR_IO, on every rank, when a file cannot be written (a full disk"]
    #[doc = " among them); the error of the communicator when a rank fails."]
    pub fn dt_zero_save(z: *mut dt_zero, dir: *const ::std::os::raw::c_char) -> dt_status;
}
extern "C" {
    #[doc = " Loads the checkpoint in `dir`, written on any number of ranks and any"]
    #[doc = " stage, resharding it to this dt_zero's ranks and units. Collective; call"]
    #[doc = " between steps. DT_ERR_INVALID_ARGUMENT, on every rank, for a missing,"]
    #[doc = " truncated, corrupt or foreign file, or a checkpoint of other parameters"]
    #[doc = " (count, dtype, shapes) or another optimizer kind; dt_error_last() says"]
    #[doc = " which file and why. Either every rank loads everything or nothing changes."]
    pub fn dt_zero_load(z: *mut dt_zero, dir: *const ::std::os::raw::c_char) -> dt_status;
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_mesh {
    _unused: [u8; 0],
}
extern "C" {
    #[doc = " Lays the ranks of `comm` out as a mesh. `names[i]` and `sizes[i]` describe"]
    #[doc = " dimension i, innermost first (see above). `names` NULL means the customary"]
    #[doc = " five, {\"tp\", \"cp\", \"ep\", \"dp\", \"pp\"}, and then `ndims` must be 5. At most one"]
    #[doc = " size may be DT_UNDEF: it becomes the world size divided by the product of"]
    #[doc = " the others (as Megatron infers data parallelism), which must divide evenly."]
    #[doc = " Collective over `comm`."]
    #[doc = ""]
    #[doc = " DT_ERR_INVALID_ARGUMENT (nothing created, on this rank; DT_ERR_MISMATCH on"]
    #[doc = " the others): `out` or `comm` NULL; `ndims` outside 1..DT_MESH_MAX_DIMS or"]
    #[doc = " not 5 with `names` NULL; `sizes` NULL; a size below 1 other than one"]
    #[doc = " DT_UNDEF; a name NULL, empty, too long, with other characters, or repeated;"]
    #[doc = " a product of sizes other than the size of `comm` (the message gives the"]
    #[doc = " shape and both numbers). DT_ERR_MISMATCH: ranks disagree about the names or"]
    #[doc = " sizes. Errors of `comm` (DT_ERR_ABORTED, DT_ERR_TIMEOUT, ...) as for any"]
    #[doc = " collective."]
    pub fn dt_mesh_create(
        out: *mut *mut dt_mesh,
        comm: *mut dt_comm,
        ndims: ::std::os::raw::c_int,
        names: *const *const ::std::os::raw::c_char,
        sizes: *const ::std::os::raw::c_int,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Destroys `mesh` (NULL: no-op). Communicators from dt_mesh_comm() live on."]
    pub fn dt_mesh_destroy(mesh: *mut dt_mesh) -> dt_status;
}
extern "C" {
    #[doc = " The number of dimensions."]
    pub fn dt_mesh_ndims(mesh: *const dt_mesh, out: *mut ::std::os::raw::c_int) -> dt_status;
}
extern "C" {
    #[doc = " The number of ranks (the product of the sizes)."]
    pub fn dt_mesh_size(mesh: *const dt_mesh, out: *mut ::std::os::raw::c_int) -> dt_status;
}
extern "C" {
    #[doc = " This rank's rank in the mesh (its rank in the communicator it was created from)."]
    pub fn dt_mesh_rank(mesh: *const dt_mesh, out: *mut ::std::os::raw::c_int) -> dt_status;
}
extern "C" {
    #[doc = " The name of dimension `dim` (0 is innermost), borrowed from the mesh."]
    #[doc = " DT_ERR_INVALID_ARGUMENT when `dim` is outside 0..ndims-1."]
    pub fn dt_mesh_dim_name(
        mesh: *const dt_mesh,
        dim: ::std::os::raw::c_int,
        out: *mut *const ::std::os::raw::c_char,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The index of the dimension called `name` (0 is innermost)."]
    #[doc = " DT_ERR_INVALID_ARGUMENT, naming the mesh's dimensions, when there is none."]
    pub fn dt_mesh_dim_index(
        mesh: *const dt_mesh,
        name: *const ::std::os::raw::c_char,
        out: *mut ::std::os::raw::c_int,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The size of the dimension called `name`; DT_ERR_INVALID_ARGUMENT when there is none."]
    pub fn dt_mesh_dim_size(
        mesh: *const dt_mesh,
        name: *const ::std::os::raw::c_char,
        out: *mut ::std::os::raw::c_int,
    ) -> dt_status;
}
extern "C" {
    #[doc = " This rank's coordinate (0..size-1) in the dimension called `name`;"]
    #[doc = " DT_ERR_INVALID_ARGUMENT when there is none."]
    pub fn dt_mesh_coord(
        mesh: *const dt_mesh,
        name: *const ::std::os::raw::c_char,
        out: *mut ::std::os::raw::c_int,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The coordinates of mesh rank `rank`, one per dimension in mesh order, into"]
    #[doc = " `coords[0..ndims-1]`. `ncoords` is the length of `coords` and must equal"]
    #[doc = " ndims. DT_ERR_INVALID_ARGUMENT for a rank outside 0..size-1 or a wrong"]
    #[doc = " `ncoords` (nothing written)."]
    pub fn dt_mesh_coords_of(
        mesh: *const dt_mesh,
        rank: ::std::os::raw::c_int,
        coords: *mut ::std::os::raw::c_int,
        ncoords: ::std::os::raw::c_int,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The mesh rank at coordinates `coords[0..ndims-1]` (mesh order). `ncoords`"]
    #[doc = " must equal ndims. DT_ERR_INVALID_ARGUMENT for a wrong `ncoords` or a"]
    #[doc = " coordinate outside its dimension (the message names it)."]
    pub fn dt_mesh_rank_at(
        mesh: *const dt_mesh,
        coords: *const ::std::os::raw::c_int,
        ncoords: ::std::os::raw::c_int,
        out: *mut ::std::os::raw::c_int,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The mesh ranks of this rank's group over the dimensions listed in `names`"]
    #[doc = " (one name, or several separated by commas: \"dp,cp\"), in the order of the"]
    #[doc = " group's communicator ranks (see above): the members of what dt_mesh_comm()"]
    #[doc = " with the same `names` returns. Writes the group's size to `*count` and, when"]
    #[doc = " `capacity` is at least that size, the ranks to `ranks` (which may be NULL"]
    #[doc = " when `capacity` is 0, to ask for the size). Local: communicates nothing."]
    #[doc = " DT_ERR_INVALID_ARGUMENT for an unknown or repeated name, an empty list, or"]
    #[doc = " a `capacity` that is positive but too small (nothing written to `ranks`)."]
    pub fn dt_mesh_group_ranks(
        mesh: *const dt_mesh,
        names: *const ::std::os::raw::c_char,
        ranks: *mut ::std::os::raw::c_int,
        capacity: ::std::os::raw::c_int,
        count: *mut ::std::os::raw::c_int,
    ) -> dt_status;
}
extern "C" {
    #[doc = " A new communicator over this rank's group in the dimensions listed in"]
    #[doc = " `names` (as for dt_mesh_group_ranks()). Never NULL: every rank belongs to"]
    #[doc = " exactly one group. Collective over the whole mesh, every rank naming the"]
    #[doc = " same dimensions (in any order). The communicator belongs to the caller"]
    #[doc = " (dt_comm_destroy()) and has the timeout of the communicator the mesh was"]
    #[doc = " created from. DT_ERR_INVALID_ARGUMENT (this rank) / DT_ERR_MISMATCH (the"]
    #[doc = " others) for an unknown, repeated or empty name list; DT_ERR_MISMATCH when"]
    #[doc = " ranks name different sets of dimensions."]
    pub fn dt_mesh_comm(
        mesh: *mut dt_mesh,
        names: *const ::std::os::raw::c_char,
        out: *mut *mut dt_comm,
    ) -> dt_status;
}
pub const DT_TP_COPY: dt_tp_region = 0;
pub const DT_TP_REDUCE: dt_tp_region = 1;
pub const DT_TP_SCATTER: dt_tp_region = 2;
pub const DT_TP_GATHER: dt_tp_region = 3;
pub const DT_TP_SEQ_GATHER: dt_tp_region = 4;
pub const DT_TP_SEQ_REDUCE_SCATTER: dt_tp_region = 5;
#[doc = " The conjugate mappings: what a caller running its own GEMMs puts at the"]
#[doc = " edges of a tensor-parallel region. Each is a pair (forward, backward)."]
pub type dt_tp_region = ::std::os::raw::c_uint;
extern "C" {
    #[doc = " The forward half of `region`: `input` -> `output` (\"in\" and \"out\" above;"]
    #[doc = " both of one dtype). DT_TP_COPY and DT_TP_REDUCE may run in place (same"]
    #[doc = " data pointer)."]
    #[doc = " DT_TP_COPY, DT_TP_SCATTER communicate nothing; the others are collective."]
    pub fn dt_tp_region_forward(
        tp: *mut dt_comm,
        region: dt_tp_region,
        input: *const DLTensor,
        output: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The backward half of `region`: the gradient of its forward's output,"]
    #[doc = " `grad_out`, -> the gradient of its input, `grad_in`. Shapes are those of"]
    #[doc = " the forward's `output` and `input`. DT_TP_COPY and DT_TP_REDUCE may run in place."]
    #[doc = " DT_TP_REDUCE, DT_TP_GATHER communicate nothing; the others are collective."]
    pub fn dt_tp_region_backward(
        tp: *mut dt_comm,
        region: dt_tp_region,
        grad_out: *const DLTensor,
        grad_in: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Column-parallel linear: this rank holds `weight` [out/tp, in] (rows"]
    #[doc = " [r*out/tp, (r+1)*out/tp) of the full weight) and `bias` [out/tp] (or NULL)."]
    #[doc = ""]
    #[doc = "   y_r = x W_r^T + b_r"]
    #[doc = ""]
    #[doc = " `x` is [T, in], the same on every rank; with DT_TP_SEQUENCE_PARALLEL it is"]
    #[doc = " this rank's [T/tp, in] and is all-gathered first. `y` is [T, out/tp]; with"]
    #[doc = " DT_TP_GATHER_OUTPUT it is [T, out], gathered along the columns."]
    #[doc = " Communication: none, or one allgather (sequence parallel), plus one"]
    #[doc = " allgather when gathering the output. With sequence parallelism this rank's"]
    #[doc = " own rows of y are computed while the other ranks' rows of x arrive."]
    pub fn dt_tp_column_linear_forward(
        tp: *mut dt_comm,
        x: *const DLTensor,
        weight: *const DLTensor,
        bias: *const DLTensor,
        y: *mut DLTensor,
        flags: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Backward of dt_tp_column_linear_forward() with the same `x`, `weight` and"]
    #[doc = " `flags`; `dy` has the shape of its `y`."]
    #[doc = ""]
    #[doc = "   dW_r = dy_r^T x      db_r = sum over rows of dy_r"]
    #[doc = "   dx   = sum over ranks of dy_r W_r   (allreduce; with sequence parallelism"]
    #[doc = "                                        a reduce-scatter to this rank's rows)"]
    #[doc = ""]
    #[doc = " `dx` has the shape of `x` and may be NULL (no input gradient and no"]
    #[doc = " communication for it; every rank must pass NULL then); `dbias` may be NULL"]
    #[doc = " (and must be when the forward had no bias, or is simply not computed);"]
    #[doc = " `dweight` may be NULL (no weight gradient, and with sequence parallelism"]
    #[doc = " no gathering of `x`). A zero-bubble schedule splits the backward in two"]
    #[doc = " calls with the same arguments: `dweight` NULL for the input gradient, then"]
    #[doc = " `dx` NULL for the weight's (and the bias's)."]
    #[doc = " The reduction of dx runs while dW and db are computed, and a gathering of"]
    #[doc = " x while dx is computed. With sequence"]
    #[doc = " parallelism, `x` is either this rank's [T/tp, in], which is gathered again"]
    #[doc = " (as Megatron-LM does, to keep one copy of the activations), or the whole"]
    #[doc = " [T, in] the caller kept from the forward (for instance gathered by"]
    #[doc = " dt_tp_region_forward(DT_TP_SEQ_GATHER)), which costs no communication; `dx`"]
    #[doc = " is this rank's [T/tp, in] either way. DT_TP_ACCUMULATE adds into dweight"]
    #[doc = " and dbias. Communication: one allreduce (or reduce-scatter) when dx is"]
    #[doc = " wanted, plus one allgather when x is gathered again."]
    pub fn dt_tp_column_linear_backward(
        tp: *mut dt_comm,
        x: *const DLTensor,
        weight: *const DLTensor,
        dy: *const DLTensor,
        dx: *mut DLTensor,
        dweight: *mut DLTensor,
        dbias: *mut DLTensor,
        flags: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Row-parallel linear: this rank holds `weight` [out, in/tp] (columns"]
    #[doc = " [r*in/tp, (r+1)*in/tp) of the full weight); `bias` [out] (or NULL) is the"]
    #[doc = " whole bias, the same on every rank, added once after the reduction."]
    #[doc = ""]
    #[doc = "   y = sum over ranks of x_r W_r^T + b"]
    #[doc = ""]
    #[doc = " `x` is [T, in/tp] (the output of a column-parallel layer). `y` is [T, out]"]
    #[doc = " (an allreduce) or, with DT_TP_SEQUENCE_PARALLEL, this rank's [T/tp, out]"]
    #[doc = " (a reduce-scatter). DT_TP_GATHER_OUTPUT is refused."]
    pub fn dt_tp_row_linear_forward(
        tp: *mut dt_comm,
        x: *const DLTensor,
        weight: *const DLTensor,
        bias: *const DLTensor,
        y: *mut DLTensor,
        flags: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Backward of dt_tp_row_linear_forward(); `dy` has the shape of its `y` (with"]
    #[doc = " sequence parallelism it is all-gathered to [T, out] first)."]
    #[doc = ""]
    #[doc = "   dx_r = dy W_r      dW_r = dy^T x_r      db = sum over rows of dy (the"]
    #[doc = "                                           whole bias's gradient, the same on every rank)"]
    #[doc = ""]
    #[doc = " `dx` [T, in/tp], `dweight` and `dbias` may be NULL (a zero-bubble"]
    #[doc = " schedule's two halves, as for dt_tp_column_linear_backward())."]
    #[doc = " Communication: none, or one allgather with sequence parallelism, during"]
    #[doc = " which the rows of dx that follow this rank's own rows of dy are computed."]
    pub fn dt_tp_row_linear_backward(
        tp: *mut dt_comm,
        x: *const DLTensor,
        weight: *const DLTensor,
        dy: *const DLTensor,
        dx: *mut DLTensor,
        dweight: *mut DLTensor,
        dbias: *mut DLTensor,
        flags: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Vocabulary-parallel embedding: this rank holds rows [r*V/tp, (r+1)*V/tp) of"]
    #[doc = " the [V, H] table as `table` [V/tp, H] (f32). `ids` (i32 or i64, T of them,"]
    #[doc = " the same on every rank, each in [0, V)) select rows; each rank contributes"]
    #[doc = " the rows it holds (zeros elsewhere) and the contributions are summed:"]
    #[doc = " `output` is [T, H] (an allreduce) or, with DT_TP_SEQUENCE_PARALLEL, this"]
    #[doc = " rank's [T/tp, H] (a reduce-scatter). An id outside [0, V) is refused."]
    pub fn dt_tp_embedding_forward(
        tp: *mut dt_comm,
        table: *const DLTensor,
        ids: *const DLTensor,
        output: *mut DLTensor,
        flags: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Backward of dt_tp_embedding_forward(): `dout` has the shape of its `output`"]
    #[doc = " (all-gathered first with sequence parallelism); `dtable` [V/tp, H] gets,"]
    #[doc = " for each id this rank holds, the sum of the rows of dout with that id"]
    #[doc = " (overwritten, or added to with DT_TP_ACCUMULATE)."]
    pub fn dt_tp_embedding_backward(
        tp: *mut dt_comm,
        ids: *const DLTensor,
        dout: *const DLTensor,
        dtable: *mut DLTensor,
        flags: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Vocabulary-parallel cross-entropy on `logits` [T, V/tp] (f32; rank r holds"]
    #[doc = " classes [r*V/tp, (r+1)*V/tp)) against `targets` (i32 or i64, T of them, the"]
    #[doc = " same on every rank). Writes, for each row t, `loss`[t] (f32) and the"]
    #[doc = " log-sum-exp of the whole row, `lse`[t] (f32, for the backward):"]
    #[doc = ""]
    #[doc = "   loss = (1 - s) (lse - z_target) + s (lse - mean over V of z)"]
    #[doc = ""]
    #[doc = " with s = `label_smoothing` in [0, 1). A row whose target is `ignore_index`"]
    #[doc = " has loss 0 (and lse still written); any other target outside [0, V) is"]
    #[doc = " refused. The maximum, the sum of exponentials, the target logit and (with"]
    #[doc = " smoothing) the sum of logits are reduced over `tp` in two allreduces; the"]
    #[doc = " row maximum is subtracted first, so logits of magnitude 1e4 are exact."]
    pub fn dt_tp_cross_entropy_forward(
        tp: *mut dt_comm,
        logits: *const DLTensor,
        targets: *const DLTensor,
        loss: *mut DLTensor,
        lse: *mut DLTensor,
        label_smoothing: f32,
        ignore_index: i64,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Backward of dt_tp_cross_entropy_forward() with its `logits`, `targets`,"]
    #[doc = " `lse`, `label_smoothing` and `ignore_index`, for `dloss` [T] (f32): writes"]
    #[doc = " this rank's `dlogits` [T, V/tp] (f32; may be `logits` itself):"]
    #[doc = ""]
    #[doc = "   dlogits[t, j] = dloss[t] (exp(z[t, j] - lse[t]) - (1 - s) [j == target] - s / V)"]
    #[doc = ""]
    #[doc = " and zero on ignored rows. Local: communicates nothing."]
    pub fn dt_tp_cross_entropy_backward(
        tp: *mut dt_comm,
        logits: *const DLTensor,
        targets: *const DLTensor,
        lse: *const DLTensor,
        dloss: *const DLTensor,
        dlogits: *mut DLTensor,
        label_smoothing: f32,
        ignore_index: i64,
    ) -> dt_status;
}
pub const DT_TP_SHARD_ROWS: dt_tp_shard_kind = 0;
pub const DT_TP_SHARD_COLUMNS: dt_tp_shard_kind = 1;
pub const DT_TP_SHARD_QKV: dt_tp_shard_kind = 2;
#[doc = " How a full weight is split over the tensor-parallel ranks."]
pub type dt_tp_shard_kind = ::std::os::raw::c_uint;
extern "C" {
    #[doc = " Copies rank `rank`'s shard of `full` into `local` (the same dtype, any of"]
    #[doc = " the eight) for a group of `size` ranks. `q_heads` and `kv_heads` describe a"]
    #[doc = " DT_TP_SHARD_QKV weight (both divisible by `size`, the rows by q + 2 kv) and"]
    #[doc = " are ignored otherwise. Local: for initialising every rank from one full"]
    #[doc = " weight (made from one seed) or a checkpoint."]
    pub fn dt_tp_shard(
        kind: dt_tp_shard_kind,
        full: *const DLTensor,
        local: *mut DLTensor,
        rank: ::std::os::raw::c_int,
        size: ::std::os::raw::c_int,
        q_heads: ::std::os::raw::c_int,
        kv_heads: ::std::os::raw::c_int,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The inverse of dt_tp_shard(), collective over `tp`: every rank passes its"]
    #[doc = " `local` shard and receives the whole weight in `full`."]
    pub fn dt_tp_unshard(
        tp: *mut dt_comm,
        kind: dt_tp_shard_kind,
        local: *const DLTensor,
        full: *mut DLTensor,
        q_heads: ::std::os::raw::c_int,
        kv_heads: ::std::os::raw::c_int,
    ) -> dt_status;
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_pipeline_schedule {
    _unused: [u8; 0],
}
pub const DT_PIPELINE_GPIPE: dt_pipeline_schedule_kind = 0;
pub const DT_PIPELINE_1F1B: dt_pipeline_schedule_kind = 1;
pub const DT_PIPELINE_INTERLEAVED_1F1B: dt_pipeline_schedule_kind = 2;
pub const DT_PIPELINE_ZB_H1: dt_pipeline_schedule_kind = 3;
#[doc = " The schedule's algorithm (see the top of this header). Values fixed forever."]
pub type dt_pipeline_schedule_kind = ::std::os::raw::c_uint;
#[doc = "< forward of (chunk, microbatch)"]
pub const DT_PIPELINE_FORWARD: dt_pipeline_action_kind = 0;
#[doc = "< input and weight gradients of (chunk, microbatch)"]
pub const DT_PIPELINE_BACKWARD: dt_pipeline_action_kind = 1;
#[doc = "< input gradient only (ZB_H1)"]
pub const DT_PIPELINE_BACKWARD_INPUT: dt_pipeline_action_kind = 2;
#[doc = "< weight gradient only (ZB_H1), after its BACKWARD_INPUT"]
pub const DT_PIPELINE_BACKWARD_WEIGHT: dt_pipeline_action_kind = 3;
#[doc = "< send the forward output of (chunk, microbatch) to peer"]
pub const DT_PIPELINE_SEND_ACTIVATION: dt_pipeline_action_kind = 4;
#[doc = "< receive the forward input of (chunk, microbatch) from peer"]
pub const DT_PIPELINE_RECV_ACTIVATION: dt_pipeline_action_kind = 5;
#[doc = "< send the input gradient of (chunk, microbatch) to peer"]
pub const DT_PIPELINE_SEND_GRAD: dt_pipeline_action_kind = 6;
#[doc = "< receive the output gradient of (chunk, microbatch) from peer"]
pub const DT_PIPELINE_RECV_GRAD: dt_pipeline_action_kind = 7;
#[doc = " What one action does. Values fixed forever."]
pub type dt_pipeline_action_kind = ::std::os::raw::c_uint;
#[doc = " One step of a rank's list. A plain struct, fixed forever."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_pipeline_action {
    #[doc = "< what to do"]
    pub kind: dt_pipeline_action_kind,
    #[doc = "< this rank's model chunk, 0..chunks-1 (global stage chunk * stages + rank)"]
    pub chunk: ::std::os::raw::c_int,
    #[doc = "< 0..microbatches-1"]
    pub microbatch: ::std::os::raw::c_int,
    #[doc = "< sends and receives: the other rank; compute actions: -1"]
    pub peer: ::std::os::raw::c_int,
}
#[test]
fn bindgen_test_layout_dt_pipeline_action() {
    assert_eq!(
        ::std::mem::size_of::<dt_pipeline_action>(),
        16usize,
        concat!("Size of: ", stringify!(dt_pipeline_action))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_pipeline_action>(),
        4usize,
        concat!("Alignment of ", stringify!(dt_pipeline_action))
    );
    fn test_field_kind() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_action>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).kind) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_action),
                "::",
                stringify!(kind)
            )
        );
    }
    test_field_kind();
    fn test_field_chunk() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_action>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).chunk) as usize - ptr as usize
            },
            4usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_action),
                "::",
                stringify!(chunk)
            )
        );
    }
    test_field_chunk();
    fn test_field_microbatch() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_action>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).microbatch) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_action),
                "::",
                stringify!(microbatch)
            )
        );
    }
    test_field_microbatch();
    fn test_field_peer() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_action>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).peer) as usize - ptr as usize
            },
            12usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_action),
                "::",
                stringify!(peer)
            )
        );
    }
    test_field_peer();
}
#[doc = " Options for dt_pipeline_schedule_create(). Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_pipeline_schedule_options {
    #[doc = "< DT_PIPELINE_SCHEDULE_OPTIONS_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< default DT_PIPELINE_1F1B"]
    pub kind: dt_pipeline_schedule_kind,
    #[doc = "< p >= 1 ranks in the pipeline group; no default (DT_UNDEF is refused)"]
    pub stages: ::std::os::raw::c_int,
    #[doc = "< m >= 1; no default (DT_UNDEF is refused)"]
    pub microbatches: ::std::os::raw::c_int,
    #[doc = "< v per rank; DT_UNDEF: 2 for INTERLEAVED_1F1B, 1 otherwise"]
    pub chunks: ::std::os::raw::c_int,
}
#[test]
fn bindgen_test_layout_dt_pipeline_schedule_options() {
    assert_eq!(
        ::std::mem::size_of::<dt_pipeline_schedule_options>(),
        20usize,
        concat!("Size of: ", stringify!(dt_pipeline_schedule_options))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_pipeline_schedule_options>(),
        4usize,
        concat!("Alignment of ", stringify!(dt_pipeline_schedule_options))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_schedule_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_schedule_options),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_kind() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_schedule_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).kind) as usize - ptr as usize
            },
            4usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_schedule_options),
                "::",
                stringify!(kind)
            )
        );
    }
    test_field_kind();
    fn test_field_stages() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_schedule_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).stages) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_schedule_options),
                "::",
                stringify!(stages)
            )
        );
    }
    test_field_stages();
    fn test_field_microbatches() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_schedule_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).microbatches) as usize - ptr as usize
            },
            12usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_schedule_options),
                "::",
                stringify!(microbatches)
            )
        );
    }
    test_field_microbatches();
    fn test_field_chunks() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_schedule_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).chunks) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_schedule_options),
                "::",
                stringify!(chunks)
            )
        );
    }
    test_field_chunks();
}
extern "C" {
    #[doc = " Fills `opts` with the defaults of options version `version` (pass"]
    #[doc = " DT_PIPELINE_SCHEDULE_OPTIONS_VERSION): those of"]
    #[doc = " DT_PIPELINE_SCHEDULE_OPTIONS_INIT. DT_ERR_INVALID_ARGUMENT for NULL,"]
    #[doc = " version 0 or a version newer than this library's."]
    pub fn dt_pipeline_schedule_options_init(
        opts: *mut dt_pipeline_schedule_options,
        version: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Builds the schedule `opts` describes and stores it in `*out` (the"]
    #[doc = " caller's; free it with dt_pipeline_schedule_destroy()). On any error"]
    #[doc = " nothing is allocated and `*out` is left as it was."]
    #[doc = " DT_ERR_INVALID_ARGUMENT, with dt_error_last() naming the argument or"]
    #[doc = " field, for: `out` or `opts` NULL; opts->version 0 or newer than this"]
    #[doc = " library's; a kind that is not a dt_pipeline_schedule_kind; stages or"]
    #[doc = " microbatches below 1 (DT_UNDEF included); chunks other than 1 (or"]
    #[doc = " DT_UNDEF) for GPIPE, 1F1B and ZB_H1; chunks below 2 for"]
    #[doc = " INTERLEAVED_1F1B; microbatches not a multiple of stages for"]
    #[doc = " INTERLEAVED_1F1B; stages * microbatches * chunks above"]
    #[doc = " DT_PIPELINE_SCHEDULE_MAX_UNITS."]
    pub fn dt_pipeline_schedule_create(
        out: *mut *mut dt_pipeline_schedule,
        opts: *const dt_pipeline_schedule_options,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Frees `s` (NULL: no-op). Always DT_OK."]
    pub fn dt_pipeline_schedule_destroy(s: *mut dt_pipeline_schedule) -> dt_status;
}
extern "C" {
    #[doc = " The number of actions of rank `rank` (0..stages-1) in `*out`."]
    #[doc = " DT_ERR_INVALID_ARGUMENT for a NULL `s` or `out`, or a rank out of range."]
    pub fn dt_pipeline_schedule_length(
        s: *const dt_pipeline_schedule,
        rank: ::std::os::raw::c_int,
        out: *mut usize,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Action `index` (0..length-1) of rank `rank` in `*out`."]
    #[doc = " DT_ERR_INVALID_ARGUMENT for a NULL `s` or `out`, a rank out of range or"]
    #[doc = " an index past the end; `*out` is then unchanged."]
    pub fn dt_pipeline_schedule_action(
        s: *const dt_pipeline_schedule,
        rank: ::std::os::raw::c_int,
        index: usize,
        out: *mut dt_pipeline_action,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The fraction of a step each rank spends idle, in [0, 1), from the kind's"]
    #[doc = " closed form. It is exact for a simulation in which every chunk's forward"]
    #[doc = " takes 1 unit and its backward 2 (ZB_H1: FORWARD, BACKWARD_INPUT and"]
    #[doc = " BACKWARD_WEIGHT 1 unit each), communication is free, and each action"]
    #[doc = " starts as soon as its rank is free and its inputs have arrived:"]
    #[doc = "   GPIPE, 1F1B        (p - 1) / (m + p - 1)"]
    #[doc = "   INTERLEAVED_1F1B   (p - 1) / (v m + p - 1)"]
    #[doc = "   ZB_H1              (p - 1 + e) / (3 m + p - 1 + e), e = max(0, p - m)"]
    #[doc = " (ZB_H1 with m >= p idles (p - 1) units against 1F1B's 3 (p - 1): a third.)"]
    #[doc = " DT_ERR_INVALID_ARGUMENT for a NULL `s` or `out`."]
    pub fn dt_pipeline_schedule_bubble_fraction(
        s: *const dt_pipeline_schedule,
        out: *mut f64,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The most (chunk, micro-batch) pairs whose activations rank `rank` keeps"]
    #[doc = " at once, counted along its list: a pair is alive from its FORWARD until"]
    #[doc = " its BACKWARD, or its BACKWARD_WEIGHT for ZB_H1 (the weight gradient"]
    #[doc = " still reads the saved inputs). 1F1B: min(p - rank, m); GPIPE: m."]
    #[doc = " DT_ERR_INVALID_ARGUMENT for a NULL `s` or `out`, or a rank out of range."]
    pub fn dt_pipeline_schedule_peak_in_flight(
        s: *const dt_pipeline_schedule,
        rank: ::std::os::raw::c_int,
        out: *mut ::std::os::raw::c_int,
    ) -> dt_status;
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_pipeline {
    _unused: [u8; 0],
}
#[doc = " The trainer's forward of (chunk, microbatch); see the callbacks above."]
pub type dt_pipeline_forward_fn = ::std::option::Option<
    unsafe extern "C" fn(
        user: *mut ::std::os::raw::c_void,
        chunk: ::std::os::raw::c_int,
        microbatch: ::std::os::raw::c_int,
        input: *const DLTensor,
        output: *mut DLTensor,
    ) -> dt_status,
>;
#[doc = " The trainer's backward of (chunk, microbatch); see the callbacks above."]
pub type dt_pipeline_backward_fn = ::std::option::Option<
    unsafe extern "C" fn(
        user: *mut ::std::os::raw::c_void,
        chunk: ::std::os::raw::c_int,
        microbatch: ::std::os::raw::c_int,
        grad_output: *const DLTensor,
        grad_input: *mut DLTensor,
    ) -> dt_status,
>;
#[doc = " ZB_H1's weight-gradient half of a backward; see the callbacks above."]
pub type dt_pipeline_backward_weight_fn = ::std::option::Option<
    unsafe extern "C" fn(
        user: *mut ::std::os::raw::c_void,
        chunk: ::std::os::raw::c_int,
        microbatch: ::std::os::raw::c_int,
    ) -> dt_status,
>;
#[doc = " A chunk's gradients are complete for this step; see the callbacks above."]
pub type dt_pipeline_chunk_done_fn = ::std::option::Option<
    unsafe extern "C" fn(
        user: *mut ::std::os::raw::c_void,
        chunk: ::std::os::raw::c_int,
    ) -> dt_status,
>;
#[doc = " Options for dt_pipeline_create(). Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_pipeline_options {
    #[doc = "< DT_PIPELINE_OPTIONS_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< >= 1 elements per activation; no default (0 is refused)"]
    pub activation_elements: i64,
    #[doc = "< one of the eight dtypes; default float32"]
    pub activation_dtype: DLDataType,
    #[doc = "< required"]
    pub forward: dt_pipeline_forward_fn,
    #[doc = "< required"]
    pub backward: dt_pipeline_backward_fn,
    #[doc = "< ZB_H1 only, and required there"]
    pub backward_weight: dt_pipeline_backward_weight_fn,
    #[doc = "< optional"]
    pub chunk_done: dt_pipeline_chunk_done_fn,
    #[doc = "< passed first to every callback"]
    pub user: *mut ::std::os::raw::c_void,
}
#[test]
fn bindgen_test_layout_dt_pipeline_options() {
    assert_eq!(
        ::std::mem::size_of::<dt_pipeline_options>(),
        64usize,
        concat!("Size of: ", stringify!(dt_pipeline_options))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_pipeline_options>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_pipeline_options))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_options),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_activation_elements() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).activation_elements) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_options),
                "::",
                stringify!(activation_elements)
            )
        );
    }
    test_field_activation_elements();
    fn test_field_activation_dtype() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).activation_dtype) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_options),
                "::",
                stringify!(activation_dtype)
            )
        );
    }
    test_field_activation_dtype();
    fn test_field_forward() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).forward) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_options),
                "::",
                stringify!(forward)
            )
        );
    }
    test_field_forward();
    fn test_field_backward() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).backward) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_options),
                "::",
                stringify!(backward)
            )
        );
    }
    test_field_backward();
    fn test_field_backward_weight() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).backward_weight) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_options),
                "::",
                stringify!(backward_weight)
            )
        );
    }
    test_field_backward_weight();
    fn test_field_chunk_done() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).chunk_done) as usize - ptr as usize
            },
            48usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_options),
                "::",
                stringify!(chunk_done)
            )
        );
    }
    test_field_chunk_done();
    fn test_field_user() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).user) as usize - ptr as usize
            },
            56usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_options),
                "::",
                stringify!(user)
            )
        );
    }
    test_field_user();
}
#[doc = " What one dt_pipeline_step() measured on this rank. The caller sets"]
#[doc = " `version` (DT_PIPELINE_STEP_INFO_INIT); the step writes the other fields"]
#[doc = " of that version. Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_pipeline_step_info {
    #[doc = "< DT_PIPELINE_STEP_INFO_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< the whole step, from its start until every send completed"]
    pub step_seconds: f64,
    #[doc = "< time blocked waiting for receives: this rank's idle time"]
    pub recv_wait_seconds: f64,
    #[doc = "< time blocked in any wait: receives and sends"]
    pub comm_wait_seconds: f64,
    #[doc = "< recv_wait_seconds / step_seconds (0 for an empty step)"]
    pub bubble_fraction: f64,
    #[doc = "< the most (chunk, micro-batch) pairs alive at once, as in"]
    #[doc = "dt_pipeline_schedule_peak_in_flight()"]
    pub peak_in_flight: ::std::os::raw::c_int,
}
#[test]
fn bindgen_test_layout_dt_pipeline_step_info() {
    assert_eq!(
        ::std::mem::size_of::<dt_pipeline_step_info>(),
        48usize,
        concat!("Size of: ", stringify!(dt_pipeline_step_info))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_pipeline_step_info>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_pipeline_step_info))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_step_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_step_info),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_step_seconds() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_step_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).step_seconds) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_step_info),
                "::",
                stringify!(step_seconds)
            )
        );
    }
    test_field_step_seconds();
    fn test_field_recv_wait_seconds() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_step_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).recv_wait_seconds) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_step_info),
                "::",
                stringify!(recv_wait_seconds)
            )
        );
    }
    test_field_recv_wait_seconds();
    fn test_field_comm_wait_seconds() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_step_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).comm_wait_seconds) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_step_info),
                "::",
                stringify!(comm_wait_seconds)
            )
        );
    }
    test_field_comm_wait_seconds();
    fn test_field_bubble_fraction() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_step_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).bubble_fraction) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_step_info),
                "::",
                stringify!(bubble_fraction)
            )
        );
    }
    test_field_bubble_fraction();
    fn test_field_peak_in_flight() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_pipeline_step_info>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).peak_in_flight) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_pipeline_step_info),
                "::",
                stringify!(peak_in_flight)
            )
        );
    }
    test_field_peak_in_flight();
}
extern "C" {
    #[doc = " Fills `opts` with the defaults of options version `version` (pass"]
    #[doc = " DT_PIPELINE_OPTIONS_VERSION): those of DT_PIPELINE_OPTIONS_INIT."]
    #[doc = " DT_ERR_INVALID_ARGUMENT for NULL, version 0 or a version newer than this"]
    #[doc = " library's."]
    pub fn dt_pipeline_options_init(
        opts: *mut dt_pipeline_options,
        version: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Creates an executor for this rank of `comm`, the pipeline group (e.g."]
    #[doc = " dt_mesh_comm(mesh, \"pp\")): its rank r runs rank r's list of `schedule`."]
    #[doc = " Local: nothing is sent, so every rank of the group must create its"]
    #[doc = " executor with the same schedule and activation options. `*out` is the"]
    #[doc = " caller's (dt_pipeline_destroy()); on error it is left as it was."]
    #[doc = " DT_ERR_INVALID_ARGUMENT, naming the argument or field, for: `out`,"]
    #[doc = " `comm`, `schedule` or `opts` NULL; opts->version 0 or newer than this"]
    #[doc = " library's; a communicator whose size is not the schedule's stages;"]
    #[doc = " activation_elements below 1; an activation dtype libdtrain does not"]
    #[doc = " accept; forward or backward NULL; backward_weight NULL for a ZB_H1"]
    #[doc = " schedule, or set for any other kind."]
    pub fn dt_pipeline_create(
        out: *mut *mut dt_pipeline,
        comm: *mut dt_comm,
        schedule: *const dt_pipeline_schedule,
        opts: *const dt_pipeline_options,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Frees `p` (NULL: no-op). Always DT_OK."]
    pub fn dt_pipeline_destroy(p: *mut dt_pipeline) -> dt_status;
}
extern "C" {
    #[doc = " Runs one training step: this rank's actions, in order, calling the"]
    #[doc = " callbacks as the top of this section describes, and returns once every"]
    #[doc = " callback ran and every send completed. `info` (NULL: not wanted)"]
    #[doc = " receives the step's measurements when the step succeeds."]
    #[doc = " DT_ERR_INVALID_ARGUMENT for a NULL `p` or an `info` version this library"]
    #[doc = " does not write (nothing runs then). A callback's non-OK status, or"]
    #[doc = " DT_ERR_REMOTE / DT_ERR_TIMEOUT / DT_ERR_TRANSPORT from a send or"]
    #[doc = " receive, ends the step as described under \"Failures\"; DT_ERR_ABORTED"]
    #[doc = " when the communicator was already broken (with stages >= 2: a single"]
    #[doc = " stage never communicates)."]
    pub fn dt_pipeline_step(p: *mut dt_pipeline, info: *mut dt_pipeline_step_info) -> dt_status;
}
pub const DT_MOE_SOFTMAX: dt_moe_scoring = 0;
pub const DT_MOE_SIGMOID: dt_moe_scoring = 1;
#[doc = " How router logits become scores s[t][e]:"]
#[doc = "   DT_MOE_SOFTMAX  s[t] = softmax(logits[t]) over the E experts (Switch, GShard, Mixtral);"]
#[doc = "   DT_MOE_SIGMOID  s[t][e] = 1 / (1 + exp(-logits[t][e])) (DeepSeek-V3)."]
pub type dt_moe_scoring = ::std::os::raw::c_uint;
pub const DT_MOE_DROP_BY_POSITION: dt_moe_drop_policy = 0;
pub const DT_MOE_DROP_BY_SCORE: dt_moe_drop_policy = 1;
#[doc = " Which (token, choice) pairs an expert over capacity drops. Every token"]
#[doc = " routes to an expert at most once, so an expert's pairs are its tokens:"]
#[doc = "   DT_MOE_DROP_BY_POSITION  it keeps its first `capacity` tokens (lowest token"]
#[doc = "                            index) and drops the later ones;"]
#[doc = "   DT_MOE_DROP_BY_SCORE     it keeps the `capacity` tokens with the highest"]
#[doc = "                            score s[t][e] (ties: the lower token index) and"]
#[doc = "                            drops the lowest-scoring ones."]
pub type dt_moe_drop_policy = ::std::os::raw::c_uint;
#[doc = " Options of an MoE layer; every rank of the ep communicator passes the same. Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_moe_options {
    #[doc = "< DT_MOE_OPTIONS_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< E >= 1; required (DT_UNDEF is refused)"]
    pub num_experts: ::std::os::raw::c_int,
    #[doc = "< k, 1 <= k <= E; required"]
    pub top_k: ::std::os::raw::c_int,
    #[doc = "< default DT_MOE_SOFTMAX"]
    pub scoring: dt_moe_scoring,
    #[doc = "< nonzero: weights renormalised to sum to 1 over the k choices (default 0)"]
    pub normalize: ::std::os::raw::c_int,
    #[doc = "< > 0: capacity = ceil(capacity_factor * T * k / E) tokens per"]
    #[doc = "expert on each rank; <= 0: dropless (default 0)"]
    pub capacity_factor: f64,
    #[doc = "< with a capacity; default DT_MOE_DROP_BY_POSITION"]
    pub drop_policy: dt_moe_drop_policy,
}
#[test]
fn bindgen_test_layout_dt_moe_options() {
    assert_eq!(
        ::std::mem::size_of::<dt_moe_options>(),
        40usize,
        concat!("Size of: ", stringify!(dt_moe_options))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_moe_options>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_moe_options))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_moe_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_moe_options),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_num_experts() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_moe_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).num_experts) as usize - ptr as usize
            },
            4usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_moe_options),
                "::",
                stringify!(num_experts)
            )
        );
    }
    test_field_num_experts();
    fn test_field_top_k() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_moe_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).top_k) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_moe_options),
                "::",
                stringify!(top_k)
            )
        );
    }
    test_field_top_k();
    fn test_field_scoring() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_moe_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).scoring) as usize - ptr as usize
            },
            12usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_moe_options),
                "::",
                stringify!(scoring)
            )
        );
    }
    test_field_scoring();
    fn test_field_normalize() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_moe_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).normalize) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_moe_options),
                "::",
                stringify!(normalize)
            )
        );
    }
    test_field_normalize();
    fn test_field_capacity_factor() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_moe_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).capacity_factor) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_moe_options),
                "::",
                stringify!(capacity_factor)
            )
        );
    }
    test_field_capacity_factor();
    fn test_field_drop_policy() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_moe_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).drop_policy) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_moe_options),
                "::",
                stringify!(drop_policy)
            )
        );
    }
    test_field_drop_policy();
}
extern "C" {
    #[doc = " Fills `opts` with the defaults of options version `version` (pass"]
    #[doc = " DT_MOE_OPTIONS_VERSION); num_experts and top_k are left DT_UNDEF for the"]
    #[doc = " caller to set. DT_ERR_INVALID_ARGUMENT for NULL, version 0 or a version"]
    #[doc = " newer than this library's."]
    pub fn dt_moe_options_init(
        opts: *mut dt_moe_options,
        version: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Routes this rank's T tokens. Local. `logits` [T, E] float32 (E ="]
    #[doc = " opts->num_experts). For every token t, with scores s[t] (see dt_moe_scoring):"]
    #[doc = "   - its k experts are the k largest s[t][e], largest first, ties to the"]
    #[doc = "     lower expert index (top-k of the scores);"]
    #[doc = "   - weights[t][j] = s[t][experts_j], or with opts->normalize that divided"]
    #[doc = "     by the sum of the k chosen scores;"]
    #[doc = "   - with a capacity (capacity_factor > 0), each expert keeps at most"]
    #[doc = "     capacity = ceil(capacity_factor * T * k / E) of its tokens, chosen by"]
    #[doc = "     opts->drop_policy; a dropped pair keeps its weight (renormalisation is"]
    #[doc = "     over all k chosen scores, dropped or not) but its expert index becomes -1."]
    #[doc = " Writes `weights` [T, k] float32, `experts` [T, k] int64 (an expert index in"]
    #[doc = " 0..E-1, or -1 for a dropped pair) and `*dropped` (may be NULL), the number"]
    #[doc = " of pairs set to -1 (0 when dropless)."]
    #[doc = " DT_ERR_INVALID_ARGUMENT: a NULL tensor or opts, a wrong shape, num_experts"]
    #[doc = " or top_k unset or out of range, an unknown scoring or drop policy."]
    #[doc = " DT_ERR_UNSUPPORTED: logits or weights not float32."]
    pub fn dt_moe_route(
        logits: *const DLTensor,
        opts: *const dt_moe_options,
        weights: *mut DLTensor,
        experts: *mut DLTensor,
        dropped: *mut i64,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The backward pass of dt_moe_route(): from `d_weights` [T, k] float32, the"]
    #[doc = " gradient of the loss with respect to the weights it returned, writes"]
    #[doc = " `d_logits` [T, E] float32 (overwritten), the gradient with respect to"]
    #[doc = " `logits` [T, E] (the same logits and options as the forward pass; the"]
    #[doc = " top-k choice is recomputed from them and is not differentiated). Dropped"]
    #[doc = " pairs count like any other here: their weight's gradient is what"]
    #[doc = " `d_weights` says (dt_moe_combine_backward() gives them 0). Local. Errors as"]
    #[doc = " for dt_moe_route()."]
    pub fn dt_moe_route_backward(
        logits: *const DLTensor,
        d_weights: *const DLTensor,
        opts: *const dt_moe_options,
        d_logits: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The load-balancing loss of Switch Transformer over this rank's tokens"]
    #[doc = " (Fedus et al. 2021, eq. 4, generalised to k as in GShard and Megatron-Core):"]
    #[doc = ""]
    #[doc = "   loss = E * sum_i f_i * P_i,   f_i = counts[i] / (T * k),"]
    #[doc = "   P_i = (1/T) sum_t p[t][i],"]
    #[doc = ""]
    #[doc = " where counts[i] is the number of tokens whose top-k choice (before any"]
    #[doc = " capacity drop) includes expert i, and p[t] the router probabilities:"]
    #[doc = " softmax(logits[t]) with DT_MOE_SOFTMAX, and with DT_MOE_SIGMOID the scores"]
    #[doc = " normalised per token, s[t][i] / sum_e s[t][e] (DeepSeek-V3's). A uniform"]
    #[doc = " router gives 1. With T = 0 the loss is 0."]
    #[doc = " Writes `*loss` (unscaled), `counts` [E] int64 when not NULL, and when"]
    #[doc = " `d_logits` [T, E] float32 is not NULL ADDS coeff * d loss / d logits to"]
    #[doc = " it (f is a count, treated as a constant, as in the papers). Local. Errors"]
    #[doc = " as for dt_moe_route(); `loss` NULL is DT_ERR_INVALID_ARGUMENT."]
    pub fn dt_moe_balance_loss(
        logits: *const DLTensor,
        opts: *const dt_moe_options,
        coeff: f64,
        loss: *mut f64,
        counts: *mut DLTensor,
        d_logits: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The router z-loss of ST-MoE (Zoph et al. 2022, eq. 5) over this rank's"]
    #[doc = " tokens: loss = (1/T) sum_t (log sum_e exp(logits[t][e]))^2; 0 when T = 0."]
    #[doc = " `logits` [T, E] float32 with any E >= 1. Writes `*loss` (unscaled) and, when"]
    #[doc = " `d_logits` [T, E] float32 is not NULL, ADDS coeff * d loss / d logits ="]
    #[doc = " coeff * (2/T) * lse[t] * softmax(logits[t]) to it. Local."]
    #[doc = " DT_ERR_INVALID_ARGUMENT: NULL logits or loss, a wrong shape;"]
    #[doc = " DT_ERR_UNSUPPORTED: not float32."]
    pub fn dt_moe_z_loss(
        logits: *const DLTensor,
        coeff: f64,
        loss: *mut f64,
        d_logits: *mut DLTensor,
    ) -> dt_status;
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_moe_plan {
    _unused: [u8; 0],
}
extern "C" {
    #[doc = " Plans the exchange of this rank's tokens routed as `experts` [T, k] int64"]
    #[doc = " (what dt_moe_route() wrote: indices in 0..E-1, or -1 for a pair that goes"]
    #[doc = " nowhere; a token names an expert at most once) for tokens of `hidden` = H"]
    #[doc = " >= 1 elements, over `ep`. Collective over `ep`: the ranks agree on E, k and"]
    #[doc = " H (DT_ERR_MISMATCH on every rank otherwise), then exchange how many rows"]
    #[doc = " each sends to each expert (one allgather of E int64 per rank) and the"]
    #[doc = " number of rows all ranks send (one allreduce)."]
    #[doc = " Of `opts` only num_experts and top_k matter here (the other fields must"]
    #[doc = " still be valid); k must equal experts' second dimension."]
    #[doc = ""]
    #[doc = " How rows travel. Where a rank's rows for one local expert come to at"]
    #[doc = " least DTRAIN_MOE_EXCHANGE_BYTES bytes on average (an integer, default"]
    #[doc = " 65536; 0: always), dispatch and combine move them with one all-to-all per"]
    #[doc = " local expert that lands each row in its place; below, with one"]
    #[doc = " all-to-all and a pass that reorders the rows on the experts' side, which"]
    #[doc = " costs less than many small exchanges. The results are the same either"]
    #[doc = " way. Ranks that set different values use their mean; a value that is not"]
    #[doc = " an integer in 0..2^31-1 is refused with DT_ERR_INVALID_ARGUMENT, and"]
    #[doc = " every other rank gets DT_ERR_MISMATCH."]
    #[doc = ""]
    #[doc = " Straight copies. Where the ranks of `ep` run on one host, share memory"]
    #[doc = " for their collectives and may read and write each other's memory (the"]
    #[doc = " same user, ptrace allowed; not with DTRAIN_UCX_LOCAL_BYTES=0 or"]
    #[doc = " DTRAIN_UCX_SINGLE_COPY_BYTES=0), host rows of a layer whose ranks"]
    #[doc = " send at least DTRAIN_MOE_DIRECT_BYTES bytes of rows on average (default"]
    #[doc = " 262144; 0: always; refused and averaged as above) skip the exchanges:"]
    #[doc = " each rank writes its rows, taken from the token matrix, straight to their"]
    #[doc = " places at the experts' ranks, and reads them back straight into its own"]
    #[doc = " memory, DTRAIN_MOE_DIRECT_ROUND_BYTES of rows at a time (default 1048576,"]
    #[doc = " this rank's alone; at least 1), which combine sums while they are in"]
    #[doc = " cache. Every row is copied once, as by a raw all-to-all. Each such call"]
    #[doc = " also makes two small collectives over `ep` (the addresses of the rows,"]
    #[doc = " then that every rank's copies are done); a rank whose copies failed gets"]
    #[doc = " their error, and every other rank DT_ERR_REMOTE naming it. Results are"]
    #[doc = " the same as by exchanges. Peers copy into and out of a call's tensors"]
    #[doc = " until every rank has said it is done: a call that ends in a timeout or"]
    #[doc = " an abort of `ep` (the communicator then broken) may leave a stalled"]
    #[doc = " peer still writing `received` or `d_expert_out`: after such a failure"]
    #[doc = " those tensors hold no defined values, and a rank should not free them"]
    #[doc = " before the job's other ranks have exited."]
    #[doc = ""]
    #[doc = " Order of the rows a rank receives (\"expert-major\"): one contiguous block"]
    #[doc = " per local expert, in local expert order; within a block, by source rank"]
    #[doc = " (the rank in `ep`), and within a source, by token index at the source."]
    #[doc = " dt_moe_plan_expert_counts() gives the block sizes."]
    #[doc = ""]
    #[doc = " Where rows travel: the plan's exchanges run in the place of the tensors"]
    #[doc = " of its first dispatch, combine or backward call (host memory, or that"]
    #[doc = " CUDA device, where it then keeps its indices and scratch rows); a later"]
    #[doc = " call with tensors elsewhere is refused with DT_ERR_INVALID_ARGUMENT on its"]
    #[doc = " rank (\"... a plan keeps the place of its first call\") and DT_ERR_MISMATCH"]
    #[doc = " on the others. Every rank of a call must pass the same kind of memory"]
    #[doc = " (host or CUDA): ranks that differ all get DT_ERR_MISMATCH. `experts` itself"]
    #[doc = " may be anywhere."]
    #[doc = ""]
    #[doc = " The plan keeps a reference to `ep`'s communicator (the caller may destroy"]
    #[doc = " `ep` first; calls that communicate then fail with DT_ERR_ABORTED) and"]
    #[doc = " belongs to the caller: dt_moe_plan_destroy(). One plan serves one forward"]
    #[doc = " and backward pass of one layer; the tensors it is given must match it."]
    #[doc = " DT_ERR_INVALID_ARGUMENT: `out`, `ep`, `experts` or `opts` NULL, E not a"]
    #[doc = " multiple of ep, k or E out of range, an index outside -1..E-1 or repeated in"]
    #[doc = " a row, `hidden` < 1."]
    pub fn dt_moe_plan_create(
        out: *mut *mut dt_moe_plan,
        ep: *mut dt_comm,
        experts: *const DLTensor,
        hidden: i64,
        opts: *const dt_moe_options,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Destroys `plan` (NULL: no-op)."]
    pub fn dt_moe_plan_destroy(plan: *mut dt_moe_plan) -> dt_status;
}
extern "C" {
    #[doc = " The global index of this rank's first local expert (rank * E/ep) and the number of local experts, E/ep."]
    pub fn dt_moe_plan_local_experts(
        plan: *const dt_moe_plan,
        first: *mut ::std::os::raw::c_int,
        count: *mut ::std::os::raw::c_int,
    ) -> dt_status;
}
extern "C" {
    #[doc = " R: the number of rows this rank receives in dt_moe_dispatch() (the sum of the expert counts); may be 0."]
    pub fn dt_moe_plan_received(plan: *const dt_moe_plan, rows: *mut i64) -> dt_status;
}
extern "C" {
    #[doc = " The rows this rank receives for each local expert, into counts[0..n-1]: the"]
    #[doc = " block sizes of the expert-major order (block l starts at the sum of"]
    #[doc = " counts[0..l-1]). `n` must equal E/ep (DT_ERR_INVALID_ARGUMENT otherwise,"]
    #[doc = " nothing written)."]
    pub fn dt_moe_plan_expert_counts(
        plan: *const dt_moe_plan,
        counts: *mut i64,
        n: ::std::os::raw::c_int,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Sends every kept pair's token to the rank of its expert: `tokens` [T, H]"]
    #[doc = " float32 in, `received` [R, H] float32 out, in the expert-major order above"]
    #[doc = " (row for pair (t, j) = tokens[t]). Collective over the plan's ep."]
    pub fn dt_moe_dispatch(
        plan: *mut dt_moe_plan,
        tokens: *const DLTensor,
        received: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The reverse exchange and the weighted sum: `expert_out` [R, H] float32 (the"]
    #[doc = " experts' outputs, row for row in the order dt_moe_dispatch() delivered) goes"]
    #[doc = " back to the tokens' ranks, and output[t] = sum over kept pairs (t, j) of"]
    #[doc = " weights[t][j] * (the row that came back for (t, j)); `weights` [T, k]"]
    #[doc = " float32, `output` [T, H] float32 (overwritten; 0 for a token with no kept"]
    #[doc = " pair). The plan keeps the rows that came back (T*k*H floats at most) for"]
    #[doc = " dt_moe_combine_backward(). Collective over the plan's ep."]
    pub fn dt_moe_combine(
        plan: *mut dt_moe_plan,
        expert_out: *const DLTensor,
        weights: *const DLTensor,
        output: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The backward pass of dt_moe_combine(), after it, with the same `weights`:"]
    #[doc = " from `d_out` [T, H] float32 (the gradient with respect to `output`) writes"]
    #[doc = "   d_weights [T, k] float32: d_weights[t][j] = dot(d_out[t], row of (t, j))"]
    #[doc = "     for a kept pair, 0 for a dropped one;"]
    #[doc = "   d_expert_out [R, H] float32: for each received row, weights[t][j] * d_out[t]"]
    #[doc = "     of its pair, delivered to the expert's rank in the expert-major order."]
    #[doc = " Collective over the plan's ep. DT_ERR_INVALID_USAGE (this rank;"]
    #[doc = " DT_ERR_MISMATCH on the others) before dt_moe_combine() ran on this plan."]
    pub fn dt_moe_combine_backward(
        plan: *mut dt_moe_plan,
        d_out: *const DLTensor,
        weights: *const DLTensor,
        d_expert_out: *mut DLTensor,
        d_weights: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The backward pass of dt_moe_dispatch(): `d_received` [R, H] float32 (the"]
    #[doc = " gradient with respect to what dispatch delivered) goes back to the tokens'"]
    #[doc = " ranks, and d_tokens[t] = the sum of the rows of its kept pairs (unweighted;"]
    #[doc = " 0 for a token with none); `d_tokens` [T, H] float32, overwritten."]
    #[doc = " Collective over the plan's ep."]
    pub fn dt_moe_dispatch_backward(
        plan: *mut dt_moe_plan,
        d_received: *const DLTensor,
        d_tokens: *mut DLTensor,
    ) -> dt_status;
}
pub const DT_MOE_GELU_TANH: dt_moe_activation = 0;
pub const DT_MOE_GELU_ERF: dt_moe_activation = 1;
pub const DT_MOE_SILU: dt_moe_activation = 2;
#[doc = " The activation between an expert MLP's two matrices (the formulas are"]
#[doc = " PyTorch's): DT_MOE_GELU_TANH 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)));"]
#[doc = " DT_MOE_GELU_ERF 0.5 x (1 + erf(x / sqrt(2))); DT_MOE_SILU x / (1 + exp(-x))."]
pub type dt_moe_activation = ::std::os::raw::c_uint;
extern "C" {
    #[doc = " A built-in expert: L two-layer MLPs on rows grouped by expert, as"]
    #[doc = " dt_moe_dispatch() delivers them (L = E/ep local experts, `counts` from"]
    #[doc = " dt_moe_plan_expert_counts()). Local. With block l the counts[l] rows of `x`"]
    #[doc = " starting at counts[0] + ... + counts[l-1]:"]
    #[doc = ""]
    #[doc = "   hidden_l = X_l W1[l]                  [counts[l], F]"]
    #[doc = "   Y_l      = act(hidden_l) W2[l]        [counts[l], H]"]
    #[doc = ""]
    #[doc = " `x` [R, H], `counts` [L] int64 (each >= 0, summing to R), `w1` [L, H, F],"]
    #[doc = " `w2` [L, F, H], all float32 but counts; writes `hidden` [R, F] (the"]
    #[doc = " pre-activation, which dt_moe_experts_backward() needs) and `y` [R, H]."]
    #[doc = " Products go through the device layer's GEMM (OpenBLAS on the host,"]
    #[doc = " cuBLAS on a device); `counts` is read on the host (it may be in host"]
    #[doc = " memory while the others are on a device)."]
    #[doc = " DT_ERR_INVALID_ARGUMENT: a NULL or malformed tensor, shapes that do not fit"]
    #[doc = " together, a negative count or counts not summing to R, an unknown"]
    #[doc = " activation; DT_ERR_UNSUPPORTED: a float tensor not float32."]
    pub fn dt_moe_experts_forward(
        x: *const DLTensor,
        counts: *const DLTensor,
        w1: *const DLTensor,
        w2: *const DLTensor,
        activation: dt_moe_activation,
        hidden: *mut DLTensor,
        y: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The backward pass of dt_moe_experts_forward(), from `dy` [R, H] and the"]
    #[doc = " forward's `x`, `counts`, `w1`, `w2`, `activation` and saved `hidden`:"]
    #[doc = " writes (overwriting) `dx` [R, H], `dw1` [L, H, F] and `dw2` [L, F, H]; an"]
    #[doc = " expert with no rows gets zero gradients. Local. Errors as for the forward."]
    pub fn dt_moe_experts_backward(
        x: *const DLTensor,
        counts: *const DLTensor,
        w1: *const DLTensor,
        w2: *const DLTensor,
        activation: dt_moe_activation,
        hidden: *const DLTensor,
        dy: *const DLTensor,
        dx: *mut DLTensor,
        dw1: *mut DLTensor,
        dw2: *mut DLTensor,
    ) -> dt_status;
}
pub const DT_CP_CONTIGUOUS: dt_cp_layout = 0;
pub const DT_CP_ZIGZAG: dt_cp_layout = 1;
#[doc = " How a sequence is split between the ranks of a context-parallel group (see above)."]
pub type dt_cp_layout = ::std::os::raw::c_uint;
extern "C" {
    #[doc = " The global positions of the S / cp tokens rank `cp_rank` of `cp_size` holds"]
    #[doc = " in `layout`, into `positions` (int64, [s_local], s_local = S / cp). Local."]
    #[doc = " DT_ERR_INVALID_ARGUMENT: an unknown layout; cp_size < 1; cp_rank outside"]
    #[doc = " 0..cp_size-1; `positions` NULL, not int64, not one-dimensional, or (zigzag)"]
    #[doc = " of odd length."]
    pub fn dt_cp_positions(
        layout: dt_cp_layout,
        cp_size: ::std::os::raw::c_int,
        cp_rank: ::std::os::raw::c_int,
        positions: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Copies the rows of `full` ([S, ...], any dtype) that rank `cp_rank` of"]
    #[doc = " `cp_size` holds in `layout` into `local` ([S / cp_size, ...], the same"]
    #[doc = " dtype and trailing dimensions), in local order. Local: the caller provides"]
    #[doc = " the whole sequence. DT_ERR_INVALID_ARGUMENT: an unknown layout; cp_size < 1;"]
    #[doc = " cp_rank out of range; a NULL or 0-dimensional tensor; S not divisible by"]
    #[doc = " cp_size (contiguous) or by 2 * cp_size (zigzag); `local` of another shape"]
    #[doc = " or dtype (the message gives both); `local` and `full` overlapping."]
    pub fn dt_cp_shard(
        layout: dt_cp_layout,
        cp_size: ::std::os::raw::c_int,
        cp_rank: ::std::os::raw::c_int,
        full: *const DLTensor,
        local: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " The reverse of dt_cp_shard(): writes the rows of `local` to their places"]
    #[doc = " in `full`, leaving the rows other ranks hold untouched (so that calling it"]
    #[doc = " with every rank's shard rebuilds the sequence). Same shapes and errors as"]
    #[doc = " dt_cp_shard()."]
    pub fn dt_cp_unshard(
        layout: dt_cp_layout,
        cp_size: ::std::os::raw::c_int,
        cp_rank: ::std::os::raw::c_int,
        local: *const DLTensor,
        full: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Blockwise attention (see above) of the queries `q` against one block of"]
    #[doc = " keys and values `k`, `v`, into `o` and `lse`. `q_positions` ([s_q]) and"]
    #[doc = " `k_positions` ([s_kv]) are the tokens' global positions (int64); they are"]
    #[doc = " required when `causal` is 1 and ignored (may be NULL) when it is 0. Local."]
    #[doc = " DT_ERR_INVALID_ARGUMENT: a NULL tensor; dtypes other than those above"]
    #[doc = " (one of float32, float16 and bfloat16 for q, k, v and o; float32 for"]
    #[doc = " lse; int64 for positions); shapes other than those above (h_q not a multiple of h_kv,"]
    #[doc = " head dimensions or lengths that differ, a zero dimension); causal not 0 or"]
    #[doc = " 1; a bad scale; overlapping outputs; tensors in two places (the"]
    #[doc = " positions are where q is). DT_ERR_UNSUPPORTED: CUDA memory without a"]
    #[doc = " usable device."]
    pub fn dt_cp_attention(
        q: *const DLTensor,
        k: *const DLTensor,
        v: *const DLTensor,
        q_positions: *const DLTensor,
        k_positions: *const DLTensor,
        causal: ::std::os::raw::c_int,
        scale: f64,
        o: *mut DLTensor,
        lse: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Merges a second partial attention result (`o_other`, `lse_other`) of the"]
    #[doc = " same queries against other keys into (`o`, `lse`), in place:"]
    #[doc = ""]
    #[doc = "   lse' = log(exp(lse) + exp(lse_other))"]
    #[doc = "   o'   = exp(lse - lse') * o + exp(lse_other - lse') * o_other"]
    #[doc = ""]
    #[doc = " so that merging the results of disjoint key blocks gives attention over"]
    #[doc = " their union. Where both lse are -infinity, o becomes 0 and lse stays"]
    #[doc = " -infinity. o, o_other: [s, h, d], one dtype of float32, float16 and"]
    #[doc = " bfloat16; lse, lse_other: float32 [s, h]."]
    #[doc = " Local. DT_ERR_INVALID_ARGUMENT for NULL tensors, other dtypes or shapes."]
    pub fn dt_cp_attention_merge(
        o: *mut DLTensor,
        lse: *mut DLTensor,
        o_other: *const DLTensor,
        lse_other: *const DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Ring attention, forward. Each rank holds its shard of the sequence in"]
    #[doc = " `layout` (q: [s_local, h_q, d]; k, v: [s_local, h_kv, d], the same s_local"]
    #[doc = " on every rank, even for zigzag) and gets `o` and `lse` for its own queries"]
    #[doc = " against the whole sequence, positions following from the layout: exactly"]
    #[doc = " dt_cp_attention() of its queries against the keys and values of every"]
    #[doc = " rank. The key/value blocks travel around the ring of ranks (rank r sends"]
    #[doc = " to r + 1 and receives from r - 1, cp - 1 times); the next block's transfer"]
    #[doc = " is under way while the current one is computed. Collective and blocking"]
    #[doc = " (see above). DT_ERR_INVALID_ARGUMENT, besides those of dt_cp_attention():"]
    #[doc = " `comm` NULL, an unknown layout, an odd s_local with DT_CP_ZIGZAG (a"]
    #[doc = " sequence not divisible by 2 * cp), k and v of another length than q."]
    pub fn dt_cp_ring_attention_forward(
        comm: *mut dt_comm,
        layout: dt_cp_layout,
        causal: ::std::os::raw::c_int,
        scale: f64,
        q: *const DLTensor,
        k: *const DLTensor,
        v: *const DLTensor,
        o: *mut DLTensor,
        lse: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Ring attention, backward: from the gradient `d_o` of the output"]
    #[doc = " ([s_local, h_q, d]) and what the forward call took and returned (q, k, v,"]
    #[doc = " o, lse, unchanged), the gradients of this rank's queries, keys and values"]
    #[doc = " (`dq` like q, `dk` and `dv` like k), overwritten. Attention probabilities"]
    #[doc = " are recomputed block by block from lse; dq accumulates on this rank. The"]
    #[doc = " dk/dv accumulator of each other rank's block travels around the ring with"]
    #[doc = " its keys and values, gathering the contribution of each rank it visits,"]
    #[doc = " and reaches its owner last; a rank's own contribution to its own block"]
    #[doc = " stays home, half of it computed before the first block arrives and half"]
    #[doc = " while the accumulator comes home. Collective and blocking; the errors of"]
    #[doc = " dt_cp_ring_attention_forward()."]
    pub fn dt_cp_ring_attention_backward(
        comm: *mut dt_comm,
        layout: dt_cp_layout,
        causal: ::std::os::raw::c_int,
        scale: f64,
        q: *const DLTensor,
        k: *const DLTensor,
        v: *const DLTensor,
        o: *const DLTensor,
        lse: *const DLTensor,
        d_o: *const DLTensor,
        dq: *mut DLTensor,
        dk: *mut DLTensor,
        dv: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " All-to-all (Ulysses) attention, forward: the same arguments, results and"]
    #[doc = " errors as dt_cp_ring_attention_forward(), computed another way. An"]
    #[doc = " all-to-all over `comm` gives each rank every token of h_q / cp query heads"]
    #[doc = " and h_kv / cp key/value heads (rank j gets heads [j h / cp, (j + 1) h / cp)),"]
    #[doc = " each rank attends over the whole sequence for those heads, and a second"]
    #[doc = " all-to-all returns o and lse to the ranks holding the tokens. Fewer, larger"]
    #[doc = " messages than the ring, but every rank holds the whole sequence for its"]
    #[doc = " heads. DT_ERR_INVALID_ARGUMENT besides: h_q or h_kv not divisible by the"]
    #[doc = " size of `comm`."]
    pub fn dt_cp_ulysses_attention_forward(
        comm: *mut dt_comm,
        layout: dt_cp_layout,
        causal: ::std::os::raw::c_int,
        scale: f64,
        q: *const DLTensor,
        k: *const DLTensor,
        v: *const DLTensor,
        o: *mut DLTensor,
        lse: *mut DLTensor,
    ) -> dt_status;
}
extern "C" {
    #[doc = " All-to-all (Ulysses) attention, backward: the same arguments, results and"]
    #[doc = " errors as dt_cp_ring_attention_backward() (and those of"]
    #[doc = " dt_cp_ulysses_attention_forward()), through the same two all-to-alls."]
    pub fn dt_cp_ulysses_attention_backward(
        comm: *mut dt_comm,
        layout: dt_cp_layout,
        causal: ::std::os::raw::c_int,
        scale: f64,
        q: *const DLTensor,
        k: *const DLTensor,
        v: *const DLTensor,
        o: *const DLTensor,
        lse: *const DLTensor,
        d_o: *const DLTensor,
        dq: *mut DLTensor,
        dk: *mut DLTensor,
        dv: *mut DLTensor,
    ) -> dt_status;
}
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_plan {
    _unused: [u8; 0],
}
pub const DT_PLAN_RECOMPUTE_NONE: dt_plan_recompute = 0;
pub const DT_PLAN_RECOMPUTE_SELECTIVE: dt_plan_recompute = 1;
pub const DT_PLAN_RECOMPUTE_FULL: dt_plan_recompute = 2;
#[doc = " Activation recomputation (Korthikanti et al. 2022)."]
pub type dt_plan_recompute = ::std::os::raw::c_uint;
pub const DT_PLAN_DIM_TP: dt_plan_dimension = 1;
pub const DT_PLAN_DIM_PP: dt_plan_dimension = 2;
pub const DT_PLAN_DIM_CP: dt_plan_dimension = 4;
pub const DT_PLAN_DIM_EP: dt_plan_dimension = 8;
#[doc = " Bits of dt_plan_options.dimensions: the mesh dimensions searched (dp takes what is left)."]
pub type dt_plan_dimension = ::std::os::raw::c_uint;
pub const DT_PLAN_ACCEPTED: dt_plan_reason = 0;
pub const DT_PLAN_REJECT_GPUS: dt_plan_reason = 1;
pub const DT_PLAN_REJECT_HEADS_TP: dt_plan_reason = 2;
pub const DT_PLAN_REJECT_FFN_TP: dt_plan_reason = 3;
pub const DT_PLAN_REJECT_LAYERS_PP: dt_plan_reason = 4;
pub const DT_PLAN_REJECT_SEQ_CP: dt_plan_reason = 5;
pub const DT_PLAN_REJECT_EXPERTS_EP: dt_plan_reason = 6;
pub const DT_PLAN_REJECT_BATCH: dt_plan_reason = 7;
pub const DT_PLAN_REJECT_SCHEDULE: dt_plan_reason = 8;
pub const DT_PLAN_REJECT_MEMORY: dt_plan_reason = 9;
#[doc = " Why a configuration was rejected."]
pub type dt_plan_reason = ::std::os::raw::c_uint;
pub const DT_PLAN_TABLE: dt_plan_format = 0;
pub const DT_PLAN_JSON: dt_plan_format = 1;
pub const DT_PLAN_SVG: dt_plan_format = 2;
#[doc = " Output formats of dt_plan_write()."]
pub type dt_plan_format = ::std::os::raw::c_uint;
#[doc = " A decoder-only transformer. Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_plan_model {
    #[doc = "< DT_PLAN_MODEL_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< transformer blocks"]
    pub layers: ::std::os::raw::c_int,
    #[doc = "< model width"]
    pub hidden: ::std::os::raw::c_int,
    #[doc = "< attention (query) heads"]
    pub heads: ::std::os::raw::c_int,
    #[doc = "< DT_UNDEF: heads (multi-head attention)"]
    pub kv_heads: ::std::os::raw::c_int,
    #[doc = "< DT_UNDEF: 4 * hidden"]
    pub ffn_hidden: ::std::os::raw::c_int,
    #[doc = "< vocabulary size"]
    pub vocab: ::std::os::raw::c_int,
    #[doc = "< tokens per sequence"]
    pub seq_len: ::std::os::raw::c_int,
    #[doc = "< DT_UNDEF or 1: dense; > 1: every MLP is a mixture of this many experts"]
    pub experts: ::std::os::raw::c_int,
    #[doc = "< experts per token; DT_UNDEF: 1"]
    pub top_k: ::std::os::raw::c_int,
}
#[test]
fn bindgen_test_layout_dt_plan_model() {
    assert_eq!(
        ::std::mem::size_of::<dt_plan_model>(),
        40usize,
        concat!("Size of: ", stringify!(dt_plan_model))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_plan_model>(),
        4usize,
        concat!("Alignment of ", stringify!(dt_plan_model))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_model>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_model),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_layers() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_model>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).layers) as usize - ptr as usize
            },
            4usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_model),
                "::",
                stringify!(layers)
            )
        );
    }
    test_field_layers();
    fn test_field_hidden() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_model>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).hidden) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_model),
                "::",
                stringify!(hidden)
            )
        );
    }
    test_field_hidden();
    fn test_field_heads() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_model>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).heads) as usize - ptr as usize
            },
            12usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_model),
                "::",
                stringify!(heads)
            )
        );
    }
    test_field_heads();
    fn test_field_kv_heads() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_model>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).kv_heads) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_model),
                "::",
                stringify!(kv_heads)
            )
        );
    }
    test_field_kv_heads();
    fn test_field_ffn_hidden() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_model>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).ffn_hidden) as usize - ptr as usize
            },
            20usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_model),
                "::",
                stringify!(ffn_hidden)
            )
        );
    }
    test_field_ffn_hidden();
    fn test_field_vocab() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_model>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).vocab) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_model),
                "::",
                stringify!(vocab)
            )
        );
    }
    test_field_vocab();
    fn test_field_seq_len() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_model>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).seq_len) as usize - ptr as usize
            },
            28usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_model),
                "::",
                stringify!(seq_len)
            )
        );
    }
    test_field_seq_len();
    fn test_field_experts() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_model>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).experts) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_model),
                "::",
                stringify!(experts)
            )
        );
    }
    test_field_experts();
    fn test_field_top_k() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_model>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).top_k) as usize - ptr as usize
            },
            36usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_model),
                "::",
                stringify!(top_k)
            )
        );
    }
    test_field_top_k();
}
#[doc = " A cluster of identical nodes. Bandwidths per GPU, each direction. Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_plan_cluster {
    #[doc = "< DT_PLAN_CLUSTER_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< nodes in the cluster"]
    pub nodes: ::std::os::raw::c_int,
    #[doc = "< GPUs in each node"]
    pub gpus_per_node: ::std::os::raw::c_int,
    #[doc = "< bytes"]
    pub gpu_memory: f64,
    #[doc = "< dense 16-bit FLOP/s of one GPU"]
    pub peak_flops: f64,
    #[doc = "< bytes/s of one GPU's memory"]
    pub memory_bandwidth: f64,
    #[doc = "< share of peak_flops that large GEMMs reach, (0, 1]"]
    pub gemm_efficiency: f64,
    #[doc = "< bytes/s between GPUs of a node"]
    pub intra_bandwidth: f64,
    #[doc = "< seconds per message inside a node"]
    pub intra_latency: f64,
    #[doc = "< bytes/s per GPU between nodes"]
    pub inter_bandwidth: f64,
    #[doc = "< seconds per message between nodes"]
    pub inter_latency: f64,
    #[doc = " Share of a data-parallel or context-parallel transfer's time that the"]
    #[doc = " compute issued beside it can hide, [0, 1]. 1 (every preset, and a"]
    #[doc = " version 1 struct): copy engines or spare SMs move the data while the"]
    #[doc = " GPU computes. 0: nothing hides, as on CPU ranks without a spare core,"]
    #[doc = " whose progress thread and copies take the core the compute needs."]
    pub overlap: f64,
}
#[test]
fn bindgen_test_layout_dt_plan_cluster() {
    assert_eq!(
        ::std::mem::size_of::<dt_plan_cluster>(),
        88usize,
        concat!("Size of: ", stringify!(dt_plan_cluster))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_plan_cluster>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_plan_cluster))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_cluster>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_cluster),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_nodes() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_cluster>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).nodes) as usize - ptr as usize
            },
            4usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_cluster),
                "::",
                stringify!(nodes)
            )
        );
    }
    test_field_nodes();
    fn test_field_gpus_per_node() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_cluster>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).gpus_per_node) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_cluster),
                "::",
                stringify!(gpus_per_node)
            )
        );
    }
    test_field_gpus_per_node();
    fn test_field_gpu_memory() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_cluster>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).gpu_memory) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_cluster),
                "::",
                stringify!(gpu_memory)
            )
        );
    }
    test_field_gpu_memory();
    fn test_field_peak_flops() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_cluster>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).peak_flops) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_cluster),
                "::",
                stringify!(peak_flops)
            )
        );
    }
    test_field_peak_flops();
    fn test_field_memory_bandwidth() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_cluster>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).memory_bandwidth) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_cluster),
                "::",
                stringify!(memory_bandwidth)
            )
        );
    }
    test_field_memory_bandwidth();
    fn test_field_gemm_efficiency() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_cluster>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).gemm_efficiency) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_cluster),
                "::",
                stringify!(gemm_efficiency)
            )
        );
    }
    test_field_gemm_efficiency();
    fn test_field_intra_bandwidth() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_cluster>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).intra_bandwidth) as usize - ptr as usize
            },
            48usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_cluster),
                "::",
                stringify!(intra_bandwidth)
            )
        );
    }
    test_field_intra_bandwidth();
    fn test_field_intra_latency() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_cluster>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).intra_latency) as usize - ptr as usize
            },
            56usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_cluster),
                "::",
                stringify!(intra_latency)
            )
        );
    }
    test_field_intra_latency();
    fn test_field_inter_bandwidth() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_cluster>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).inter_bandwidth) as usize - ptr as usize
            },
            64usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_cluster),
                "::",
                stringify!(inter_bandwidth)
            )
        );
    }
    test_field_inter_bandwidth();
    fn test_field_inter_latency() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_cluster>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).inter_latency) as usize - ptr as usize
            },
            72usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_cluster),
                "::",
                stringify!(inter_latency)
            )
        );
    }
    test_field_inter_latency();
    fn test_field_overlap() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_cluster>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).overlap) as usize - ptr as usize
            },
            80usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_cluster),
                "::",
                stringify!(overlap)
            )
        );
    }
    test_field_overlap();
}
#[doc = " What to search. Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_plan_options {
    #[doc = "< DT_PLAN_OPTIONS_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< sequences per step, >= 1 (no default)"]
    pub global_batch: i64,
    #[doc = "< dt_plan_dimension bits searched (default all)"]
    pub dimensions: ::std::os::raw::c_uint,
    #[doc = "< bit s: ZeRO stage s (default 0xF: 0-3)"]
    pub zero_stages: ::std::os::raw::c_uint,
    #[doc = "< bit k: dt_pipeline_schedule_kind k (default 0x7: GPIPE, 1F1B, INTERLEAVED_1F1B; add bit 3 for ZB_H1, which needs a trainer whose backward splits into input and weight gradients)"]
    pub schedules: ::std::os::raw::c_uint,
    #[doc = "< bit k: dt_plan_recompute k (default 0x7)"]
    pub recompute: ::std::os::raw::c_uint,
    #[doc = "< DT_UNDEF: 8"]
    pub max_micro_batch: ::std::os::raw::c_int,
    #[doc = "< interleaved: 2..this chunks per rank; DT_UNDEF: 4"]
    pub max_virtual_stages: ::std::os::raw::c_int,
    #[doc = "< with tp > 1; DT_UNDEF: 1"]
    pub sequence_parallel: ::std::os::raw::c_int,
    #[doc = "< share of GPU memory a configuration may use, (0, 1]; 0: 0.9"]
    pub memory_fraction: f64,
    #[doc = "< feasible configurations kept, fastest first; 0: 100"]
    pub keep: usize,
}
#[test]
fn bindgen_test_layout_dt_plan_options() {
    assert_eq!(
        ::std::mem::size_of::<dt_plan_options>(),
        64usize,
        concat!("Size of: ", stringify!(dt_plan_options))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_plan_options>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_plan_options))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_options),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_global_batch() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).global_batch) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_options),
                "::",
                stringify!(global_batch)
            )
        );
    }
    test_field_global_batch();
    fn test_field_dimensions() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).dimensions) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_options),
                "::",
                stringify!(dimensions)
            )
        );
    }
    test_field_dimensions();
    fn test_field_zero_stages() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).zero_stages) as usize - ptr as usize
            },
            20usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_options),
                "::",
                stringify!(zero_stages)
            )
        );
    }
    test_field_zero_stages();
    fn test_field_schedules() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).schedules) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_options),
                "::",
                stringify!(schedules)
            )
        );
    }
    test_field_schedules();
    fn test_field_recompute() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).recompute) as usize - ptr as usize
            },
            28usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_options),
                "::",
                stringify!(recompute)
            )
        );
    }
    test_field_recompute();
    fn test_field_max_micro_batch() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).max_micro_batch) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_options),
                "::",
                stringify!(max_micro_batch)
            )
        );
    }
    test_field_max_micro_batch();
    fn test_field_max_virtual_stages() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).max_virtual_stages) as usize - ptr as usize
            },
            36usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_options),
                "::",
                stringify!(max_virtual_stages)
            )
        );
    }
    test_field_max_virtual_stages();
    fn test_field_sequence_parallel() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).sequence_parallel) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_options),
                "::",
                stringify!(sequence_parallel)
            )
        );
    }
    test_field_sequence_parallel();
    fn test_field_memory_fraction() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).memory_fraction) as usize - ptr as usize
            },
            48usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_options),
                "::",
                stringify!(memory_fraction)
            )
        );
    }
    test_field_memory_fraction();
    fn test_field_keep() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_options>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).keep) as usize - ptr as usize
            },
            56usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_options),
                "::",
                stringify!(keep)
            )
        );
    }
    test_field_keep();
}
#[doc = " One way of running a step. Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_plan_config {
    #[doc = "< DT_PLAN_CONFIG_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< data-parallel size"]
    pub dp: ::std::os::raw::c_int,
    #[doc = "< tensor-parallel size"]
    pub tp: ::std::os::raw::c_int,
    #[doc = "< pipeline-parallel size"]
    pub pp: ::std::os::raw::c_int,
    #[doc = "< context-parallel size"]
    pub cp: ::std::os::raw::c_int,
    #[doc = "< expert-parallel size"]
    pub ep: ::std::os::raw::c_int,
    #[doc = "< 0-3"]
    pub zero_stage: ::std::os::raw::c_int,
    #[doc = "< GPIPE, 1F1B, INTERLEAVED_1F1B or ZB_H1"]
    pub schedule: dt_pipeline_schedule_kind,
    #[doc = "< chunks per pipeline rank: 1, or >= 2 with INTERLEAVED_1F1B"]
    pub virtual_stages: ::std::os::raw::c_int,
    #[doc = "< sequences per micro-batch"]
    pub micro_batch: ::std::os::raw::c_int,
    #[doc = "< activation recomputation"]
    pub recompute: dt_plan_recompute,
}
#[test]
fn bindgen_test_layout_dt_plan_config() {
    assert_eq!(
        ::std::mem::size_of::<dt_plan_config>(),
        44usize,
        concat!("Size of: ", stringify!(dt_plan_config))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_plan_config>(),
        4usize,
        concat!("Alignment of ", stringify!(dt_plan_config))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_config),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_dp() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).dp) as usize - ptr as usize
            },
            4usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_config),
                "::",
                stringify!(dp)
            )
        );
    }
    test_field_dp();
    fn test_field_tp() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).tp) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_config),
                "::",
                stringify!(tp)
            )
        );
    }
    test_field_tp();
    fn test_field_pp() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).pp) as usize - ptr as usize
            },
            12usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_config),
                "::",
                stringify!(pp)
            )
        );
    }
    test_field_pp();
    fn test_field_cp() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).cp) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_config),
                "::",
                stringify!(cp)
            )
        );
    }
    test_field_cp();
    fn test_field_ep() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).ep) as usize - ptr as usize
            },
            20usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_config),
                "::",
                stringify!(ep)
            )
        );
    }
    test_field_ep();
    fn test_field_zero_stage() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).zero_stage) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_config),
                "::",
                stringify!(zero_stage)
            )
        );
    }
    test_field_zero_stage();
    fn test_field_schedule() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).schedule) as usize - ptr as usize
            },
            28usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_config),
                "::",
                stringify!(schedule)
            )
        );
    }
    test_field_schedule();
    fn test_field_virtual_stages() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).virtual_stages) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_config),
                "::",
                stringify!(virtual_stages)
            )
        );
    }
    test_field_virtual_stages();
    fn test_field_micro_batch() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).micro_batch) as usize - ptr as usize
            },
            36usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_config),
                "::",
                stringify!(micro_batch)
            )
        );
    }
    test_field_micro_batch();
    fn test_field_recompute() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_config>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).recompute) as usize - ptr as usize
            },
            40usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_config),
                "::",
                stringify!(recompute)
            )
        );
    }
    test_field_recompute();
}
#[doc = " The estimate of one configuration: memory per GPU in bytes on the"]
#[doc = " pipeline stage that needs most, and the step's seconds on the critical"]
#[doc = " path. The caller sets `version` (DT_PLAN_ESTIMATE_INIT); the library"]
#[doc = " writes the rest. Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_plan_estimate {
    #[doc = "< DT_PLAN_ESTIMATE_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< DT_PLAN_ACCEPTED, or why rejected"]
    pub reason: dt_plan_reason,
    #[doc = "< the configuration estimated"]
    pub config: dt_plan_config,
    #[doc = "< per step and pipeline"]
    pub micro_batches: i64,
    #[doc = "< parameters held by one GPU"]
    pub mem_parameters: i64,
    #[doc = "< gradients held by one GPU"]
    pub mem_gradients: i64,
    #[doc = "< optimizer moments held by one GPU"]
    pub mem_optimizer_state: i64,
    #[doc = "< f32 master weights of 16-bit parameters"]
    pub mem_master_weights: i64,
    #[doc = "< with the configuration's recomputation"]
    pub mem_activations: i64,
    #[doc = "< the same without recomputation"]
    pub mem_activations_without_recompute: i64,
    #[doc = "< buffers of pp, tp, ep and ZeRO stages 2-3"]
    pub mem_communication: i64,
    #[doc = "< the sum of the above"]
    pub mem_total: i64,
    #[doc = "< forward and backward on the slowest stage"]
    pub time_compute: f64,
    #[doc = "< forward passes run again"]
    pub time_recompute: f64,
    #[doc = "< pipeline fill and drain"]
    pub time_bubble: f64,
    #[doc = "< exposed communication of each dimension"]
    pub time_tp: f64,
    #[doc = "< exposed context-parallel communication"]
    pub time_cp: f64,
    #[doc = "< exposed expert-parallel all-to-all"]
    pub time_ep: f64,
    #[doc = "< exposed pipeline send/receive"]
    pub time_pp: f64,
    #[doc = "< exposed data-parallel gradient reduction"]
    pub time_dp: f64,
    #[doc = "< the optimizer step"]
    pub time_optimizer: f64,
    #[doc = "< the sum"]
    pub time_step: f64,
    #[doc = "< per step, all GPUs, without recomputation"]
    pub model_flops: f64,
    #[doc = "< with recomputation"]
    pub hardware_flops: f64,
    #[doc = "< model_flops / (time_step * GPUs * peak_flops)"]
    pub mfu: f64,
    #[doc = "< hardware_flops / (time_step * GPUs) / 1e12"]
    pub tflops_per_gpu: f64,
}
#[test]
fn bindgen_test_layout_dt_plan_estimate() {
    assert_eq!(
        ::std::mem::size_of::<dt_plan_estimate>(),
        240usize,
        concat!("Size of: ", stringify!(dt_plan_estimate))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_plan_estimate>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_plan_estimate))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_reason() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).reason) as usize - ptr as usize
            },
            4usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(reason)
            )
        );
    }
    test_field_reason();
    fn test_field_config() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).config) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(config)
            )
        );
    }
    test_field_config();
    fn test_field_micro_batches() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).micro_batches) as usize - ptr as usize
            },
            56usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(micro_batches)
            )
        );
    }
    test_field_micro_batches();
    fn test_field_mem_parameters() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).mem_parameters) as usize - ptr as usize
            },
            64usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(mem_parameters)
            )
        );
    }
    test_field_mem_parameters();
    fn test_field_mem_gradients() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).mem_gradients) as usize - ptr as usize
            },
            72usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(mem_gradients)
            )
        );
    }
    test_field_mem_gradients();
    fn test_field_mem_optimizer_state() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).mem_optimizer_state) as usize - ptr as usize
            },
            80usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(mem_optimizer_state)
            )
        );
    }
    test_field_mem_optimizer_state();
    fn test_field_mem_master_weights() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).mem_master_weights) as usize - ptr as usize
            },
            88usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(mem_master_weights)
            )
        );
    }
    test_field_mem_master_weights();
    fn test_field_mem_activations() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).mem_activations) as usize - ptr as usize
            },
            96usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(mem_activations)
            )
        );
    }
    test_field_mem_activations();
    fn test_field_mem_activations_without_recompute() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).mem_activations_without_recompute) as usize
                    - ptr as usize
            },
            104usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(mem_activations_without_recompute)
            )
        );
    }
    test_field_mem_activations_without_recompute();
    fn test_field_mem_communication() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).mem_communication) as usize - ptr as usize
            },
            112usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(mem_communication)
            )
        );
    }
    test_field_mem_communication();
    fn test_field_mem_total() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).mem_total) as usize - ptr as usize
            },
            120usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(mem_total)
            )
        );
    }
    test_field_mem_total();
    fn test_field_time_compute() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).time_compute) as usize - ptr as usize
            },
            128usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(time_compute)
            )
        );
    }
    test_field_time_compute();
    fn test_field_time_recompute() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).time_recompute) as usize - ptr as usize
            },
            136usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(time_recompute)
            )
        );
    }
    test_field_time_recompute();
    fn test_field_time_bubble() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).time_bubble) as usize - ptr as usize
            },
            144usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(time_bubble)
            )
        );
    }
    test_field_time_bubble();
    fn test_field_time_tp() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).time_tp) as usize - ptr as usize
            },
            152usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(time_tp)
            )
        );
    }
    test_field_time_tp();
    fn test_field_time_cp() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).time_cp) as usize - ptr as usize
            },
            160usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(time_cp)
            )
        );
    }
    test_field_time_cp();
    fn test_field_time_ep() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).time_ep) as usize - ptr as usize
            },
            168usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(time_ep)
            )
        );
    }
    test_field_time_ep();
    fn test_field_time_pp() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).time_pp) as usize - ptr as usize
            },
            176usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(time_pp)
            )
        );
    }
    test_field_time_pp();
    fn test_field_time_dp() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).time_dp) as usize - ptr as usize
            },
            184usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(time_dp)
            )
        );
    }
    test_field_time_dp();
    fn test_field_time_optimizer() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).time_optimizer) as usize - ptr as usize
            },
            192usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(time_optimizer)
            )
        );
    }
    test_field_time_optimizer();
    fn test_field_time_step() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).time_step) as usize - ptr as usize
            },
            200usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(time_step)
            )
        );
    }
    test_field_time_step();
    fn test_field_model_flops() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).model_flops) as usize - ptr as usize
            },
            208usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(model_flops)
            )
        );
    }
    test_field_model_flops();
    fn test_field_hardware_flops() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).hardware_flops) as usize - ptr as usize
            },
            216usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(hardware_flops)
            )
        );
    }
    test_field_hardware_flops();
    fn test_field_mfu() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).mfu) as usize - ptr as usize
            },
            224usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(mfu)
            )
        );
    }
    test_field_mfu();
    fn test_field_tflops_per_gpu() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_estimate>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).tflops_per_gpu) as usize - ptr as usize
            },
            232usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_estimate),
                "::",
                stringify!(tflops_per_gpu)
            )
        );
    }
    test_field_tflops_per_gpu();
}
#[doc = " A search's totals. The caller sets `version`. Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_plan_summary {
    #[doc = "< DT_PLAN_SUMMARY_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< configurations looked at (a mesh shape rejected as such counts once)"]
    pub evaluated: i64,
    #[doc = "< of which fit and were estimated"]
    pub feasible: i64,
    #[doc = "< estimates available through dt_plan_ranked()"]
    pub kept: usize,
    #[doc = "< wall time of the search"]
    pub seconds: f64,
}
#[test]
fn bindgen_test_layout_dt_plan_summary() {
    assert_eq!(
        ::std::mem::size_of::<dt_plan_summary>(),
        40usize,
        concat!("Size of: ", stringify!(dt_plan_summary))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_plan_summary>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_plan_summary))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_summary>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_summary),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_evaluated() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_summary>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).evaluated) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_summary),
                "::",
                stringify!(evaluated)
            )
        );
    }
    test_field_evaluated();
    fn test_field_feasible() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_summary>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).feasible) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_summary),
                "::",
                stringify!(feasible)
            )
        );
    }
    test_field_feasible();
    fn test_field_kept() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_summary>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).kept) as usize - ptr as usize
            },
            24usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_summary),
                "::",
                stringify!(kept)
            )
        );
    }
    test_field_kept();
    fn test_field_seconds() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_summary>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).seconds) as usize - ptr as usize
            },
            32usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_summary),
                "::",
                stringify!(seconds)
            )
        );
    }
    test_field_seconds();
}
#[doc = " The configurations rejected for one reason. The caller sets `version`. Grows only at its end."]
#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct dt_plan_rejection {
    #[doc = "< DT_PLAN_REJECTION_VERSION"]
    pub version: ::std::os::raw::c_uint,
    #[doc = "< how many; 0: none (then example and message say nothing)"]
    pub count: i64,
    #[doc = "< the first one"]
    pub example: dt_plan_config,
    #[doc = "< why it was rejected; borrowed from the plan, never NULL"]
    pub message: *const ::std::os::raw::c_char,
}
#[test]
fn bindgen_test_layout_dt_plan_rejection() {
    assert_eq!(
        ::std::mem::size_of::<dt_plan_rejection>(),
        72usize,
        concat!("Size of: ", stringify!(dt_plan_rejection))
    );
    assert_eq!(
        ::std::mem::align_of::<dt_plan_rejection>(),
        8usize,
        concat!("Alignment of ", stringify!(dt_plan_rejection))
    );
    fn test_field_version() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_rejection>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).version) as usize - ptr as usize
            },
            0usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_rejection),
                "::",
                stringify!(version)
            )
        );
    }
    test_field_version();
    fn test_field_count() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_rejection>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).count) as usize - ptr as usize
            },
            8usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_rejection),
                "::",
                stringify!(count)
            )
        );
    }
    test_field_count();
    fn test_field_example() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_rejection>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).example) as usize - ptr as usize
            },
            16usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_rejection),
                "::",
                stringify!(example)
            )
        );
    }
    test_field_example();
    fn test_field_message() {
        assert_eq!(
            unsafe {
                let uninit = ::std::mem::MaybeUninit::<dt_plan_rejection>::uninit();
                let ptr = uninit.as_ptr();
                ::std::ptr::addr_of!((*ptr).message) as usize - ptr as usize
            },
            64usize,
            concat!(
                "Offset of field: ",
                stringify!(dt_plan_rejection),
                "::",
                stringify!(message)
            )
        );
    }
    test_field_message();
}
extern "C" {
    #[doc = " Fill `model`, `opts` or `config` with the defaults of `version`; DT_ERR_INVALID_ARGUMENT for NULL or an unknown version."]
    pub fn dt_plan_model_init(
        model: *mut dt_plan_model,
        version: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    pub fn dt_plan_options_init(
        opts: *mut dt_plan_options,
        version: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    pub fn dt_plan_config_init(
        config: *mut dt_plan_config,
        version: ::std::os::raw::c_uint,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Fills `out` (its version set by the caller) with `nodes` nodes of preset"]
    #[doc = " `name`: \"a100\" (8 x A100 80 GB SXM, NVLink 3, HDR 200 Gb/s per GPU),"]
    #[doc = " \"h100\" (8 x H100 SXM, NVLink 4, NDR 400 Gb/s per GPU) or \"h200\" (the same"]
    #[doc = " with H200's 141 GB). DT_ERR_INVALID_ARGUMENT for another name (the message"]
    #[doc = " lists the presets), nodes < 1, NULLs or an unknown version."]
    pub fn dt_plan_cluster_preset(
        out: *mut dt_plan_cluster,
        name: *const ::std::os::raw::c_char,
        nodes: ::std::os::raw::c_int,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Reads the cluster file at `path` into `out` (its version set by the"]
    #[doc = " caller). The format: lines \"key = value\", '#' starts a comment; keys are"]
    #[doc = " the fields of dt_plan_cluster, and \"preset = NAME\" sets every field from a"]
    #[doc = " preset first (later lines override it); nodes defaults to 1. Example:"]
    #[doc = ""]
    #[doc = "   preset = h100"]
    #[doc = "   nodes = 16"]
    #[doc = "   inter_bandwidth = 25e9   # RoCE at 200 Gb/s per GPU"]
    #[doc = ""]
    #[doc = " DT_ERR_IO when the file cannot be read; DT_ERR_INVALID_ARGUMENT naming"]
    #[doc = " the line of a bad key or value, or a field missing or out of range."]
    pub fn dt_plan_cluster_load(
        out: *mut dt_plan_cluster,
        path: *const ::std::os::raw::c_char,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Searches every configuration of the cluster's GPUs that `opts` allows and"]
    #[doc = " keeps the `keep` fastest. `opts` must give global_batch."]
    #[doc = " DT_ERR_INVALID_ARGUMENT (nothing created) for NULL arguments, unknown"]
    #[doc = " versions, a model that is no transformer (hidden not divisible by heads,"]
    #[doc = " heads not divisible by kv_heads, top_k > experts, a size < 1), a cluster"]
    #[doc = " field out of range, or options out of range. A search in which nothing"]
    #[doc = " is feasible still succeeds: dt_plan_rejected() says why."]
    pub fn dt_plan_create(
        out: *mut *mut dt_plan,
        model: *const dt_plan_model,
        cluster: *const dt_plan_cluster,
        opts: *const dt_plan_options,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Destroys `plan` (NULL: no-op)."]
    pub fn dt_plan_destroy(plan: *mut dt_plan) -> dt_status;
}
extern "C" {
    #[doc = " Fills `out` (its version set) with the search's totals."]
    pub fn dt_plan_info(plan: *const dt_plan, out: *mut dt_plan_summary) -> dt_status;
}
extern "C" {
    #[doc = " Fills `out` (its version set) with the estimate ranked `index` (0: the"]
    #[doc = " fastest). DT_ERR_INVALID_ARGUMENT for index >= dt_plan_summary.kept."]
    pub fn dt_plan_ranked(
        plan: *const dt_plan,
        index: usize,
        out: *mut dt_plan_estimate,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Fills `out` (its version set) with the configurations rejected for"]
    #[doc = " `reason` (count 0 when none were). DT_ERR_INVALID_ARGUMENT for"]
    #[doc = " DT_PLAN_ACCEPTED or a value outside dt_plan_reason."]
    pub fn dt_plan_rejected(
        plan: *const dt_plan,
        reason: dt_plan_reason,
        out: *mut dt_plan_rejection,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Evaluates one configuration `config` of the model on the cluster with"]
    #[doc = " the options' batch and limits. DT_OK: feasible, `out` filled. Rejected:"]
    #[doc = " DT_ERR_INVALID_ARGUMENT with dt_error_last() giving the reason and"]
    #[doc = " out->reason its code; the rest of `out` is filled only for"]
    #[doc = " DT_PLAN_REJECT_MEMORY (the estimate that did not fit) and zeroed"]
    #[doc = " otherwise. DT_ERR_INVALID_ARGUMENT with out->reason DT_PLAN_ACCEPTED for"]
    #[doc = " bad arguments (NULLs, versions, model, cluster or options as in"]
    #[doc = " dt_plan_create(), a schedule or recompute value outside its enum)."]
    pub fn dt_plan_evaluate(
        model: *const dt_plan_model,
        cluster: *const dt_plan_cluster,
        opts: *const dt_plan_options,
        config: *const dt_plan_config,
        out: *mut dt_plan_estimate,
    ) -> dt_status;
}
extern "C" {
    #[doc = " Writes the plan to `path` (\"-\": standard output, flushed) in `format`:"]
    #[doc = " its `top` fastest configurations (0: all kept) and the rejections. DT_ERR_IO when the file cannot be"]
    #[doc = " written; DT_ERR_INVALID_ARGUMENT for NULLs or an unknown format."]
    pub fn dt_plan_write(
        plan: *const dt_plan,
        path: *const ::std::os::raw::c_char,
        format: dt_plan_format,
        top: usize,
    ) -> dt_status;
}
extern "C" {
    #[doc = " What dt_zero_create() with `stage` on `ranks` ranks will hold on rank"]
    #[doc = " `rank` for parameters of `dtype` grouped into `units` units of"]
    #[doc = " `unit_elements[u]` elements (as dt_zero_options.unit_sizes groups them)"]
    #[doc = " with optimizer `optim` (NULL: AdamW): `out` (its version set) gets the"]
    #[doc = " bytes by purpose and the padding that dt_zero_memory_usage() reports right"]
    #[doc = " after creation, and as `peak` the most held during creation."]
    #[doc = " DT_ERR_INVALID_ARGUMENT for NULLs, units == 0, a negative element count,"]
    #[doc = " a stage outside 0-3, ranks < 1, rank outside 0..ranks-1, a dtype other"]
    #[doc = " than f32, f16 or bf16, or a bad optimizer."]
    pub fn dt_plan_zero_memory(
        unit_elements: *const i64,
        units: usize,
        stage: ::std::os::raw::c_int,
        ranks: ::std::os::raw::c_int,
        rank: ::std::os::raw::c_int,
        dtype: DLDataType,
        optim: *const dt_optimizer_options,
        out: *mut dt_zero_memory,
    ) -> dt_status;
}
