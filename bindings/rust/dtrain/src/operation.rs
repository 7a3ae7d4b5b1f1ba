//! What every communicating call shares: its operands as the C API sees them,
//! and starting it either blocking or with a request.

use std::os::raw::c_void;
use std::ptr;

use dtrain_sys as sys;

use crate::comm::Comm;
use crate::element::Element;
use crate::error::{check, Error, Result, Status};
use crate::request::Request;
use crate::tensor::RawTensor;

/// The descriptors of one operation's buffers (and alltoallv's counts), and
/// the `stream` argument of its C call. A non-blocking operation's
/// [`Request`] keeps them until it has finished, since libdtrain may read them
/// for that long. Both live in heap storage that does not move when
/// `Operands` does.
pub(crate) struct Operands {
    pub(crate) tensors: Vec<RawTensor>,
    pub(crate) counts: Vec<Vec<i64>>,
    pub(crate) stream: *mut c_void,
}

impl Operands {
    pub(crate) fn one(tensor: RawTensor) -> Operands {
        Operands {
            tensors: vec![tensor],
            counts: Vec::new(),
            stream: NO_STREAM,
        }
    }

    pub(crate) fn pair<T: Element>(send: &[T], recv: &mut [T]) -> Operands {
        Operands::tensors(
            vec![RawTensor::of(send), RawTensor::of_mut(recv)],
            NO_STREAM,
        )
    }

    /// Operands of an operation on device memory, run on `stream`.
    pub(crate) fn tensors(tensors: Vec<RawTensor>, stream: *mut c_void) -> Operands {
        Operands {
            tensors,
            counts: Vec::new(),
            stream,
        }
    }

    /// The send/recv pair of an alltoallv with its counts, which must have one
    /// entry per rank: the C function reads exactly that many.
    pub(crate) fn with_counts<T: Element>(
        comm: &Comm<'_>,
        send: &[T],
        send_counts: &[i64],
        recv: &mut [T],
        recv_counts: &[i64],
    ) -> Result<Operands> {
        let size = comm.size()?;
        for (name, counts) in [("send_counts", send_counts), ("recv_counts", recv_counts)] {
            if counts.len() != size as usize {
                return Err(Error::new(
                    Status::InvalidArgument,
                    format!(
                        "{name} has {} entries but the communicator has {size} ranks",
                        counts.len()
                    ),
                ));
            }
        }
        let mut operands = Operands::pair(send, recv);
        operands.counts = vec![send_counts.to_vec(), recv_counts.to_vec()];
        Ok(operands)
    }

    /// Operands of an operation with one count per rank for the receiving
    /// side (allgatherv, reduce_scatterv); the counts must have one entry
    /// per rank, which the C function reads.
    pub(crate) fn with_recv_counts<T: Element>(
        comm: &Comm<'_>,
        send: &[T],
        recv: &mut [T],
        recv_counts: &[i64],
    ) -> Result<Operands> {
        let size = comm.size()?;
        if recv_counts.len() != size as usize {
            return Err(Error::new(
                Status::InvalidArgument,
                format!(
                    "recv_counts has {} entries but the communicator has {size} ranks",
                    recv_counts.len()
                ),
            ));
        }
        let mut operands = Operands::pair(send, recv);
        operands.counts = vec![recv_counts.to_vec()];
        Ok(operands)
    }

    /// `first`, then `second` when the rank uses it (rooted operations).
    pub(crate) fn first_and_maybe(first: RawTensor, second: Option<RawTensor>) -> Operands {
        let mut tensors = vec![first];
        tensors.extend(second);
        Operands::tensors(tensors, NO_STREAM)
    }

    /// Tensor `index`, or NULL when the operands leave it out.
    pub(crate) fn tensor_mut_if_present(&mut self, index: usize) -> *mut sys::DLTensor {
        if index < self.tensors.len() {
            self.tensor_mut(index)
        } else {
            ptr::null_mut()
        }
    }

    pub(crate) fn tensor(&self, index: usize) -> *const sys::DLTensor {
        self.tensors[index].as_ptr()
    }

    pub(crate) fn tensor_mut(&mut self, index: usize) -> *mut sys::DLTensor {
        self.tensors[index].as_mut_ptr()
    }

    pub(crate) fn counts(&self, index: usize) -> *const i64 {
        self.counts[index].as_ptr()
    }
}

/// Starts an operation through its C function: given the communicator, the
/// operands and the `req` argument (NULL: blocking), returns the status.
pub(crate) trait Start:
    FnOnce(*mut sys::dt_comm, &mut Operands, *mut *mut sys::dt_request) -> sys::dt_status
{
}

impl<F> Start for F where
    F: FnOnce(*mut sys::dt_comm, &mut Operands, *mut *mut sys::dt_request) -> sys::dt_status
{
}

/// Gives a closure the signature of [`Start`].
pub(crate) fn start<F>(f: F) -> F
where
    F: FnOnce(*mut sys::dt_comm, &mut Operands, *mut *mut sys::dt_request) -> sys::dt_status,
{
    f
}

/// The `stream` argument of operations on host memory, which ignore it.
pub(crate) const NO_STREAM: *mut c_void = ptr::null_mut();

impl<'p> Comm<'p> {
    /// Runs an operation to completion (or the communicator's deadline).
    pub(crate) fn run(&self, mut operands: Operands, start: impl Start) -> Result<()> {
        check(start(self.as_raw(), &mut operands, ptr::null_mut()))
    }

    /// Starts an operation and returns its request, which keeps the operands
    /// (and, through `'a`, the buffers and the communicator) until it is done.
    pub(crate) fn launch<'a>(
        &'a self,
        mut operands: Operands,
        start: impl Start,
    ) -> Result<Request<'a>> {
        let mut raw = ptr::null_mut();
        check(start(self.as_raw(), &mut operands, &mut raw))?;
        // SAFETY: the call succeeded, so `raw` is a request of this communicator
        // that belongs to us, and `operands` describe buffers borrowed for 'a.
        Ok(unsafe { Request::new(self, raw, operands) })
    }
}
