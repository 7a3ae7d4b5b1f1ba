//! The device mesh on a world of one: queries, a communicator per dimension
//! that outlives the mesh, and refusals.

mod common;

use dtrain::{Mesh, ReduceOp, Status, CUSTOMARY_DIMS};

#[test]
fn customary_dimensions_infer_dp() {
    let comm = common::world();
    let mesh = Mesh::customary(&comm, [Some(1), Some(1), Some(1), None, Some(1)]).unwrap();
    assert_eq!(mesh.ndims().unwrap(), 5);
    for (d, name) in CUSTOMARY_DIMS.iter().enumerate() {
        assert_eq!(mesh.dim_name(d as i32).unwrap(), *name);
        assert_eq!(mesh.dim_index(name).unwrap(), d as i32);
        assert_eq!(mesh.dim_size(name).unwrap(), 1);
        assert_eq!(mesh.coord(name).unwrap(), 0);
    }
    assert_eq!((mesh.size().unwrap(), mesh.rank().unwrap()), (1, 0));
    assert_eq!(mesh.coords_of(0).unwrap(), vec![0; 5]);
    assert_eq!(mesh.rank_at(&[0; 5]).unwrap(), 0);
    assert_eq!(mesh.group_ranks("dp,cp").unwrap(), vec![0]);
}

#[test]
fn a_dimension_communicator_works_after_the_mesh_is_gone() {
    let comm = common::world();
    let mut mesh = Mesh::new(&comm, &[("tp", Some(1)), ("dp", None)]).unwrap();
    let dp = mesh.comm("dp").unwrap();
    drop(mesh);
    let mut data = [1.0f32, 2.0, 3.0];
    dp.allreduce_in_place(&mut data, ReduceOp::Sum).unwrap();
    assert_eq!(data, [1.0, 2.0, 3.0]);
}

#[test]
fn bad_shapes_and_names_are_refused() {
    let comm = common::world();
    let err = Mesh::new(&comm, &[("tp", Some(2))]).err().unwrap();
    assert_eq!(err.status, Status::InvalidArgument);
    assert!(err.message.contains("has 2 ranks but the communicator has 1"), "{}", err.message);
    let err = Mesh::new(&comm, &[("tp", Some(1)), ("tp", Some(1))]).err().unwrap();
    assert_eq!(err.status, Status::InvalidArgument);
    let mut mesh = Mesh::new(&comm, &[("dp", Some(1))]).unwrap();
    assert_eq!(mesh.comm("pp").err().unwrap().status, Status::InvalidArgument);
    assert_eq!(mesh.rank_at(&[1]).err().unwrap().status, Status::InvalidArgument);
    assert_eq!(mesh.coords_of(1).err().unwrap().status, Status::InvalidArgument);
}
