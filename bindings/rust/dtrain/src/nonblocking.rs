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

    /// Non-blocking [`reduce`](Self::reduce).
    pub fn ireduce<'a, T: Element>(
        &'a self,
        send: &'a [T],
        recv: Option<&'a mut [T]>,
        op: ReduceOp,
        root: i32,
    ) -> Result<Request<'a>> {
        let operands = Operands::first_and_maybe(RawTensor::of(send), recv.map(RawTensor::of_mut));
        self.launch(operands, start::reduce(op, root))
    }

    /// Non-blocking [`gather`](Self::gather).
    pub fn igather<'a, T: Element>(
        &'a self,
        send: &'a [T],
        recv: Option<&'a mut [T]>,
        root: i32,
    ) -> Result<Request<'a>> {
        let operands = Operands::first_and_maybe(RawTensor::of(send), recv.map(RawTensor::of_mut));
        self.launch(operands, start::gather(root))
    }

    /// Non-blocking [`scatter`](Self::scatter).
    pub fn iscatter<'a, T: Element>(
        &'a self,
        send: Option<&'a [T]>,
        recv: &'a mut [T],
        root: i32,
    ) -> Result<Request<'a>> {
        let operands = Operands::first_and_maybe(RawTensor::of_mut(recv), send.map(RawTensor::of));
        self.launch(operands, start::scatter(root))
    }

    /// Non-blocking [`allgatherv`](Self::allgatherv). The counts are copied.
    pub fn iallgatherv<'a, T: Element>(
        &'a self,
        send: &'a [T],
        recv: &'a mut [T],
        recv_counts: &[i64],
    ) -> Result<Request<'a>> {
        let operands = Operands::with_recv_counts(self, send, recv, recv_counts)?;
        self.launch(operands, start::allgatherv())
    }

    /// Non-blocking [`reduce_scatterv`](Self::reduce_scatterv). The counts are copied.
    pub fn ireduce_scatterv<'a, T: Element>(
        &'a self,
        send: &'a [T],
        recv_counts: &[i64],
        recv: &'a mut [T],
        op: ReduceOp,
    ) -> Result<Request<'a>> {
        let operands = Operands::with_recv_counts(self, send, recv, recv_counts)?;
        self.launch(operands, start::reduce_scatterv(op))
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
