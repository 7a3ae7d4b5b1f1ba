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

    for &op in ops {
        let mut reduced = vec![T::default(); 6];
        comm.reduce(&send, Some(&mut reduced), op, 0).unwrap();
        assert_eq!(reduced, send, "reduce {op:?}");

        // Five elements of the block; the sixth of recv is left alone.
        let mut block = vec![T::default(); 5];
        comm.reduce_scatterv(&send, &[5], &mut block, op).unwrap();
        assert_eq!(&block[..], &send[..5], "reduce_scatterv {op:?}");
    }

    let mut gathered_to_root = vec![T::default(); 6];
    comm.gather(&send, Some(&mut gathered_to_root), 0).unwrap();
    assert_eq!(gathered_to_root, send);

    let mut scattered = vec![T::default(); 6];
    comm.scatter(Some(&send), &mut scattered, 0).unwrap();
    assert_eq!(scattered, send);

    let mut uneven = vec![T::default(); 6];
    comm.allgatherv(&send[..4], &mut uneven, &[4]).unwrap();
    assert_eq!(&uneven[..4], &send[..4]);
    assert_eq!(&uneven[4..], &[T::default(), T::default()]);

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

#[test]
fn rooted_collectives_refuse_bad_arguments() {
    let comm = common::world();
    let send = [1.0f32; 4];
    let mut recv = [0.0f32; 4];
    common::assert_error(
        comm.gather(&send, Some(&mut recv), 1),
        dtrain::Status::InvalidArgument,
        "root 1 is not a rank",
    );
    common::assert_error(
        comm.allgatherv(&send, &mut recv, &[4, 4]),
        dtrain::Status::InvalidArgument,
        "recv_counts has 2 entries",
    );
    common::assert_error(
        comm.reduce(&send, None, ReduceOp::Sum, 0),
        dtrain::Status::InvalidArgument,
        "recv",
    );
    let request = comm
        .ireduce_scatterv(&send, &[4], &mut recv, ReduceOp::Max)
        .unwrap();
    request.wait(-1).unwrap();
}
