//! Routing libdtrain's log lines to a closure, and the level. One test: the
//! routing is process-wide, and the tests of one file run at once.

use std::sync::{Arc, Mutex};

use dtrain::{set_log_handler, set_log_level, Comm, LogLevel, Options, Status};

/// A call the library refuses; it logs "returning ..." at debug level.
fn refused_call() {
    let options = Options {
        rank: Some(5),
        world_size: Some(2),
        ..Default::default()
    };
    let error = Comm::with_options(&options).expect_err("rank 5 of 2 is refused");
    assert_eq!(error.status, Status::InvalidArgument);
}

#[test]
fn handler_receives_lines_at_the_level_until_removed() {
    let lines: Arc<Mutex<Vec<(LogLevel, i32, String)>>> = Arc::default();
    let sink = Arc::clone(&lines);
    set_log_handler(Some(Box::new(move |level, rank, message: &str| {
        sink.lock().unwrap().push((level, rank, message.to_owned()));
    })))
    .unwrap();

    set_log_level(LogLevel::Warn).unwrap();
    refused_call();
    assert!(
        lines.lock().unwrap().is_empty(),
        "a debug line passed the warn level"
    );

    set_log_level(LogLevel::Debug).unwrap();
    refused_call();
    {
        let got = lines.lock().unwrap();
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].0, LogLevel::Debug);
        assert!(
            got[0].2.starts_with("returning invalid argument: "),
            "{}",
            got[0].2
        );
        assert!(got[0].2.contains("is not below"), "{}", got[0].2);
    }

    // A panicking handler loses its line, not the process.
    set_log_handler(Some(Box::new(|_, _, _: &str| {
        panic!("handler panics on purpose")
    })))
    .unwrap();
    refused_call();

    // Removed: the closure (and its clone of `lines`) is dropped at once.
    set_log_handler(None).unwrap();
    refused_call();
    assert_eq!(lines.lock().unwrap().len(), 1);
    assert_eq!(
        Arc::strong_count(&lines),
        1,
        "the removed handler was not dropped"
    );
    set_log_level(LogLevel::Warn).unwrap();
}
