//! Communicators: creation, queries, split, abort and destruction.

use std::ffi::CString;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr::{self, NonNull};

use dtrain_sys as sys;

use crate::abort::AbortHandle;
use crate::error::{check, Error, Result, Status};
use crate::options::Options;

/// A communicator: a group of ranks that run collectives together.
///
/// `Comm` owns its `dt_comm` handle and destroys it on drop, which aborts
/// whatever is still pending on it. It is `Send` but not `Sync`: one thread at
/// a time uses it, as the C API requires. It is bound to the thread that made
/// it: after moving it to another thread, call [`Comm::bind_thread`] there
/// before its collectives (which otherwise return
/// [`Status::InvalidUsage`](crate::Status::InvalidUsage)). To abort it from
/// another thread, use an [`AbortHandle`].
///
/// ```compile_fail
/// fn shared_between_threads<T: Sync>(_: &T) {}
/// let comm = dtrain::Comm::new().unwrap();
/// shared_between_threads(&comm); // error: `Comm` is not `Sync`
/// ```
///
/// The lifetime `'p` ties a communicator made by [`Comm::split`] to its parent,
/// which libdtrain requires to outlive it; communicators made by [`Comm::new`]
/// and [`Comm::with_options`] are `Comm<'static>`.
pub struct Comm<'p> {
    raw: NonNull<sys::dt_comm>,
    _parent: PhantomData<&'p ()>,
}

// SAFETY: a dt_comm may be used from any thread, one thread at a time (its
// binding to a thread is checked by libdtrain, not memory safety); `Comm` is
// not `Sync`, so shared references never cross threads.
unsafe impl Send for Comm<'_> {}

impl Comm<'static> {
    /// Creates a communicator configured entirely from the environment
    /// (`DTRAIN_*` or a launcher's variables); with none set, a world of one.
    pub fn new() -> Result<Comm<'static>> {
        // SAFETY: NULL options mean "all from the environment".
        unsafe { Comm::create(ptr::null()) }
    }

    /// Creates a communicator from `options`; unset fields come from the
    /// environment or the defaults.
    pub fn with_options(options: &Options) -> Result<Comm<'static>> {
        let store = c_string(options.store.as_deref(), "options.store")?;
        let auth_token = c_string(options.auth_token.as_deref(), "options.auth_token")?;
        let mut raw = MaybeUninit::<sys::dt_comm_options>::zeroed();
        // SAFETY: dt_comm_options_init fills every field of this version.
        check(unsafe {
            sys::dt_comm_options_init(raw.as_mut_ptr(), sys::DT_COMM_OPTIONS_VERSION)
        })?;
        // SAFETY: zeroed and then initialised by the library.
        let mut raw = unsafe { raw.assume_init() };
        raw.rank = options.rank.unwrap_or(sys::DT_UNDEF);
        raw.world_size = options.world_size.unwrap_or(sys::DT_UNDEF);
        raw.store = store.as_ref().map_or(ptr::null(), |s| s.as_ptr());
        raw.auth_token = auth_token.as_ref().map_or(ptr::null(), |s| s.as_ptr());
        raw.backend = options.backend.to_raw();
        raw.device = options.device.unwrap_or(sys::DT_UNDEF);
        raw.timeout_ms = options.timeout_ms.unwrap_or(sys::DT_UNDEF);
        // SAFETY: the strings outlive the call; the library copies what it keeps.
        unsafe { Comm::create(&raw) }
    }
}

impl<'p> Comm<'p> {
    /// # Safety
    /// `options` is NULL or points to valid options whose strings live
    /// through the call.
    unsafe fn create(options: *const sys::dt_comm_options) -> Result<Comm<'p>> {
        let mut out = ptr::null_mut();
        check(sys::dt_comm_create(&mut out, options))?;
        Ok(Comm::from_raw(out).expect("dt_comm_create succeeded without a communicator"))
    }

    pub(crate) fn from_raw(raw: *mut sys::dt_comm) -> Option<Comm<'p>> {
        NonNull::new(raw).map(|raw| Comm {
            raw,
            _parent: PhantomData,
        })
    }

    /// The raw handle, still owned by this `Comm`.
    pub fn as_raw(&self) -> *mut sys::dt_comm {
        self.raw.as_ptr()
    }

    /// This process's rank in the communicator.
    pub fn rank(&self) -> Result<i32> {
        let mut rank = 0;
        // SAFETY: a live handle and a valid out pointer.
        check(unsafe { sys::dt_comm_rank(self.as_raw(), &mut rank) })?;
        Ok(rank)
    }

    /// The number of ranks in the communicator.
    pub fn size(&self) -> Result<i32> {
        let mut size = 0;
        // SAFETY: a live handle and a valid out pointer.
        check(unsafe { sys::dt_comm_size(self.as_raw(), &mut size) })?;
        Ok(size)
    }

    /// Splits the communicator like `MPI_Comm_split` (collective over it):
    /// ranks with the same `color` form a new communicator, ordered by `key`
    /// and then by rank. `color` `None` leaves this rank out and gives
    /// `Ok(None)`. The child borrows its parent, so it is dropped first.
    pub fn split(&self, color: Option<i32>, key: i32) -> Result<Option<Comm<'_>>> {
        let mut out = ptr::null_mut();
        let color = color.unwrap_or(sys::DT_UNDEF);
        // SAFETY: a live parent handle and a valid out pointer.
        check(unsafe { sys::dt_comm_split(&mut out, self.as_raw(), color, key) })?;
        Ok(Comm::from_raw(out))
    }

    /// Binds the communicator to the calling thread (`true`): only that thread
    /// may run its collectives, point-to-point calls and splits; another gets
    /// [`Status::InvalidUsage`](crate::Status::InvalidUsage) and nothing
    /// changes. A `Comm` is bound to the thread that created it, so call this
    /// after moving it to another thread. `false` lets any thread call, one at
    /// a time, in the same order on every rank.
    pub fn bind_thread(&self, bind: bool) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::dt_comm_bind_thread(self.as_raw(), i32::from(bind)) })
    }

    /// Aborts every pending and future operation: waiters get
    /// [`Status::Aborted`](crate::Status::Aborted). Never blocks.
    pub fn abort(&self) -> Result<()> {
        // SAFETY: a live handle.
        check(unsafe { sys::dt_comm_abort(self.as_raw()) })
    }

    /// A handle that aborts this communicator from any thread. It borrows the
    /// communicator, so the communicator cannot be dropped (or moved) while a
    /// handle exists; the communicator itself stays usable on its own thread.
    pub fn abort_handle(&self) -> AbortHandle<'_> {
        // SAFETY: the handle's lifetime is tied to this borrow of `self`.
        unsafe { AbortHandle::new(self.raw) }
    }
}

impl Drop for Comm<'_> {
    fn drop(&mut self) {
        // SAFETY: this value owns the handle; nothing borrows it any more.
        // A failure here has nowhere to go: the handle is released either way.
        unsafe { sys::dt_comm_destroy(self.as_raw()) };
    }
}

impl std::fmt::Debug for Comm<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comm").field("raw", &self.raw).finish()
    }
}

/// A C string for an optional option; a NUL inside is an invalid argument.
fn c_string(value: Option<&str>, name: &str) -> Result<Option<CString>> {
    value
        .map(|v| {
            CString::new(v).map_err(|_| {
                Error::new(
                    Status::InvalidArgument,
                    format!("{name} contains a NUL byte"),
                )
            })
        })
        .transpose()
}
