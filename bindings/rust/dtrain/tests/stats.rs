//! `Comm::stats` on a world of one: finished operations counted by kind.

mod common;

use dtrain::{OpKind, ReduceOp};

#[test]
fn counts_finished_operations() {
    let comm = common::world();
    let send = vec![1.0f32; 10];
    let mut recv = vec![0.0f32; 10];
    for _ in 0..3 {
        comm.allreduce(&send, &mut recv, ReduceOp::Sum).unwrap();
    }
    comm.barrier().unwrap();
    let allreduce = comm.stats(OpKind::Allreduce).unwrap();
    assert_eq!(allreduce.count, 3);
    assert_eq!(allreduce.bytes, 120);
    assert_eq!(allreduce.failed, 0);
    assert_eq!(comm.stats(OpKind::Barrier).unwrap().count, 1);
    assert_eq!(comm.stats(OpKind::All).unwrap().count, 4);
    assert_eq!(comm.stats(OpKind::Send).unwrap().count, 0);
}
