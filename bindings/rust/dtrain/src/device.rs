//! CUDA device memory as tensors, and the streams operations on it run on.
//!
//! Rust cannot borrow-check memory on a GPU: a [`DeviceTensor`] is built from a
//! raw device pointer with an `unsafe` constructor whose caller vouches for the
//! memory, as with the pointer a CUDA crate hands out. The `*_device`
//! collectives take such tensors and a [`CudaStream`]; `dtrain/comm.h` says
//! what the stream means on the NCCL and staged paths. Without a usable CUDA
//! device libdtrain refuses them with
//! [`Status::Unsupported`](crate::Status::Unsupported).

use std::marker::PhantomData;
use std::os::raw::c_void;
use std::ptr;

use dtrain_sys as sys;

use crate::comm::Comm;
use crate::element::Element;
use crate::error::{check, Result};
use crate::operation::Operands;
use crate::options::ReduceOp;
use crate::request::Request;
use crate::start;
use crate::tensor::RawTensor;

/// `len` elements of `T` in the memory of CUDA device `device`, described to
/// libdtrain as a one-dimensional `kDLCUDA` tensor.
pub struct DeviceTensor<T: Element> {
    data: *mut T,
    len: usize,
    device: i32,
    raw: RawTensor,
    _element: PhantomData<T>,
}

// SAFETY: the value only describes memory (and owns the descriptor's shape);
// from_device_ptr's caller vouches for how the memory is used.
unsafe impl<T: Element> Send for DeviceTensor<T> {}

impl<T: Element> DeviceTensor<T> {
    /// Describes `len` elements of `T` at `ptr`, CUDA memory of device
    /// `device` (a CUDA ordinal, >= 0; `ptr` may be null when `len` is 0).
    ///
    /// Nothing is read or checked here; libdtrain checks the device when an
    /// operation starts.
    ///
    /// # Safety
    ///
    /// `ptr` must point to `len` initialised elements of `T` in memory of CUDA
    /// device `device` (device or managed memory) that stays allocated while
    /// any operation given this tensor may use it: until a blocking call
    /// returns or a [`Request`] is waited for or dropped. Work of others on
    /// that memory must be ordered with the operation's stream (see
    /// [`CudaStream`]). Operations that write it (`recv` arguments) must be
    /// the only ones using it meanwhile.
    ///
    /// # Panics
    ///
    /// When `device` is negative or `len` elements of `T` exceed `isize::MAX`
    /// bytes (no allocation can be that large).
    pub unsafe fn from_device_ptr(ptr: *mut T, len: usize, device: i32) -> DeviceTensor<T> {
        assert!(device >= 0, "CUDA device {device} is negative");
        assert!(
            len.checked_mul(std::mem::size_of::<T>())
                .is_some_and(|bytes| bytes <= isize::MAX as usize),
            "{len} elements do not fit in one allocation"
        );
        DeviceTensor {
            data: ptr,
            len,
            device,
            raw: RawTensor::cuda(ptr, len, device),
            _element: PhantomData,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The CUDA device the memory belongs to.
    pub fn device(&self) -> i32 {
        self.device
    }

    /// The device pointer.
    pub fn as_ptr(&self) -> *mut T {
        self.data
    }

    /// The `DLTensor` libdtrain is given for this tensor (its shape pointer is
    /// valid while `self` lives).
    pub fn dl_tensor(&self) -> &sys::DLTensor {
        // SAFETY: as_ptr points at the descriptor inside self.raw.
        unsafe { &*self.raw.as_ptr() }
    }

    /// Asks libdtrain whether it accepts this tensor (`dt_tensor_check`) and
    /// returns its element count: `Unsupported` where no CUDA device is usable.
    pub fn check(&self) -> Result<i64> {
        let mut count = 0i64;
        // SAFETY: the descriptor is valid for the call; the data is not read.
        check(unsafe { sys::dt_tensor_check(self.raw.as_ptr(), &mut count) })?;
        Ok(count)
    }

    pub(crate) fn descriptor(&self) -> RawTensor {
        RawTensor::cuda(self.data, self.len, self.device)
    }
}

impl<T: Element> std::fmt::Debug for DeviceTensor<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceTensor")
            .field("data", &self.data)
            .field("len", &self.len)
            .field("device", &self.device)
            .finish()
    }
}

/// The CUDA stream (`cudaStream_t`) an operation on device memory runs on: it
/// starts after the work queued there before the call. With NCCL the
/// operation is queued on the stream, so work queued there afterwards sees its
/// results; on the staged path only the start is ordered (wait for the
/// operation before using the results).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CudaStream(*mut c_void);

// SAFETY: a stream handle may be used from any thread.
unsafe impl Send for CudaStream {}
unsafe impl Sync for CudaStream {}

impl CudaStream {
    /// The communicator's own stream (NULL), which waits for work on the
    /// legacy default stream but for no other: work on other streams that
    /// writes the tensors must be finished before the call.
    pub const COMMUNICATOR: CudaStream = CudaStream(ptr::null_mut());
    /// The legacy default stream (`cudaStreamLegacy`).
    pub const LEGACY_DEFAULT: CudaStream = CudaStream(ptr::without_provenance_mut(1));
    /// This thread's default stream (`cudaStreamPerThread`).
    pub const PER_THREAD_DEFAULT: CudaStream = CudaStream(ptr::without_provenance_mut(2));

    /// A stream created by the caller's CUDA runtime.
    ///
    /// # Safety
    ///
    /// `stream` must be a valid `cudaStream_t` of the communicator's device
    /// for as long as operations given it may run.
    pub unsafe fn from_raw(stream: *mut c_void) -> CudaStream {
        CudaStream(stream)
    }

    /// The `cudaStream_t`.
    pub fn as_raw(self) -> *mut c_void {
        self.0
    }
}

fn pair<T: Element>(
    send: &DeviceTensor<T>,
    recv: &mut DeviceTensor<T>,
    stream: CudaStream,
) -> Operands {
    Operands::tensors(vec![send.descriptor(), recv.descriptor()], stream.0)
}

fn one<T: Element>(buf: &DeviceTensor<T>, stream: CudaStream) -> Operands {
    Operands::tensors(vec![buf.descriptor()], stream.0)
}

impl<'p> Comm<'p> {
    /// [`allreduce`](Self::allreduce) on device memory, on `stream`.
    pub fn allreduce_device<T: Element>(
        &self,
        send: &DeviceTensor<T>,
        recv: &mut DeviceTensor<T>,
        op: ReduceOp,
        stream: CudaStream,
    ) -> Result<()> {
        self.run(pair(send, recv, stream), start::allreduce(op))
    }

    /// [`allreduce_in_place`](Self::allreduce_in_place) on device memory, on `stream`.
    pub fn allreduce_device_in_place<T: Element>(
        &self,
        buf: &mut DeviceTensor<T>,
        op: ReduceOp,
        stream: CudaStream,
    ) -> Result<()> {
        self.run(one(buf, stream), start::allreduce_in_place(op))
    }

    /// Non-blocking [`allreduce_device`](Self::allreduce_device): the request
    /// borrows both tensors until it is waited for or dropped.
    pub fn iallreduce_device<'a, T: Element>(
        &'a self,
        send: &'a DeviceTensor<T>,
        recv: &'a mut DeviceTensor<T>,
        op: ReduceOp,
        stream: CudaStream,
    ) -> Result<Request<'a>> {
        self.launch(pair(send, recv, stream), start::allreduce(op))
    }

    /// [`reduce_scatter`](Self::reduce_scatter) on device memory, on `stream`.
    pub fn reduce_scatter_device<T: Element>(
        &self,
        send: &DeviceTensor<T>,
        recv: &mut DeviceTensor<T>,
        op: ReduceOp,
        stream: CudaStream,
    ) -> Result<()> {
        self.run(pair(send, recv, stream), start::reduce_scatter(op))
    }

    /// [`allgather`](Self::allgather) on device memory, on `stream`.
    pub fn allgather_device<T: Element>(
        &self,
        send: &DeviceTensor<T>,
        recv: &mut DeviceTensor<T>,
        stream: CudaStream,
    ) -> Result<()> {
        self.run(pair(send, recv, stream), start::allgather())
    }

    /// [`broadcast`](Self::broadcast) on device memory, on `stream`.
    pub fn broadcast_device<T: Element>(
        &self,
        buf: &mut DeviceTensor<T>,
        root: i32,
        stream: CudaStream,
    ) -> Result<()> {
        self.run(one(buf, stream), start::broadcast(root))
    }

    /// [`alltoall`](Self::alltoall) on device memory, on `stream`.
    pub fn alltoall_device<T: Element>(
        &self,
        send: &DeviceTensor<T>,
        recv: &mut DeviceTensor<T>,
        stream: CudaStream,
    ) -> Result<()> {
        self.run(pair(send, recv, stream), start::alltoall())
    }

    /// [`send`](Self::send) from device memory, on `stream`.
    pub fn send_device<T: Element>(
        &self,
        buf: &DeviceTensor<T>,
        peer: i32,
        tag: i32,
        stream: CudaStream,
    ) -> Result<()> {
        self.run(one(buf, stream), start::send(peer, tag))
    }

    /// [`recv`](Self::recv) into device memory, on `stream`.
    pub fn recv_device<T: Element>(
        &self,
        buf: &mut DeviceTensor<T>,
        peer: i32,
        tag: i32,
        stream: CudaStream,
    ) -> Result<()> {
        self.run(one(buf, stream), start::recv(peer, tag))
    }
}
