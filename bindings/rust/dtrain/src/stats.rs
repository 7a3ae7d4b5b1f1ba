//! What a communicator's operations added up to on this rank (`dt_comm_stats`).

use dtrain_sys as sys;

use crate::comm::Comm;
use crate::error::{check, Result};

/// The kinds of operation [`Comm::stats`] counts (`dt_op_kind`); `All` sums them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    All,
    Allreduce,
    ReduceScatter,
    Allgather,
    Broadcast,
    Alltoall,
    Alltoallv,
    Barrier,
    Reduce,
    Gather,
    Scatter,
    Allgatherv,
    ReduceScatterv,
    Send,
    Recv,
    P2pGroup,
}

impl OpKind {
    fn to_raw(self) -> sys::dt_op_kind {
        match self {
            OpKind::All => sys::DT_OP_ALL,
            OpKind::Allreduce => sys::DT_OP_ALLREDUCE,
            OpKind::ReduceScatter => sys::DT_OP_REDUCE_SCATTER,
            OpKind::Allgather => sys::DT_OP_ALLGATHER,
            OpKind::Broadcast => sys::DT_OP_BROADCAST,
            OpKind::Alltoall => sys::DT_OP_ALLTOALL,
            OpKind::Alltoallv => sys::DT_OP_ALLTOALLV,
            OpKind::Barrier => sys::DT_OP_BARRIER,
            OpKind::Reduce => sys::DT_OP_REDUCE,
            OpKind::Gather => sys::DT_OP_GATHER,
            OpKind::Scatter => sys::DT_OP_SCATTER,
            OpKind::Allgatherv => sys::DT_OP_ALLGATHERV,
            OpKind::ReduceScatterv => sys::DT_OP_REDUCE_SCATTERV,
            OpKind::Send => sys::DT_OP_SEND,
            OpKind::Recv => sys::DT_OP_RECV,
            OpKind::P2pGroup => sys::DT_OP_P2P_GROUP,
        }
    }
}

/// Finished operations of one kind on this rank (`dt_op_stats`): `bytes` is
/// the size of this rank's buffer each is about (the send tensor, mostly;
/// see `dtrain/comm.h`), `seconds` the time from each call to its
/// completion, both summed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OpStats {
    pub count: i64,
    pub failed: i64,
    pub bytes: i64,
    pub seconds: f64,
}

impl Comm<'_> {
    /// The totals of this rank's operations of `kind` since the communicator
    /// was created. Local; works on a broken communicator too.
    pub fn stats(&self, kind: OpKind) -> Result<OpStats> {
        let mut raw = sys::dt_op_stats { version: sys::DT_OP_STATS_VERSION, count: 0, failed: 0, bytes: 0, seconds: 0.0 };
        // SAFETY: a live handle and a valid out pointer with its version set.
        check(unsafe { sys::dt_comm_stats(self.as_raw(), kind.to_raw(), &mut raw) })?;
        Ok(OpStats { count: raw.count, failed: raw.failed, bytes: raw.bytes, seconds: raw.seconds })
    }
}
