# What a communicator's operations added up to on this rank (dt_comm_stats).

# The version of dt_op_stats mirrored here.
const DT_OP_STATS_VERSION = Cuint(1)

"""
    OpKind

The kinds of operation [`comm_stats`](@ref) counts (`dt_op_kind`);
`DT_OP_ALL` sums them.
"""
@enum OpKind::Cint begin
    DT_OP_ALL = 0
    DT_OP_ALLREDUCE = 1
    DT_OP_REDUCE_SCATTER = 2
    DT_OP_ALLGATHER = 3
    DT_OP_BROADCAST = 4
    DT_OP_ALLTOALL = 5
    DT_OP_ALLTOALLV = 6
    DT_OP_BARRIER = 7
    DT_OP_REDUCE = 8
    DT_OP_GATHER = 9
    DT_OP_SCATTER = 10
    DT_OP_ALLGATHERV = 11
    DT_OP_REDUCE_SCATTERV = 12
    DT_OP_SEND = 13
    DT_OP_RECV = 14
    DT_OP_P2P_GROUP = 15
end

"""
    OpStats

Finished operations of one kind on this rank (`dt_op_stats`): `count`,
`failed`, `bytes` (the size of this rank's buffer each is about, the send
tensor mostly; see dtrain/comm.h) and `seconds` (from each call to its
completion), both summed.
"""
struct OpStats
    version::Cuint
    count::Int64
    failed::Int64
    bytes::Int64
    seconds::Float64
end

"""
    comm_stats(comm, kind=DT_OP_ALL) -> OpStats

The totals of this rank's operations of `kind` on `comm` since it was
created. Local; works on a broken communicator too.
"""
function comm_stats(comm::Comm, kind::OpKind=DT_OP_ALL)
    out = Ref(OpStats(DT_OP_STATS_VERSION, 0, 0, 0, 0.0))
    _check(ccall(_sym(:dt_comm_stats), Cint, (Ptr{Cvoid}, Cint, Ref{OpStats}), comm, kind, out))
    return out[]
end
