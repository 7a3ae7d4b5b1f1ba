//! Status codes and errors.

use std::ffi::CStr;
use std::fmt;

use dtrain_sys as sys;

/// The outcome of a libdtrain call; mirrors `dt_status`, with the same values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Status {
    /// Success.
    Ok = sys::DT_OK,
    /// A request has not finished yet.
    InProgress = sys::DT_INPROGRESS,
    /// A bad argument; nothing was changed.
    InvalidArgument = sys::DT_ERR_INVALID_ARGUMENT,
    /// A call out of order or on the wrong object.
    InvalidUsage = sys::DT_ERR_INVALID_USAGE,
    /// Not available in this build or on this machine.
    Unsupported = sys::DT_ERR_UNSUPPORTED,
    /// Memory ran out.
    OutOfMemory = sys::DT_ERR_OUT_OF_MEMORY,
    /// A deadline passed; the communicator is broken.
    Timeout = sys::DT_ERR_TIMEOUT,
    /// A peer failed; the communicator is broken.
    Remote = sys::DT_ERR_REMOTE,
    /// The network or transport failed; the communicator is broken.
    Transport = sys::DT_ERR_TRANSPORT,
    /// The communicator was aborted or is broken.
    Aborted = sys::DT_ERR_ABORTED,
    /// Rendezvous refused the job's secret.
    Auth = sys::DT_ERR_AUTH,
    /// Ranks disagree about a collective.
    Mismatch = sys::DT_ERR_MISMATCH,
    /// A bug in libdtrain, or a status this binding does not know.
    Internal = sys::DT_ERR_INTERNAL,
    /// A file could not be read or written.
    Io = sys::DT_ERR_IO,
}

impl Status {
    /// The status for a raw `dt_status`; values this binding does not know
    /// become [`Status::Internal`].
    pub fn from_raw(raw: sys::dt_status) -> Status {
        const ALL: [Status; 14] = [
            Status::Ok,
            Status::InProgress,
            Status::InvalidArgument,
            Status::InvalidUsage,
            Status::Unsupported,
            Status::OutOfMemory,
            Status::Timeout,
            Status::Remote,
            Status::Transport,
            Status::Aborted,
            Status::Auth,
            Status::Mismatch,
            Status::Internal,
            Status::Io,
        ];
        ALL.into_iter()
            .find(|s| s.to_raw() == raw)
            .unwrap_or(Status::Internal)
    }

    /// The raw `dt_status` value.
    pub fn to_raw(self) -> sys::dt_status {
        self as sys::dt_status
    }

    /// Whether this status is a failure (negative).
    pub fn is_error(self) -> bool {
        self.to_raw() < 0
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(status_string(*self))
    }
}

/// A failed libdtrain call: its status and the library's message (what went
/// wrong, which argument, which rank).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub status: Status,
    pub message: String,
}

/// The result of a libdtrain call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error made on the Rust side, before the C library was called.
    pub fn new(status: Status, message: impl Into<String>) -> Error {
        Error {
            status,
            message: message.into(),
        }
    }

    /// The error for a failed raw status, with this thread's `dt_error_last()`.
    pub(crate) fn from_last(raw: sys::dt_status) -> Error {
        let status = Status::from_raw(raw);
        let mut message = error_last();
        if status.to_raw() != raw {
            message = format!("unknown status {raw}: {message}");
        }
        Error { status, message }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.message.is_empty() {
            write!(f, "{}", self.status)
        } else {
            write!(f, "{}: {}", self.status, self.message)
        }
    }
}

impl std::error::Error for Error {}

/// `Ok(())` for `DT_OK` and `DT_INPROGRESS`, the error with its message otherwise.
pub(crate) fn check(raw: sys::dt_status) -> Result<()> {
    if raw < 0 {
        Err(Error::from_last(raw))
    } else {
        Ok(())
    }
}

/// A short, static description of `status` ("invalid argument").
pub fn status_string(status: Status) -> &'static str {
    // SAFETY: dt_status_string returns static, NUL-terminated text, never NULL.
    let text = unsafe { CStr::from_ptr(sys::dt_status_string(status.to_raw())) };
    text.to_str().unwrap_or("unknown status")
}

/// The message of the last failure on the calling thread; empty when there
/// was none. Errors returned by this crate already carry it.
pub fn error_last() -> String {
    // SAFETY: dt_error_last never returns NULL; the text stays valid until the
    // next libdtrain call on this thread, and it is copied at once.
    let text = unsafe { CStr::from_ptr(sys::dt_error_last()) };
    text.to_string_lossy().into_owned()
}
