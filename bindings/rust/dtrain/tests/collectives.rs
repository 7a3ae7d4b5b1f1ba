//! Every blocking collective on a world of one, over every element type.

mod common;

use dtrain::{Bf16, Element, ReduceOp, F16};

/// `n` distinct values of `T`, built from small integers.
fn values<T: Element>(n: usize, from: impl Fn(u8) -> T) -> Vec<T> {
    (0..n).map(|i| from(i as u8 + 1)).collect()
}

fn check_all<T: Element + PartialEq + std::fmt::Debug + Default>(
    from: impl Fn(u8) -> T,
    ops: &[ReduceOp],
) {
    let comm = common::world();
    let send = values(6, &from);

    for &op in ops {
        let mut recv = vec![T::default(); 6];
        comm.allreduce(&send, &mut recv, op).unwrap();
        assert_eq!(recv, send, "allreduce {op:?}");

        let mut buf = send.clone();
        comm.allreduce_in_place(&mut buf, op).unwrap();
        assert_eq!(buf, send, "allreduce_in_place {op:?}");

        let mut block = vec![T::default(); 6];
        comm.reduce_scatter(&send, &mut block, op).unwrap();
        assert_eq!(block, send, "reduce_scatter {op:?}");
    }

    let mut gathered = vec![T::default(); 6];
    comm.allgather(&send, &mut gathered).unwrap();
    assert_eq!(gathered, send);

    let mut buf = send.clone();
    comm.broadcast(&mut buf, 0).unwrap();
    assert_eq!(buf, send);

    let mut exchanged = vec![T::default(); 6];
    comm.alltoall(&send, &mut exchanged).unwrap();
    assert_eq!(exchanged, send);

    // Four elements to ourselves; the rest of recv is left alone.
    let mut partial = vec![T::default(); 6];
    comm.alltoallv(&send, &[4], &mut partial, &[4]).unwrap();
    assert_eq!(&partial[..4], &send[..4]);
    assert_eq!(&partial[4..], &[T::default(), T::default()]);

    comm.barrier().unwrap();
}

const ALL_OPS: [ReduceOp; 5] = [
    ReduceOp::Sum,
    ReduceOp::Avg,
    ReduceOp::Max,
    ReduceOp::Min,
    ReduceOp::Prod,
];
const INTEGER_OPS: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod];

#[test]
fn f32_collectives() {
    check_all(|v| v as f32 * 0.5, &ALL_OPS);
}

#[test]
fn f64_collectives() {
    check_all(|v| -(v as f64) / 3.0, &ALL_OPS);
}

#[test]
fn f16_collectives() {
    check_all(|v| F16::from_f32(v as f32 * 0.25), &ALL_OPS);
}

#[test]
fn bf16_collectives() {
    check_all(|v| Bf16::from_f32(v as f32 * 1.5), &ALL_OPS);
}

#[test]
fn i32_collectives() {
    check_all(|v| v as i32 * -7, &INTEGER_OPS);
}

#[test]
fn i64_collectives() {
    check_all(|v| v as i64 * 1_000_000_000_000, &INTEGER_OPS);
}

#[test]
fn i8_collectives() {
    check_all(|v| -(v as i8), &INTEGER_OPS);
}

#[test]
fn u8_collectives() {
    check_all(|v| v * 40, &INTEGER_OPS);
}

#[test]
fn empty_slices_are_fine() {
    let comm = common::world();
    let mut empty: [f32; 0] = [];
    comm.allreduce(&[], &mut empty, ReduceOp::Sum).unwrap();
    comm.broadcast(&mut empty, 0).unwrap();
}
