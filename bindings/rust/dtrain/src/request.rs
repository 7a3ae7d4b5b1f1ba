//! Requests: the handles of non-blocking operations.

use std::marker::PhantomData;
use std::ptr::NonNull;

use dtrain_sys as sys;

use crate::comm::Comm;
use crate::error::{check, Result};
use crate::operation::Operands;

/// A non-blocking operation in flight.
///
/// Ownership: the request owns its `dt_request` and the descriptors of the
/// operation's buffers; it borrows the buffers themselves and the communicator
/// for `'a`, so neither can be touched, moved or dropped until the request is
/// gone. [`wait`](Self::wait) consumes it; dropping an unfinished request waits
/// for it up to the communicator's deadline (if that passes, the communicator is
/// broken and the operation aborted) and then frees it. Like its communicator,
/// a request stays on one thread.
///
/// The buffers are out of reach while the request lives:
///
/// ```compile_fail
/// let comm = dtrain::Comm::new().unwrap();
/// let mut inbox = [0f32; 4];
/// let request = comm.irecv(&mut inbox, 0, 0).unwrap();
/// inbox[0] = 1.0; // error: `inbox` is borrowed by `request`
/// request.wait(-1).unwrap();
/// ```
///
/// Do not leak a request (`std::mem::forget`, reference cycles): that ends the
/// borrows without waiting, while libdtrain may still write the buffers.
#[must_use = "an operation is finished by waiting for its request"]
pub struct Request<'a> {
    raw: NonNull<sys::dt_request>,
    comm: &'a Comm<'a>,
    finished: bool,
    _operands: Operands,
    _buffers: PhantomData<&'a mut [u8]>,
}

impl<'a> Request<'a> {
    /// # Safety
    /// `raw` is a request of `comm`, owned by the caller; `operands` describe
    /// buffers that stay borrowed for `'a`.
    pub(crate) unsafe fn new(
        comm: &'a Comm<'a>,
        raw: *mut sys::dt_request,
        operands: Operands,
    ) -> Request<'a> {
        Request {
            raw: NonNull::new(raw).expect("libdtrain started an operation without a request"),
            comm,
            finished: false,
            _operands: operands,
            _buffers: PhantomData,
        }
    }

    /// Waits for the operation at most `timeout_ms` milliseconds (negative: the
    /// communicator's deadline) and returns its outcome. Running out of time
    /// gives [`Status::Timeout`](crate::Status::Timeout) and breaks the
    /// communicator, as every timeout does.
    pub fn wait(mut self, timeout_ms: i32) -> Result<()> {
        // SAFETY: a live request.
        let status = unsafe { sys::dt_request_wait(self.raw.as_ptr(), timeout_ms) };
        self.finished = status != sys::DT_ERR_TIMEOUT;
        check(status)
    }

    /// `Ok(true)` when the operation is done, `Ok(false)` while it runs, or
    /// the operation's error. Call [`wait`](Self::wait) (which then returns at
    /// once) or drop the request to release the buffers.
    pub fn test(&mut self) -> Result<bool> {
        // SAFETY: a live request.
        let status = unsafe { sys::dt_request_test(self.raw.as_ptr()) };
        self.finished = status != sys::DT_INPROGRESS;
        check(status).map(|()| self.finished)
    }
}

impl Drop for Request<'_> {
    fn drop(&mut self) {
        let raw = self.raw.as_ptr();
        if !self.finished {
            // SAFETY: a live request; its communicator is borrowed, so alive.
            unsafe {
                if sys::dt_request_wait(raw, -1) == sys::DT_ERR_TIMEOUT {
                    // The deadline broke the communicator; make sure the
                    // operation has stopped before its buffers are released.
                    sys::dt_comm_abort(self.comm.as_raw());
                    sys::dt_request_wait(raw, -1);
                }
            }
        }
        // SAFETY: owned by this value and released once.
        unsafe { sys::dt_request_free(raw) };
    }
}

impl std::fmt::Debug for Request<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("raw", &self.raw)
            .field("finished", &self.finished)
            .finish()
    }
}
