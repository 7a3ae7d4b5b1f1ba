//! Blocking collectives and point-to-point on slices.
//!
//! Each call returns when the operation is done on this rank, or fails when
//! the communicator's deadline passes. Slices are borrowed for the call only.
//! Sizes follow MPI: see each method. Invalid arguments give
//! [`Status::InvalidArgument`](crate::Status::InvalidArgument) and change nothing.

use dtrain_sys as sys;

use crate::comm::Comm;
use crate::element::Element;
use crate::error::{check, Result};
use crate::operation::Operands;
use crate::options::ReduceOp;
use crate::start;
use crate::tensor::RawTensor;

impl<'p> Comm<'p> {
    /// `recv[i]` = `op` over the ranks of `send[i]`; both have the same length.
    pub fn allreduce<T: Element>(&self, send: &[T], recv: &mut [T], op: ReduceOp) -> Result<()> {
        self.run(Operands::pair(send, recv), start::allreduce(op))
    }

    /// Reduces `buf` over the ranks in place.
    pub fn allreduce_in_place<T: Element>(&self, buf: &mut [T], op: ReduceOp) -> Result<()> {
        self.run(
            Operands::one(RawTensor::of_mut(buf)),
            start::allreduce_in_place(op),
        )
    }

    /// `send` holds `size × n` elements, `recv` holds `n`: rank r receives
    /// block r reduced over the ranks.
    pub fn reduce_scatter<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        op: ReduceOp,
    ) -> Result<()> {
        self.run(Operands::pair(send, recv), start::reduce_scatter(op))
    }

    /// `send` holds `n` elements, `recv` holds `size × n`, in rank order.
    pub fn allgather<T: Element>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.run(Operands::pair(send, recv), start::allgather())
    }

    /// Copies `buf` on `root` into `buf` on every rank.
    pub fn broadcast<T: Element>(&self, buf: &mut [T], root: i32) -> Result<()> {
        self.run(
            Operands::one(RawTensor::of_mut(buf)),
            start::broadcast(root),
        )
    }

    /// `send` and `recv` hold `size × n` elements; block j of `send` goes to
    /// rank j, block j of `recv` comes from rank j.
    pub fn alltoall<T: Element>(&self, send: &[T], recv: &mut [T]) -> Result<()> {
        self.run(Operands::pair(send, recv), start::alltoall())
    }

    /// Like [`alltoall`](Self::alltoall) with per-rank element counts, blocks
    /// packed in rank order. Each count slice has one entry per rank.
    pub fn alltoallv<T: Element>(
        &self,
        send: &[T],
        send_counts: &[i64],
        recv: &mut [T],
        recv_counts: &[i64],
    ) -> Result<()> {
        let operands = Operands::with_counts(self, send, send_counts, recv, recv_counts)?;
        self.run(operands, start::alltoallv())
    }

    /// `recv` on `root` = `op` over the ranks of `send`. On the root `recv`
    /// is `Some` with `send`'s length; elsewhere it is ignored (pass `None`).
    pub fn reduce<T: Element>(
        &self,
        send: &[T],
        recv: Option<&mut [T]>,
        op: ReduceOp,
        root: i32,
    ) -> Result<()> {
        let operands = Operands::first_and_maybe(RawTensor::of(send), recv.map(RawTensor::of_mut));
        self.run(operands, start::reduce(op, root))
    }

    /// Every rank's `send` (n elements) lands in block r of `recv`
    /// (`size × n`) on `root`; elsewhere `recv` is ignored (pass `None`).
    pub fn gather<T: Element>(&self, send: &[T], recv: Option<&mut [T]>, root: i32) -> Result<()> {
        let operands = Operands::first_and_maybe(RawTensor::of(send), recv.map(RawTensor::of_mut));
        self.run(operands, start::gather(root))
    }

    /// Block r of `send` (`size × n` elements) on `root` goes to `recv` (n)
    /// of rank r; elsewhere `send` is ignored (pass `None`).
    pub fn scatter<T: Element>(&self, send: Option<&[T]>, recv: &mut [T], root: i32) -> Result<()> {
        let operands = Operands::first_and_maybe(RawTensor::of_mut(recv), send.map(RawTensor::of));
        self.run(operands, start::scatter(root))
    }

    /// Like [`allgather`](Self::allgather) with a count per rank: rank r's
    /// `send` has `recv_counts[r]` elements and lands in `recv`, packed in
    /// rank order. `recv_counts` has one entry per rank.
    pub fn allgatherv<T: Element>(
        &self,
        send: &[T],
        recv: &mut [T],
        recv_counts: &[i64],
    ) -> Result<()> {
        let operands = Operands::with_recv_counts(self, send, recv, recv_counts)?;
        self.run(operands, start::allgatherv())
    }

    /// Like [`reduce_scatter`](Self::reduce_scatter) with a count per rank:
    /// `send` holds blocks of `recv_counts[r]` elements packed in rank order;
    /// `recv` (`recv_counts[rank]` elements) gets this rank's, reduced.
    pub fn reduce_scatterv<T: Element>(
        &self,
        send: &[T],
        recv_counts: &[i64],
        recv: &mut [T],
        op: ReduceOp,
    ) -> Result<()> {
        let operands = Operands::with_recv_counts(self, send, recv, recv_counts)?;
        self.run(operands, start::reduce_scatterv(op))
    }

    /// Sends `buf` to rank `peer` with `tag` (>= 0).
    pub fn send<T: Element>(&self, buf: &[T], peer: i32, tag: i32) -> Result<()> {
        self.run(Operands::one(RawTensor::of(buf)), start::send(peer, tag))
    }

    /// Receives into `buf` the message from rank `peer` with `tag` (>= 0).
    pub fn recv<T: Element>(&self, buf: &mut [T], peer: i32, tag: i32) -> Result<()> {
        self.run(
            Operands::one(RawTensor::of_mut(buf)),
            start::recv(peer, tag),
        )
    }

    /// Returns when every rank has entered the barrier.
    pub fn barrier(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::dt_barrier(self.as_raw()) })
    }
}
