//! Helpers shared by the integration tests.

#![allow(dead_code)]

use dtrain::{Comm, Error, Options, Status};

/// A world of one rank, whatever the environment says.
pub fn world() -> Comm<'static> {
    world_with_timeout(None)
}

/// A world of one whose blocking calls and waits give up after `timeout_ms`.
pub fn world_with_timeout(timeout_ms: Option<i32>) -> Comm<'static> {
    let options = Options {
        rank: Some(0),
        world_size: Some(1),
        timeout_ms,
        ..Options::default()
    };
    Comm::with_options(&options).expect("create a world of one")
}

/// Asserts that `result` failed with `status` and a message containing `needle`.
#[track_caller]
pub fn assert_error<T: std::fmt::Debug>(result: Result<T, Error>, status: Status, needle: &str) {
    let error = result.expect_err("the call should fail");
    assert_eq!(error.status, status, "{error}");
    assert!(
        error.message.contains(needle),
        "message {:?} lacks {needle:?}",
        error.message
    );
}
