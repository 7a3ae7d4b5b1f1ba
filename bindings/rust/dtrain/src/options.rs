//! How a communicator is created.

use std::fmt;

use dtrain_sys as sys;

/// The transport a communicator uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Backend {
    /// Chosen by the library: NCCL for CUDA devices, UCX otherwise.
    #[default]
    Auto,
    Ucx,
    Nccl,
}

impl Backend {
    pub(crate) fn to_raw(self) -> sys::dt_backend {
        match self {
            Backend::Auto => sys::DT_BACKEND_AUTO,
            Backend::Ucx => sys::DT_BACKEND_UCX,
            Backend::Nccl => sys::DT_BACKEND_NCCL,
        }
    }
}

/// The reduction of a reducing collective.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    /// The mean over ranks; floating-point element types only.
    Avg,
    Max,
    Min,
    Prod,
}

impl ReduceOp {
    pub(crate) fn to_raw(self) -> sys::dt_reduce_op {
        match self {
            ReduceOp::Sum => sys::DT_SUM,
            ReduceOp::Avg => sys::DT_AVG,
            ReduceOp::Max => sys::DT_MAX,
            ReduceOp::Min => sys::DT_MIN,
            ReduceOp::Prod => sys::DT_PROD,
        }
    }
}

/// Options of [`Comm::with_options`](crate::Comm::with_options), mirroring
/// `dt_comm_options`. `None` means "the default, or what the environment says"
/// (`DT_UNDEF` / `NULL` in C). `Options::default()` leaves everything unset.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// This process's rank; `None`: from the launcher's environment.
    pub rank: Option<i32>,
    /// The number of ranks; `None`: from the launcher's environment.
    pub world_size: Option<i32>,
    /// "host:port" of the rendezvous store; `None`: from the environment.
    pub store: Option<String>,
    /// The job's shared secret; `None`: `DTRAIN_AUTH_TOKEN`.
    pub auth_token: Option<String>,
    pub backend: Backend,
    /// CUDA device ordinal; `None`: the CPU, or the local rank with NCCL.
    pub device: Option<i32>,
    /// Deadline of every blocking call and wait; `None`: `DTRAIN_TIMEOUT_MS`
    /// or 300000.
    pub timeout_ms: Option<i32>,
}

impl fmt::Debug for Options {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("rank", &self.rank)
            .field("world_size", &self.world_size)
            .field("store", &self.store)
            .field(
                "auth_token",
                &self.auth_token.as_ref().map(|_| "<redacted>"),
            )
            .field("backend", &self.backend)
            .field("device", &self.device)
            .field("timeout_ms", &self.timeout_ms)
            .finish()
    }
}
