//! Communicator creation, queries, split, versions and tensor checks.

mod common;

use dtrain::{build_info, tensor_check, version, Comm, ReduceOp, Status, F16, HEADER_VERSION};

#[test]
fn a_world_of_one() {
    let comm = common::world();
    assert_eq!(comm.rank().unwrap(), 0);
    assert_eq!(comm.size().unwrap(), 1);
}

#[test]
fn new_reads_the_environment() {
    let launcher_vars = [
        "DTRAIN_RANK",
        "DTRAIN_WORLD_SIZE",
        "RANK",
        "WORLD_SIZE",
        "OMPI_COMM_WORLD_SIZE",
        "PMI_SIZE",
        "SLURM_NTASKS",
    ];
    if let Some(var) = launcher_vars.iter().find(|v| std::env::var_os(v).is_some()) {
        eprintln!("skipped: {var} is set, so Comm::new() would not make a world of one");
        return;
    }
    let comm = Comm::new().unwrap();
    assert_eq!(comm.size().unwrap(), 1);
}

#[test]
fn split_makes_a_child_that_works() {
    let comm = common::world();
    {
        let child = comm
            .split(Some(3), 0)
            .unwrap()
            .expect("color 3 includes this rank");
        assert_eq!((child.rank().unwrap(), child.size().unwrap()), (0, 1));
        let mut buf = [F16::from_f32(2.0)];
        child.allreduce_in_place(&mut buf, ReduceOp::Sum).unwrap();
        assert_eq!(buf[0].to_f32(), 2.0);
        let grandchild = child.split(Some(0), 5).unwrap().unwrap();
        grandchild.barrier().unwrap();
    }
    assert!(
        comm.split(None, 0).unwrap().is_none(),
        "no color leaves this rank out"
    );
    common::assert_error(comm.split(Some(-2), 0), Status::InvalidArgument, "color -2");
    comm.barrier().unwrap();
}

#[test]
fn a_child_survives_aborting_its_sibling() {
    let comm = common::world();
    let a = comm.split(Some(0), 0).unwrap().unwrap();
    let b = comm.split(Some(1), 0).unwrap().unwrap();
    a.abort().unwrap();
    common::assert_error(a.barrier(), Status::Aborted, "broken");
    b.barrier().unwrap();
    comm.barrier().unwrap();
}

#[test]
fn versions_and_build_info() {
    assert_eq!(version(), HEADER_VERSION);
    assert_eq!(
        version().to_string(),
        format!(
            "{}.{}.{}",
            HEADER_VERSION.major, HEADER_VERSION.minor, HEADER_VERSION.patch
        )
    );
    assert!(build_info().starts_with("libdtrain "), "{}", build_info());
}

#[test]
fn slices_are_valid_tensors() {
    assert_eq!(tensor_check(&[1f32, 2.0, 3.0]).unwrap(), 3);
    assert_eq!(tensor_check::<u8>(&[]).unwrap(), 0);
    assert_eq!(tensor_check(&[F16::default(); 7]).unwrap(), 7);
}

#[test]
fn a_comm_moved_to_another_thread_works_there_once_bound() {
    let comm = common::world();
    let comm = std::thread::spawn(move || {
        let mut x = [1.0f32, 2.0];
        common::assert_error(
            comm.allreduce_in_place(&mut x, ReduceOp::Sum),
            Status::InvalidUsage,
            "thread other than the communicator's",
        );
        assert_eq!(x, [1.0, 2.0]);
        comm.bind_thread(true).unwrap();
        comm.allreduce_in_place(&mut x, ReduceOp::Sum).unwrap();
        comm
    })
    .join()
    .unwrap();
    // Back on the creating thread, which must bind it again, or unbind it.
    common::assert_error(comm.barrier(), Status::InvalidUsage, "dt_comm_bind_thread");
    comm.bind_thread(false).unwrap();
    comm.barrier().unwrap();
}
