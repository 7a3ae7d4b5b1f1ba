//! Ddp and broadcast_parameters on a world of one: steps, buckets,
//! accumulation, weights, refused input and the borrows (the allranks
//! example checks them across ranks).

mod common;

use dtrain::{
    broadcast_parameters, BucketState, Compression, Ddp, DdpOptions, Optimizer, OptimizerKind,
    OptimizerOptions, Status, F16,
};

use common::assert_error;

#[test]
fn a_step_leaves_the_gradients_of_a_world_of_one() {
    let comm = common::world();
    let (mut w, mut b, mut c) = (vec![0.0f32; 6], vec![0.0f32; 4], vec![0.0f32; 5]);
    let options = DdpOptions {
        bucket_bytes: Some(16),
        ..DdpOptions::default()
    };
    {
        let mut ddp = Ddp::new(&comm, vec![&mut w[..], &mut b[..], &mut c[..]], &options).unwrap();
        assert_eq!(ddp.len(), 3);
        assert!(ddp.sync());
        assert_eq!(ddp.bucket_count().unwrap(), 3);
        // Reverse registration order: the last gradient's bucket starts first.
        let buckets: Vec<usize> = (0..3).map(|i| ddp.bucket_of(i).unwrap()).collect();
        assert_eq!(buckets, [2, 1, 0]);
        for step in 0..3 {
            assert_eq!(ddp.bucket_state(0).unwrap(), BucketState::Waiting);
            for i in (0..3).rev() {
                // The trainer writes gradient i, then marks it.
                ddp.grad_mut(i).fill((step * 10 + i) as f32);
                ddp.mark_ready(i).unwrap();
            }
            let state = ddp.bucket_state(0).unwrap();
            assert!(
                matches!(state, BucketState::InFlight | BucketState::Reduced),
                "{state:?}"
            );
            ddp.wait(-1).unwrap();
            for i in 0..3 {
                assert!(ddp.grad(i).iter().all(|&x| x == (step * 10 + i) as f32));
            }
        }
    }
    // The borrows end with the DDP.
    assert_eq!(c, [22.0; 5]);
    assert_eq!(w, [20.0; 6]);
}

#[test]
fn no_sync_accumulates_and_restores_the_setting() {
    let comm = common::world();
    let mut g = [0.0f64; 3];
    let mut ddp = Ddp::new(&comm, vec![&mut g[..]], &DdpOptions::default()).unwrap();
    let marked = ddp
        .no_sync(|ddp| {
            assert!(!ddp.sync());
            ddp.grad_mut(0).fill(1.0);
            ddp.mark_ready(0).unwrap();
            ddp.mark_ready(0).unwrap(); // nothing happens with sync off
            ddp.wait(-1).unwrap();
            7
        })
        .unwrap();
    assert_eq!(marked, 7);
    assert!(ddp.sync());
    ddp.grad_mut(0).iter_mut().for_each(|x| *x += 1.0);
    ddp.mark_ready(0).unwrap();
    assert_error(ddp.set_sync(false), Status::InvalidUsage, "in progress");
    assert!(ddp.sync());
    ddp.wait(10_000).unwrap();
    assert_eq!(ddp.grad(0), &[2.0; 3]);
}

#[test]
fn misuse_gives_the_documented_errors() {
    let comm = common::world();
    let (mut a, mut b) = (vec![1.0f32; 2], vec![2.0f32; 3]);
    let mut ddp = Ddp::new(&comm, vec![&mut a[..], &mut b[..]], &DdpOptions::default()).unwrap();
    ddp.mark_ready(1).unwrap();
    assert_error(ddp.mark_ready(1), Status::InvalidUsage, "already marked");
    assert_error(
        ddp.mark_ready(2),
        Status::InvalidArgument,
        "gradient 2 is out of range",
    );
    assert_error(
        ddp.wait(-1),
        Status::InvalidUsage,
        "gradient 0 was never marked",
    );
    assert_eq!(ddp.grad(1), &[2.0; 3]);
    assert_error(ddp.bucket_of(2), Status::InvalidArgument, "out of range");
    assert_error(
        ddp.bucket_state(1),
        Status::InvalidArgument,
        "bucket 1 is out of range",
    );
    assert_error(ddp.set_local_weight(2.0), Status::InvalidUsage, "weighted");
}

#[test]
fn find_unused_and_weights() {
    let comm = common::world();
    let (mut a, mut b) = (vec![3.0f32; 2], vec![2.0f32; 3]);
    let options = DdpOptions {
        find_unused: true,
        weighted: true,
        ..DdpOptions::default()
    };
    let mut ddp = Ddp::new(&comm, vec![&mut a[..], &mut b[..]], &options).unwrap();
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        assert_error(ddp.set_local_weight(bad), Status::InvalidArgument, "finite");
    }
    ddp.set_local_weight(0.0).unwrap();
    ddp.mark_ready(0).unwrap();
    assert_error(
        ddp.set_local_weight(1.0),
        Status::InvalidUsage,
        "first mark_ready",
    );
    assert_error(ddp.wait(-1), Status::InvalidUsage, "add up to");
    ddp.set_local_weight(5.0).unwrap();
    ddp.mark_ready(0).unwrap();
    ddp.wait(-1).unwrap();
    assert_eq!(ddp.grad(0), &[3.0; 2]);
    assert_eq!(ddp.grad(1), &[0.0; 3]); // unmarked: zero from this rank
}

#[test]
fn half_precision_gradients_and_compression() {
    let comm = common::world();
    let mut g: Vec<F16> = [1.5f32, -2.0, 0.25]
        .iter()
        .map(|&x| F16::from_f32(x))
        .collect();
    let options = DdpOptions {
        compression: Compression::Bf16,
        ..DdpOptions::default()
    };
    let mut ddp = Ddp::new(&comm, vec![&mut g[..]], &options).unwrap();
    ddp.mark_ready(0).unwrap();
    ddp.wait(-1).unwrap();
    let values: Vec<f32> = ddp.grad(0).iter().map(|x| x.to_f32()).collect();
    assert_eq!(values, [1.5, -2.0, 0.25]);
}

#[test]
fn bad_slices_and_options_are_refused() {
    let comm = common::world();
    let mut ints = [0i32; 3];
    assert_error(
        Ddp::new(&comm, vec![&mut ints[..]], &DdpOptions::default()),
        Status::InvalidArgument,
        "floating point",
    );
    let mut g = [0.0f32; 3];
    let options = DdpOptions {
        bucket_bytes: Some(0),
        ..DdpOptions::default()
    };
    assert_error(
        Ddp::new(&comm, vec![&mut g[..]], &options),
        Status::InvalidArgument,
        "bucket_bytes",
    );
    // Nothing at all is a DDP with no buckets.
    let mut empty = Ddp::<f32>::new(&comm, Vec::new(), &DdpOptions::default()).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.bucket_count().unwrap(), 0);
    empty.wait(-1).unwrap();
}

#[test]
fn broadcast_parameters_on_a_world_of_one() {
    let comm = common::world();
    let (mut w, mut b) = (vec![0.5f32; 4], vec![1.0f32; 2]);
    broadcast_parameters(&comm, &mut [&mut w[..], &mut b[..]], 0).unwrap();
    assert_eq!(w, [0.5; 4]);
    let mut steps = vec![7i64];
    broadcast_parameters(&comm, &mut [&mut steps[..]], 0).unwrap();
    assert_eq!(steps, [7]);
    assert_error(
        broadcast_parameters(&comm, &mut [&mut w[..]], 1),
        Status::InvalidArgument,
        "root 1",
    );
    broadcast_parameters::<f32>(&comm, &mut [], 0).unwrap();
}

#[test]
fn trains_with_an_optimizer_over_the_same_gradients() {
    // The optimizer borrows the gradients; the DDP works on the optimizer's
    // own and lends the optimizer back between steps.
    let comm = common::world();
    let (mut w, mut b) = (vec![1.0f32; 4], vec![2.0f32; 2]);
    let (mut gw, mut gb) = (vec![0.0f32; 4], vec![0.0f32; 2]);
    broadcast_parameters(&comm, &mut [&mut w[..], &mut b[..]], 0).unwrap();
    let sgd = OptimizerOptions {
        kind: OptimizerKind::Sgd,
        lr: Some(0.5),
        ..OptimizerOptions::default()
    };
    let mut opt = Optimizer::new(vec![&mut w, &mut b], vec![&mut gw, &mut gb], &sgd).unwrap();
    {
        let options = DdpOptions {
            bucket_bytes: Some(1),
            ..DdpOptions::default()
        };
        let mut ddp = Ddp::with_optimizer(&comm, &mut opt, &options).unwrap();
        assert_eq!(ddp.len(), 2);
        assert_eq!(ddp.bucket_count().unwrap(), 2);
        for _ in 0..2 {
            ddp.optimizer().zero_grad().unwrap();
            ddp.grad_mut(1).fill(-2.0);
            ddp.mark_ready(1).unwrap();
            ddp.grad_mut(0).fill(1.0);
            ddp.mark_ready(0).unwrap();
            ddp.wait(-1).unwrap();
            let info = ddp.optimizer().step().unwrap();
            assert!(!info.skipped);
        }
        assert_eq!(ddp.optimizer().param(0), &[0.0; 4]);
        assert_eq!(ddp.optimizer().grad(1), &[-2.0; 2]);
    }
    // The optimizer is the trainer's again once the DDP is gone.
    assert_eq!(opt.param(1), &[4.0; 2]);
    opt.zero_grad().unwrap();
}

#[test]
fn outliving_the_communicator_is_refused_at_compile_time_but_not_its_handle() {
    // A DDP borrows its Comm, so the Comm cannot be dropped first in safe
    // code; the C layer holds the communicator anyway, which `abort` shows:
    // the next step fails with Aborted instead of touching freed memory.
    let comm = common::world();
    let mut g = vec![1.0f32; 3];
    let mut ddp = Ddp::new(&comm, vec![&mut g[..]], &DdpOptions::default()).unwrap();
    comm.abort().unwrap();
    let _ = ddp.mark_ready(0);
    assert_error(ddp.wait(-1), Status::Aborted, "");
    drop(ddp);
    assert_eq!(g, [1.0; 3]);
}
