//! Send and receive to oneself, matched by tag.

mod common;

use dtrain::{Bf16, P2pOp, Status};

#[test]
fn blocking_send_then_recv() {
    let comm = common::world();
    let message = [1.5f32, -2.0, 8.25];
    comm.send(&message, 0, 0).unwrap();
    let mut inbox = [0f32; 3];
    comm.recv(&mut inbox, 0, 0).unwrap();
    assert_eq!(inbox, message);
}

#[test]
fn tags_select_the_message() {
    let comm = common::world();
    comm.send(&[1i32, 1], 0, 10).unwrap();
    comm.send(&[2i32, 2], 0, 20).unwrap();
    comm.send(&[3i32, 3], 0, 10).unwrap();

    let mut inbox = [0i32; 2];
    comm.recv(&mut inbox, 0, 20).unwrap();
    assert_eq!(inbox, [2, 2]);
    // One tag keeps its order.
    comm.recv(&mut inbox, 0, 10).unwrap();
    assert_eq!(inbox, [1, 1]);
    comm.recv(&mut inbox, 0, 10).unwrap();
    assert_eq!(inbox, [3, 3]);
}

#[test]
fn posted_recv_is_matched_by_a_later_send() {
    let comm = common::world();
    let message = [Bf16::from_f32(3.0), Bf16::from_f32(-0.5)];
    let mut inbox = [Bf16::default(); 2];
    let recv = comm.irecv(&mut inbox, 0, 5).unwrap();
    let send = comm.isend(&message, 0, 5).unwrap();
    send.wait(-1).unwrap();
    recv.wait(-1).unwrap();
    assert_eq!(inbox, message);
}

#[test]
fn a_message_of_another_size_is_a_mismatch() {
    let comm = common::world();
    comm.send(&[1u8, 2, 3], 0, 4).unwrap();
    let mut inbox = [0u8; 2];
    common::assert_error(
        comm.recv(&mut inbox, 0, 4),
        Status::Mismatch,
        "matched a send of 3",
    );
}

#[test]
fn a_group_posts_every_op_before_waiting() {
    let comm = common::world();
    let out_a = [1.0f32, 2.0, 3.0];
    let out_b = [4.0f32, 5.0];
    let mut in_a = [0f32; 3];
    let mut in_b = [0f32; 2];
    // Receives listed before the sends they match.
    comm.p2p_group(vec![
        P2pOp::Recv {
            buf: &mut in_a,
            peer: 0,
            tag: 1,
        },
        P2pOp::Recv {
            buf: &mut in_b,
            peer: 0,
            tag: 2,
        },
        P2pOp::Send {
            buf: &out_b,
            peer: 0,
            tag: 2,
        },
        P2pOp::Send {
            buf: &out_a,
            peer: 0,
            tag: 1,
        },
    ])
    .unwrap();
    assert_eq!(in_a, out_a);
    assert_eq!(in_b, out_b);
}

#[test]
fn a_group_with_a_bad_op_starts_nothing() {
    let comm = common::world();
    let out = [7i64; 2];
    let mut inbox = [0i64; 2];
    common::assert_error(
        comm.p2p_group(vec![
            P2pOp::Send {
                buf: &out,
                peer: 0,
                tag: 3,
            },
            P2pOp::Recv {
                buf: &mut inbox,
                peer: 1,
                tag: 3,
            },
        ]),
        Status::InvalidArgument,
        "ops[1].peer",
    );
    common::assert_error(
        comm.p2p_group::<i64>(Vec::new()),
        Status::InvalidArgument,
        "at least one op",
    );
    let request = comm
        .ip2p_group(vec![
            P2pOp::Send {
                buf: &[9i64, 9],
                peer: 0,
                tag: 3,
            },
            P2pOp::Recv {
                buf: &mut inbox,
                peer: 0,
                tag: 3,
            },
        ])
        .unwrap();
    request.wait(-1).unwrap();
    assert_eq!(
        inbox,
        [9, 9],
        "the refused group sent nothing that got here first"
    );
}
