//! Tensor parallelism on a world of one (tp = 1): each call against the dense math.

mod common;

use dtrain::tp::{self, Matrix, MatrixMut, Region, ShardKind, TpFlags};
use dtrain::Status;

fn close(a: &[f32], b: &[f32]) -> bool {
    a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-5 * (1.0 + y.abs()))
}

#[test]
fn column_and_row_layers_match_the_dense_products() {
    let comm = common::world();
    // x [2, 3], w [2, 3]: y = x w^T + b
    let x = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let w = [1.0f32, 0.0, -1.0, 0.5, 0.5, 0.5];
    let b = [0.25f32, -0.25];
    let mut y = [0.0f32; 4];
    tp::column_linear_forward(&comm, Matrix::new(&x, 3).unwrap(), Matrix::new(&w, 3).unwrap(), Some(&b),
                              MatrixMut::new(&mut y, 2).unwrap(), TpFlags::default()).unwrap();
    assert!(close(&y, &[-2.0 + 0.25, 3.0 - 0.25, -2.0 + 0.25, 7.5 - 0.25]), "{y:?}");
    let mut row_y = [0.0f32; 4];
    tp::row_linear_forward(&comm, Matrix::new(&x, 3).unwrap(), Matrix::new(&w, 3).unwrap(), None,
                           MatrixMut::new(&mut row_y, 2).unwrap(), TpFlags::default()).unwrap();
    assert!(close(&row_y, &[-2.0, 3.0, -2.0, 7.5]), "{row_y:?}");
    // dW = dy^T x with dy = ones: column sums of x for each output.
    let dy = [1.0f32; 4];
    let (mut dx, mut dw, mut db) = ([0.0f32; 6], [0.0f32; 6], [0.0f32; 2]);
    tp::column_linear_backward(&comm, Matrix::new(&x, 3).unwrap(), Matrix::new(&w, 3).unwrap(),
                               Matrix::new(&dy, 2).unwrap(), Some(MatrixMut::new(&mut dx, 3).unwrap()),
                               Some(MatrixMut::new(&mut dw, 3).unwrap()), Some(&mut db), TpFlags::default()).unwrap();
    assert!(close(&dw, &[5.0, 7.0, 9.0, 5.0, 7.0, 9.0]), "{dw:?}");
    assert!(close(&dx, &[1.5, 0.5, -0.5, 1.5, 0.5, -0.5]), "{dx:?}");
    assert!(close(&db, &[2.0, 2.0]));
    let (mut dx_row, mut dw_row) = ([0.0f32; 6], [0.0f32; 6]);
    tp::row_linear_backward(&comm, Matrix::new(&x, 3).unwrap(), Matrix::new(&w, 3).unwrap(),
                            Matrix::new(&dy, 2).unwrap(), Some(MatrixMut::new(&mut dx_row, 3).unwrap()),
                            Some(MatrixMut::new(&mut dw_row, 3).unwrap()), None, TpFlags::default()).unwrap();
    assert!(close(&dw_row, &dw));
    // The zero-bubble halves: the input gradient alone, then the weight's alone.
    let (mut dx_half, mut dw_half) = ([0.0f32; 6], [0.0f32; 6]);
    tp::row_linear_backward(&comm, Matrix::new(&x, 3).unwrap(), Matrix::new(&w, 3).unwrap(),
                            Matrix::new(&dy, 2).unwrap(), Some(MatrixMut::new(&mut dx_half, 3).unwrap()),
                            None, None, TpFlags::default()).unwrap();
    tp::row_linear_backward(&comm, Matrix::new(&x, 3).unwrap(), Matrix::new(&w, 3).unwrap(),
                            Matrix::new(&dy, 2).unwrap(), None, Some(MatrixMut::new(&mut dw_half, 3).unwrap()),
                            None, TpFlags::default()).unwrap();
    assert!(close(&dx_half, &dx_row) && close(&dw_half, &dw_row));
}

#[test]
fn embedding_cross_entropy_mappings_and_shards() {
    let comm = common::world();
    let table = [0.0f32, 1.0, 10.0, 11.0, 20.0, 21.0];
    let mut out = [0.0f32; 4];
    tp::embedding_forward(&comm, Matrix::new(&table, 2).unwrap(), &[2, 0], MatrixMut::new(&mut out, 2).unwrap(),
                          TpFlags::default()).unwrap();
    assert_eq!(out, [20.0, 21.0, 0.0, 1.0]);
    let mut dtable = [9.0f32; 6];
    tp::embedding_backward(&comm, &[2, 2], Matrix::new(&[1.0f32; 4], 2).unwrap(),
                           MatrixMut::new(&mut dtable, 2).unwrap(), TpFlags::default()).unwrap();
    assert_eq!(dtable, [0.0, 0.0, 0.0, 0.0, 2.0, 2.0]);

    let logits = [0.0f32, 0.0, 0.0, 0.0];
    let (mut loss, mut lse) = ([0.0f32; 2], [0.0f32; 2]);
    tp::cross_entropy_forward(&comm, Matrix::new(&logits, 2).unwrap(), &[1, -100], &mut loss, &mut lse, 0.0, -100)
        .unwrap();
    assert!(close(&loss, &[2.0f32.ln(), 0.0]) && close(&lse, &[2.0f32.ln(); 2]));
    let mut dlogits = [0.0f32; 4];
    tp::cross_entropy_backward(&comm, Matrix::new(&logits, 2).unwrap(), &[1, -100], &lse, &[1.0, 1.0],
                               MatrixMut::new(&mut dlogits, 2).unwrap(), 0.0, -100).unwrap();
    assert!(close(&dlogits, &[0.5, -0.5, 0.0, 0.0]), "{dlogits:?}");

    let a = [1.0f32, 2.0, 3.0, 4.0];
    let mut b = [0.0f32; 4];
    tp::region_forward(&comm, Region::Reduce, Matrix::new(&a, 2).unwrap(), MatrixMut::new(&mut b, 2).unwrap()).unwrap();
    assert_eq!(a, b);
    tp::region_backward(&comm, Region::Copy, Matrix::new(&a, 2).unwrap(), MatrixMut::new(&mut b, 2).unwrap()).unwrap();
    assert_eq!(a, b);
    let mut local = [0.0f32; 4];
    tp::shard(ShardKind::Qkv, Matrix::new(&a, 1).unwrap(), MatrixMut::new(&mut local, 1).unwrap(), 0, 1, (2, 1)).unwrap();
    assert_eq!(local, a);
    let mut whole = [0.0f32; 4];
    tp::unshard(&comm, ShardKind::Columns, Matrix::new(&a, 2).unwrap(), MatrixMut::new(&mut whole, 2).unwrap(), (0, 0))
        .unwrap();
    assert_eq!(whole, a);
}

#[test]
fn bad_shapes_are_refused() {
    let comm = common::world();
    assert_eq!(Matrix::new(&[1.0f32; 5], 2).err().unwrap().status, Status::InvalidArgument);
    let mut y = [0.0f32; 6];
    let err = tp::column_linear_forward(&comm, Matrix::new(&[1.0f32; 4], 2).unwrap(), Matrix::new(&[1.0f32; 4], 2).unwrap(),
                                        None, MatrixMut::new(&mut y, 3).unwrap(), TpFlags::default()).err().unwrap();
    assert_eq!(err.status, Status::InvalidArgument);
}
