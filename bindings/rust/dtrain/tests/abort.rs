//! Abort from another thread, timeouts, and the broken state that follows.

mod common;

use std::thread;
use std::time::{Duration, Instant};

use common::assert_error;
use dtrain::{AbortHandle, Comm, ReduceOp, Status};

#[test]
fn handles_have_the_documented_traits() {
    fn send<T: Send>() {}
    fn send_sync_clone<T: Send + Sync + Clone>() {}
    send::<Comm<'static>>();
    send_sync_clone::<AbortHandle<'static>>();
}

#[test]
fn abort_from_another_thread_ends_a_blocking_recv() {
    let comm = common::world();
    let handle = comm.abort_handle();
    let mut inbox = [0f32; 4];
    thread::scope(|s| {
        s.spawn(move || {
            thread::sleep(Duration::from_millis(100));
            handle.abort().unwrap();
        });
        assert_error(comm.recv(&mut inbox, 0, 1), Status::Aborted, "abort");
    });
    assert_error(comm.barrier(), Status::Aborted, "broken");
}

#[test]
fn abort_from_another_thread_ends_a_pending_request() {
    let comm = common::world();
    let handle = comm.abort_handle();
    let mut inbox = [0i64; 2];
    let recv = comm.irecv(&mut inbox, 0, 2).unwrap();
    thread::scope(|s| {
        s.spawn(move || handle.abort().unwrap());
    });
    assert_error(recv.wait(-1), Status::Aborted, "aborted");
}

#[test]
fn a_recv_past_its_deadline_times_out_and_breaks_the_communicator() {
    let comm = common::world_with_timeout(Some(200));
    let mut inbox = [0u8; 8];
    let started = Instant::now();
    assert_error(comm.recv(&mut inbox, 0, 9), Status::Timeout, "200 ms");
    assert!(started.elapsed() >= Duration::from_millis(150));
    assert_error(comm.barrier(), Status::Aborted, "broken");
    assert_error(
        comm.allreduce_in_place(&mut inbox, ReduceOp::Sum),
        Status::Aborted,
        "broken",
    );
    assert_error(comm.send(&inbox, 0, 0), Status::Aborted, "broken");
}

#[test]
fn waiting_with_a_short_timeout_times_out() {
    let comm = common::world();
    let mut inbox = [0f32; 1];
    let recv = comm.irecv(&mut inbox, 0, 4).unwrap();
    assert_error(recv.wait(50), Status::Timeout, "50 ms");
    assert_error(comm.barrier(), Status::Aborted, "broken");
}

#[test]
fn abort_on_the_owning_thread() {
    let comm = common::world();
    comm.abort().unwrap();
    assert_error(
        comm.allreduce(&[1f32], &mut [0f32], ReduceOp::Sum),
        Status::Aborted,
        "dt_comm_abort",
    );
}
