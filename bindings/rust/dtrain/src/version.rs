//! Versions and build information.

use std::ffi::CStr;
use std::fmt;

use dtrain_sys as sys;

/// A libdtrain version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    pub major: i32,
    pub minor: i32,
    pub patch: i32,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The version of the headers these bindings were generated from.
pub const HEADER_VERSION: Version = Version {
    major: sys::DT_VERSION_MAJOR as i32,
    minor: sys::DT_VERSION_MINOR as i32,
    patch: sys::DT_VERSION_PATCH as i32,
};

/// The version of the libdtrain loaded at run time.
pub fn version() -> Version {
    let mut v = Version {
        major: 0,
        minor: 0,
        patch: 0,
    };
    // SAFETY: three valid out pointers.
    unsafe { sys::dt_version(&mut v.major, &mut v.minor, &mut v.patch) };
    v
}

/// What the loaded library was built with and found at run time: backends,
/// devices, versions (static text owned by the library).
pub fn build_info() -> &'static str {
    // SAFETY: dt_build_info returns static, NUL-terminated text, never NULL.
    let text = unsafe { CStr::from_ptr(sys::dt_build_info()) };
    text.to_str()
        .unwrap_or("libdtrain (build information is not UTF-8)")
}
