//! Aborting a communicator from another thread.

use std::marker::PhantomData;
use std::ptr::NonNull;

use dtrain_sys as sys;

use crate::error::{check, Result};

/// Aborts a [`Comm`](crate::Comm) from any thread (`dt_comm_abort`, which the C
/// API allows from any thread at any time and which never blocks).
///
/// Lifetime: the handle borrows the communicator it came from
/// ([`Comm::abort_handle`](crate::Comm::abort_handle)), so the borrow checker
/// keeps the communicator alive, undestroyed and in place for as long as any
/// copy of the handle exists. Hand it to another thread with
/// [`std::thread::scope`]:
///
/// ```
/// # fn main() -> Result<(), dtrain::Error> {
/// let comm = dtrain::Comm::new()?;
/// let abort = comm.abort_handle();
/// let mut buf = [0f32; 4];
/// std::thread::scope(|s| {
///     s.spawn(move || abort.abort());
///     // Returns Status::Aborted once the other thread has aborted.
///     let _ = comm.recv(&mut buf, 0, 7);
/// });
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy)]
pub struct AbortHandle<'c> {
    raw: NonNull<sys::dt_comm>,
    _comm: PhantomData<&'c ()>,
}

// SAFETY: the only call made through the handle is dt_comm_abort, which is
// thread-safe; the borrow keeps the dt_comm alive.
unsafe impl Send for AbortHandle<'_> {}
unsafe impl Sync for AbortHandle<'_> {}

impl<'c> AbortHandle<'c> {
    /// # Safety
    /// `raw` must stay a live communicator for `'c`.
    pub(crate) unsafe fn new(raw: NonNull<sys::dt_comm>) -> AbortHandle<'c> {
        AbortHandle {
            raw,
            _comm: PhantomData,
        }
    }

    /// Aborts every pending and future operation of the communicator.
    pub fn abort(&self) -> Result<()> {
        // SAFETY: the communicator is alive for 'c; dt_comm_abort is thread-safe.
        check(unsafe { sys::dt_comm_abort(self.raw.as_ptr()) })
    }
}
