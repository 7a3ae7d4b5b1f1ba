//! Where libdtrain's log lines go: stderr (or `DTRAIN_LOG_FILE`) by default,
//! or a closure of the application's (`dtrain/log.h`).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::Mutex;

use dtrain_sys as sys;

use crate::error::{check, Result};

/// How much a log line matters; a level lets through itself and the ones
/// above it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogLevel {
    /// An operation failed.
    Error,
    /// Something the user should know (the default level).
    Warn,
    /// What a job is doing, a few lines per job.
    Info,
    /// Every refusal and choice, for finding a problem.
    Debug,
    /// Every operation.
    Trace,
}

impl LogLevel {
    fn to_raw(self) -> sys::dt_log_level {
        match self {
            LogLevel::Error => sys::DT_LOG_ERROR,
            LogLevel::Warn => sys::DT_LOG_WARN,
            LogLevel::Info => sys::DT_LOG_INFO,
            LogLevel::Debug => sys::DT_LOG_DEBUG,
            LogLevel::Trace => sys::DT_LOG_TRACE,
        }
    }

    fn from_raw(raw: sys::dt_log_level) -> LogLevel {
        match raw {
            sys::DT_LOG_ERROR => LogLevel::Error,
            sys::DT_LOG_WARN => LogLevel::Warn,
            sys::DT_LOG_INFO => LogLevel::Info,
            sys::DT_LOG_DEBUG => LogLevel::Debug,
            _ => LogLevel::Trace,
        }
    }
}

/// Sets the level in place of `DTRAIN_LOG_LEVEL`'s.
pub fn set_log_level(level: LogLevel) -> Result<()> {
    // SAFETY: a valid dt_log_level.
    check(unsafe { sys::dt_set_log_level(level.to_raw()) })
}

/// A closure that receives log lines: `(level, rank, message)`.
pub type LogHandler = Box<dyn Fn(LogLevel, i32, &str) + Send + Sync>;

/// The handler the library calls through, boxed twice so that its address
/// (the C callback's `user`) is thin; kept until it is replaced.
static HANDLER: Mutex<Option<Box<LogHandler>>> = Mutex::new(None);

extern "C" fn call_handler(
    user: *mut c_void,
    level: sys::dt_log_level,
    rank: c_int,
    message: *const c_char,
) {
    // SAFETY: `user` is the Box<LogHandler> that set_log_handler registered,
    // alive until dt_set_log_callback replaces it (which waits for this call).
    let handler = unsafe { &*(user as *const LogHandler) };
    // SAFETY: the library passes a NUL-terminated string valid during the call.
    let text = unsafe { CStr::from_ptr(message) }.to_string_lossy();
    // A panic must not unwind into C.
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        handler(LogLevel::from_raw(level), rank, &text)
    }));
}

/// Sends libdtrain's log lines to `handler(level, rank, message)` instead of
/// stderr; `None` restores stderr. `rank` is the process's rank (-1 before
/// its first communicator), `message` the line without time, rank or level.
///
/// The handler runs on whichever thread logs, libdtrain's own included, one
/// call at a time; it must return promptly and must not call libdtrain. A
/// panic in it is caught and the line dropped. When this returns, the
/// previous handler is no longer running and has been dropped.
///
/// ```
/// dtrain::set_log_handler(Some(Box::new(|level, rank, message: &str| {
///     eprintln!("[dtrain {level:?} rank {rank}] {message}");
/// })))?;
/// dtrain::set_log_handler(None)?;
/// # Ok::<(), dtrain::Error>(())
/// ```
pub fn set_log_handler(handler: Option<LogHandler>) -> Result<()> {
    let mut slot = HANDLER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let next: Option<Box<LogHandler>> = handler.map(Box::new);
    let user = next.as_ref().map_or(std::ptr::null_mut(), |h| {
        &**h as *const LogHandler as *mut c_void
    });
    let callback: sys::dt_log_fn = next.as_ref().map(|_| call_handler as _);
    // SAFETY: `user` stays valid while registered: it is dropped only after a
    // later call has replaced it, and the library waits for running calls.
    check(unsafe { sys::dt_set_log_callback(callback, user) })?;
    *slot = next; // the previous handler is no longer called: dropped here
    Ok(())
}
