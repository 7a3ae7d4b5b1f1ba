//! One starter per communicating C function: each passes an operation's
//! operands to its `dt_*` call, blocking or with a request.
//!
//! SAFETY (every `unsafe` block here): the descriptors come from [`Operands`],
//! built from slices that the caller keeps borrowed while the operation may
//! use them; indices follow how each caller built the operands (0: send or
//! the only buffer, 1: recv).

use dtrain_sys as sys;

use crate::operation::{start, Operands, Start};
use crate::options::ReduceOp;

pub(crate) fn allreduce(op: ReduceOp) -> impl Start {
    start(move |c, o: &mut Operands, req| unsafe {
        let recv = o.tensor_mut(1);
        sys::dt_allreduce(c, o.tensor(0), recv, op.to_raw(), o.stream, req)
    })
}

/// `send == recv`: the C API's in-place form.
pub(crate) fn allreduce_in_place(op: ReduceOp) -> impl Start {
    start(move |c, o: &mut Operands, req| unsafe {
        let buf = o.tensor_mut(0);
        sys::dt_allreduce(c, buf, buf, op.to_raw(), o.stream, req)
    })
}

pub(crate) fn reduce_scatter(op: ReduceOp) -> impl Start {
    start(move |c, o: &mut Operands, req| unsafe {
        let recv = o.tensor_mut(1);
        sys::dt_reduce_scatter(c, o.tensor(0), recv, op.to_raw(), o.stream, req)
    })
}

pub(crate) fn allgather() -> impl Start {
    start(|c, o: &mut Operands, req| unsafe {
        let recv = o.tensor_mut(1);
        sys::dt_allgather(c, o.tensor(0), recv, o.stream, req)
    })
}

pub(crate) fn broadcast(root: i32) -> impl Start {
    start(move |c, o: &mut Operands, req| unsafe {
        sys::dt_broadcast(c, o.tensor_mut(0), root, o.stream, req)
    })
}

pub(crate) fn alltoall() -> impl Start {
    start(|c, o: &mut Operands, req| unsafe {
        let recv = o.tensor_mut(1);
        sys::dt_alltoall(c, o.tensor(0), recv, o.stream, req)
    })
}

/// Operands from [`Operands::with_counts`]: counts 0 and 1 have one entry per rank.
pub(crate) fn alltoallv() -> impl Start {
    start(|c, o: &mut Operands, req| unsafe {
        let recv = o.tensor_mut(1);
        sys::dt_alltoallv(
            c,
            o.tensor(0),
            o.counts(0),
            recv,
            o.counts(1),
            o.stream,
            req,
        )
    })
}

pub(crate) fn send(peer: i32, tag: i32) -> impl Start {
    start(move |c, o: &mut Operands, req| unsafe {
        sys::dt_send(c, o.tensor(0), peer, tag, o.stream, req)
    })
}

pub(crate) fn recv(peer: i32, tag: i32) -> impl Start {
    start(move |c, o: &mut Operands, req| unsafe {
        sys::dt_recv(c, o.tensor_mut(0), peer, tag, o.stream, req)
    })
}
