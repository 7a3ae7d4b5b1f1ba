//! Non-blocking collectives and point-to-point: requests, wait, test, drop.

mod common;

use dtrain::{ReduceOp, F16};

#[test]
fn every_nonblocking_collective_completes() {
    let comm = common::world();
    let send = [1.0f32, 2.0, 3.0, 4.0];

    let mut recv = [0.0f32; 4];
    comm.iallreduce(&send, &mut recv, ReduceOp::Sum)
        .unwrap()
        .wait(-1)
        .unwrap();
    assert_eq!(recv, send);

    let mut buf = send;
    comm.iallreduce_in_place(&mut buf, ReduceOp::Max)
        .unwrap()
        .wait(-1)
        .unwrap();
    assert_eq!(buf, send);

    let mut block = [0.0f32; 4];
    comm.ireduce_scatter(&send, &mut block, ReduceOp::Avg)
        .unwrap()
        .wait(1000)
        .unwrap();
    assert_eq!(block, send);

    let mut gathered = [0.0f32; 4];
    comm.iallgather(&send, &mut gathered)
        .unwrap()
        .wait(-1)
        .unwrap();
    assert_eq!(gathered, send);

    let mut root_buf = send;
    comm.ibroadcast(&mut root_buf, 0).unwrap().wait(-1).unwrap();
    assert_eq!(root_buf, send);

    let mut exchanged = [0.0f32; 4];
    comm.ialltoall(&send, &mut exchanged)
        .unwrap()
        .wait(-1)
        .unwrap();
    assert_eq!(exchanged, send);

    let mut partial = [0.0f32; 4];
    comm.ialltoallv(&send, &[3], &mut partial, &[3])
        .unwrap()
        .wait(-1)
        .unwrap();
    assert_eq!(partial, [1.0, 2.0, 3.0, 0.0]);
}

#[test]
fn several_requests_in_flight() {
    let comm = common::world();
    let a = [1i64, 2, 3];
    let b = [F16::from_f32(0.5), F16::from_f32(-1.0)];
    let mut ra = [0i64; 3];
    let mut rb = [F16::default(); 2];
    let first = comm.iallreduce(&a, &mut ra, ReduceOp::Sum).unwrap();
    let second = comm.iallgather(&b, &mut rb).unwrap();
    second.wait(-1).unwrap();
    first.wait(-1).unwrap();
    assert_eq!(ra, a);
    assert_eq!(rb, b);
}

#[test]
fn test_reports_progress_of_a_posted_recv() {
    let comm = common::world();
    let message = [7u8, 8, 9];
    let mut inbox = [0u8; 3];
    let mut recv = comm.irecv(&mut inbox, 0, 3).unwrap();
    assert!(!recv.test().unwrap(), "nothing was sent yet");
    comm.isend(&message, 0, 3).unwrap().wait(-1).unwrap();
    assert!(recv.test().unwrap());
    recv.wait(0).unwrap();
    assert_eq!(inbox, message);
}

#[test]
fn dropping_a_finished_request_releases_it() {
    let comm = common::world();
    let send = [3i32; 5];
    let mut recv = [0i32; 5];
    drop(comm.iallreduce(&send, &mut recv, ReduceOp::Min).unwrap());
    assert_eq!(recv, send);
}

#[test]
fn dropping_an_unfinished_request_waits_for_the_deadline() {
    let comm = common::world_with_timeout(Some(200));
    let mut inbox = [0f64; 2];
    let started = std::time::Instant::now();
    drop(comm.irecv(&mut inbox, 0, 1).unwrap());
    assert!(started.elapsed() >= std::time::Duration::from_millis(150));
    // The deadline broke the communicator.
    common::assert_error(comm.barrier(), dtrain::Status::Aborted, "broken");
}
