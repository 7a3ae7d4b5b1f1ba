//! One starter per communicating C function: each passes an operation's
//! operands to its `dt_*` call, blocking or with a request.
//!
//! SAFETY (every `unsafe` block here): the descriptors come from [`Operands`],
//! built from slices that the caller keeps borrowed while the operation may
//! use them; indices follow how each caller built the operands (0: send or
//! the only buffer, 1: recv). Rooted operations leave out a buffer the rank
//! does not use, and pass NULL for it: reduce and gather keep send at 0 and
//! recv, when present, at 1; scatter keeps recv at 0 and send, when present,
//! at 1.

use std::ptr;

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

pub(crate) fn reduce(op: ReduceOp, root: i32) -> impl Start {
    start(move |c, o: &mut Operands, req| unsafe {
        let recv = o.tensor_mut_if_present(1);
        sys::dt_reduce(c, o.tensor(0), recv, op.to_raw(), root, o.stream, req)
    })
}

pub(crate) fn gather(root: i32) -> impl Start {
    start(move |c, o: &mut Operands, req| unsafe {
        let recv = o.tensor_mut_if_present(1);
        sys::dt_gather(c, o.tensor(0), recv, root, o.stream, req)
    })
}

pub(crate) fn scatter(root: i32) -> impl Start {
    start(move |c, o: &mut Operands, req| unsafe {
        let send = if o.tensors.len() > 1 {
            o.tensor(1)
        } else {
            ptr::null()
        };
        sys::dt_scatter(c, send, o.tensor_mut(0), root, o.stream, req)
    })
}

/// Operands from [`Operands::with_recv_counts`]: counts 0 has one entry per rank.
pub(crate) fn allgatherv() -> impl Start {
    start(|c, o: &mut Operands, req| unsafe {
        let recv = o.tensor_mut(1);
        sys::dt_allgatherv(c, o.tensor(0), recv, o.counts(0), o.stream, req)
    })
}

/// Operands from [`Operands::with_recv_counts`]: counts 0 has one entry per rank.
pub(crate) fn reduce_scatterv(op: ReduceOp) -> impl Start {
    start(move |c, o: &mut Operands, req| unsafe {
        let recv = o.tensor_mut(1);
        sys::dt_reduce_scatterv(
            c,
            o.tensor(0),
            o.counts(0),
            recv,
            op.to_raw(),
            o.stream,
            req,
        )
    })
}

/// Tensor i of the operands is op i's; `ops` gives each op's kind, peer
/// and tag.
pub(crate) fn p2p_group(ops: Vec<(sys::dt_p2p_kind, i32, i32)>) -> impl Start {
    start(move |c, o: &mut Operands, req| unsafe {
        let raw: Vec<sys::dt_p2p_op> = ops
            .iter()
            .enumerate()
            .map(|(i, &(kind, peer, tag))| sys::dt_p2p_op {
                kind: kind as i32,
                tensor: o.tensor(i),
                peer,
                tag,
            })
            .collect();
        sys::dt_p2p_group(c, raw.as_ptr(), raw.len() as i32, o.stream, req)
    })
}
