//! Failures map to the right Status and carry the library's message.

mod common;

use common::assert_error;
use dtrain::{error_last, status_string, Backend, Comm, Error, Options, ReduceOp, Status};

#[test]
fn mismatched_lengths_are_invalid_arguments() {
    let comm = common::world();
    let mut short = [0f32; 2];
    assert_error(
        comm.allreduce(&[1f32, 2.0, 3.0], &mut short, ReduceOp::Sum),
        Status::InvalidArgument,
        "allreduce",
    );
    assert_error(
        comm.allgather(&[1i32, 2], &mut [0i32; 3]),
        Status::InvalidArgument,
        "allgather",
    );
    assert_error(
        comm.reduce_scatter(&[1i64, 2], &mut [0i64; 3], ReduceOp::Sum),
        Status::InvalidArgument,
        "reduce_scatter",
    );
    assert_error(
        comm.alltoall(&[1u8, 2], &mut [0u8; 3]),
        Status::InvalidArgument,
        "alltoall",
    );
    assert_error(
        comm.iallreduce(&[1f64], &mut [0f64; 2], ReduceOp::Sum),
        Status::InvalidArgument,
        "allreduce",
    );
    // A refused call changes nothing and leaves the communicator usable.
    assert_eq!(short, [0.0, 0.0]);
    comm.barrier().unwrap();
}

#[test]
fn avg_needs_floating_point() {
    let comm = common::world();
    let mut recv = [0i32; 2];
    assert_error(
        comm.allreduce(&[1i32, 2], &mut recv, ReduceOp::Avg),
        Status::InvalidArgument,
        "DT_AVG",
    );
    let mut buf = [1u8; 2];
    assert_error(
        comm.allreduce_in_place(&mut buf, ReduceOp::Avg),
        Status::InvalidArgument,
        "uint8",
    );
}

#[test]
fn peers_roots_and_tags_are_checked() {
    let comm = common::world();
    let mut buf = [0f32; 2];
    assert_error(comm.send(&buf, 1, 0), Status::InvalidArgument, "peer 1");
    assert_error(
        comm.recv(&mut buf, -1, 0),
        Status::InvalidArgument,
        "peer -1",
    );
    assert_error(comm.isend(&buf, 3, 0), Status::InvalidArgument, "peer 3");
    assert_error(comm.send(&buf, 0, -2), Status::InvalidArgument, "tag -2");
    assert_error(
        comm.broadcast(&mut buf, 1),
        Status::InvalidArgument,
        "root 1",
    );
    comm.barrier().unwrap();
}

#[test]
fn alltoallv_counts_are_checked() {
    let comm = common::world();
    let send = [1f32; 4];
    let mut recv = [0f32; 4];
    assert_error(
        comm.alltoallv(&send, &[1, 1], &mut recv, &[1]),
        Status::InvalidArgument,
        "send_counts has 2 entries",
    );
    assert_error(
        comm.alltoallv(&send, &[5], &mut recv, &[4]),
        Status::InvalidArgument,
        "send_counts",
    );
    assert_error(
        comm.alltoallv(&send, &[-1], &mut recv, &[1]),
        Status::InvalidArgument,
        "negative",
    );
    assert_error(
        comm.alltoallv(&send, &[2], &mut recv, &[3]),
        Status::Mismatch,
        "alltoallv",
    );
}

#[test]
fn bad_options_are_refused() {
    let with = |options: Options| Comm::with_options(&options).map(|_| ());
    let one = Options {
        rank: Some(0),
        world_size: Some(1),
        ..Options::default()
    };
    assert_error(
        with(Options {
            timeout_ms: Some(0),
            ..one.clone()
        }),
        Status::InvalidArgument,
        "timeout_ms",
    );
    assert_error(
        with(Options {
            rank: Some(1),
            ..one.clone()
        }),
        Status::InvalidArgument,
        "rank",
    );
    assert_error(
        with(Options {
            store: Some("a\0b".into()),
            ..one.clone()
        }),
        Status::InvalidArgument,
        "NUL",
    );
    assert_error(
        with(Options {
            backend: Backend::Nccl,
            ..one.clone()
        }),
        Status::Unsupported,
        "NCCL",
    );
    // More than one rank with no store to meet at (this test runs without
    // dtrun, so DTRAIN_STORE and MASTER_ADDR are unset).
    assert_error(
        with(Options {
            world_size: Some(2),
            rank: Some(1),
            ..one
        }),
        Status::InvalidArgument,
        "needs a rendezvous",
    );
}

#[test]
fn errors_describe_themselves() {
    let comm = common::world();
    let error = comm.send(&[0u8], 9, 0).unwrap_err();
    assert_eq!(error_last(), error.message);
    let text = error.to_string();
    assert!(
        text.starts_with(status_string(Status::InvalidArgument)),
        "{text}"
    );
    assert!(text.contains("peer 9"), "{text}");
    let as_std: Box<dyn std::error::Error> = Box::new(error);
    assert!(as_std.to_string().contains("peer 9"));
    assert_eq!(
        Error::new(Status::Timeout, "").to_string(),
        status_string(Status::Timeout)
    );
}

#[test]
fn statuses_mirror_the_c_values() {
    use dtrain::sys;
    for (status, raw) in [
        (Status::Ok, sys::DT_OK),
        (Status::InProgress, sys::DT_INPROGRESS),
        (Status::InvalidArgument, sys::DT_ERR_INVALID_ARGUMENT),
        (Status::InvalidUsage, sys::DT_ERR_INVALID_USAGE),
        (Status::Unsupported, sys::DT_ERR_UNSUPPORTED),
        (Status::OutOfMemory, sys::DT_ERR_OUT_OF_MEMORY),
        (Status::Timeout, sys::DT_ERR_TIMEOUT),
        (Status::Remote, sys::DT_ERR_REMOTE),
        (Status::Transport, sys::DT_ERR_TRANSPORT),
        (Status::Aborted, sys::DT_ERR_ABORTED),
        (Status::Auth, sys::DT_ERR_AUTH),
        (Status::Mismatch, sys::DT_ERR_MISMATCH),
        (Status::Internal, sys::DT_ERR_INTERNAL),
        (Status::Io, sys::DT_ERR_IO),
    ] {
        assert_eq!(status.to_raw(), raw);
        assert_eq!(Status::from_raw(raw), status);
        assert_eq!(status.is_error(), raw < 0);
        assert_ne!(status_string(status), "unknown status");
    }
    assert_eq!(Status::from_raw(-1000), Status::Internal);
    assert_eq!(status_string(Status::InvalidArgument), "invalid argument");
}
