//! Non-blocking collectives and point-to-point on slices.
//!
//! Each call returns at once with a [`Request`] that borrows the slices and
//! the communicator: the borrow checker keeps the buffers untouched until the
//! request is waited for or dropped (and dropping an unfinished request waits
//! for it). Argument errors are reported by the call itself; failures of the
//! operation by [`Request::wait`] or [`Request::test`]. Sizes are those of
//! the blocking forms in the same position.

use crate::comm::Comm;
use crate::element::Element;
use crate::error::Result;
use crate::operation::Operands;
use crate::options::ReduceOp;
use crate::request::Request;
use crate::start;
use crate::tensor::RawTensor;

impl<'p> Comm<'p> {
    /// Non-blocking [`allreduce`](Self::allreduce).
    pub fn iallreduce<'a, T: Element>(
        &'a self,
        send: &'a [T],
        recv: &'a mut [T],
        op: ReduceOp,
    ) -> Result<Request<'a>> {
        self.launch(Operands::pair(send, recv), start::allreduce(op))
    }

    /// Non-blocking [`allreduce_in_place`](Self::allreduce_in_place).
    pub fn iallreduce_in_place<'a, T: Element>(
        &'a self,
        buf: &'a mut [T],
        op: ReduceOp,
    ) -> Result<Request<'a>> {
        self.launch(
            Operands::one(RawTensor::of_mut(buf)),
            start::allreduce_in_place(op),
        )
    }

    /// Non-blocking [`reduce_scatter`](Self::reduce_scatter).
    pub fn ireduce_scatter<'a, T: Element>(
        &'a self,
        send: &'a [T],
        recv: &'a mut [T],
        op: ReduceOp,
    ) -> Result<Request<'a>> {
        self.launch(Operands::pair(send, recv), start::reduce_scatter(op))
    }

    /// Non-blocking [`allgather`](Self::allgather).
    pub fn iallgather<'a, T: Element>(
        &'a self,
        send: &'a [T],
        recv: &'a mut [T],
    ) -> Result<Request<'a>> {
        self.launch(Operands::pair(send, recv), start::allgather())
    }

    /// Non-blocking [`broadcast`](Self::broadcast).
    pub fn ibroadcast<'a, T: Element>(
        &'a self,
        buf: &'a mut [T],
        root: i32,
    ) -> Result<Request<'a>> {
        self.launch(
            Operands::one(RawTensor::of_mut(buf)),
            start::broadcast(root),
        )
    }

    /// Non-blocking [`alltoall`](Self::alltoall).
    pub fn ialltoall<'a, T: Element>(
        &'a self,
        send: &'a [T],
        recv: &'a mut [T],
    ) -> Result<Request<'a>> {
        self.launch(Operands::pair(send, recv), start::alltoall())
    }

    /// Non-blocking [`alltoallv`](Self::alltoallv). The counts are copied.
    pub fn ialltoallv<'a, T: Element>(
        &'a self,
        send: &'a [T],
        send_counts: &[i64],
        recv: &'a mut [T],
        recv_counts: &[i64],
    ) -> Result<Request<'a>> {
        let operands = Operands::with_counts(self, send, send_counts, recv, recv_counts)?;
        self.launch(operands, start::alltoallv())
    }

    /// Non-blocking [`send`](Self::send).
    pub fn isend<'a, T: Element>(
        &'a self,
        buf: &'a [T],
        peer: i32,
        tag: i32,
    ) -> Result<Request<'a>> {
        self.launch(Operands::one(RawTensor::of(buf)), start::send(peer, tag))
    }

    /// Non-blocking [`recv`](Self::recv).
    pub fn irecv<'a, T: Element>(
        &'a self,
        buf: &'a mut [T],
        peer: i32,
        tag: i32,
    ) -> Result<Request<'a>> {
        self.launch(
            Operands::one(RawTensor::of_mut(buf)),
            start::recv(peer, tag),
        )
    }
}
