//! Zero on a world of one: a step in every stage, the slices it lends, and
//! the refusals with their statuses (the zero_allranks example checks
//! training across ranks).

mod common;

use dtrain::{Bf16, OptimizerKind, OptimizerOptions, Status, Zero, ZeroOptions, F16};

use common::assert_error;

fn sgd(lr: f32) -> OptimizerOptions {
    OptimizerOptions {
        kind: OptimizerKind::Sgd,
        lr: Some(lr),
        ..OptimizerOptions::default()
    }
}

fn stage(stage: i32) -> ZeroOptions {
    ZeroOptions {
        stage,
        ..ZeroOptions::default()
    }
}

#[test]
fn a_step_in_every_stage_follows_sgd() {
    let comm = common::world();
    let (w, b) = (vec![1.0f32; 6], vec![2.0f32; 3]);
    for s in 0..=3 {
        let mut zero = Zero::new(&comm, &[&w[..], &b[..]], &sgd(0.5), &stage(s)).unwrap();
        assert_eq!(zero.len(), 2);
        assert!(zero.unit_count().unwrap() >= 1, "stage {s}");
        // Backward as the header has it, last parameter first. Stage 3 has
        // one unit per parameter; in stages 0–2 gathers return at once.
        let unit_of = |i: usize| if s == 3 { i } else { 0 };
        for i in [1, 0] {
            zero.with_unit(unit_of(i), |z| {
                z.gradient(i).unwrap().fill(1.0);
                z.mark_ready(i).unwrap();
            })
            .unwrap();
        }
        zero.wait(-1).unwrap();
        let info = zero.step().unwrap();
        assert_eq!(info.step, 1, "stage {s}");
        assert!((info.grad_norm - 3.0).abs() < 1e-6, "stage {s}: {info:?}");
        zero.with_unit(unit_of(1), |z| {
            assert_eq!(z.parameter(1).unwrap(), &[1.5; 3])
        })
        .unwrap();
        zero.with_unit(0, |z| assert_eq!(z.parameter(0).unwrap(), &[0.5; 6]))
            .unwrap();
    }
    // The initial values were only read.
    assert_eq!(w, [1.0; 6]);
}

#[test]
fn parameters_and_gradients_lend_both_at_once() {
    let comm = common::world();
    let (w, b) = (vec![3.0f32; 4], vec![1.0f32; 2]);
    let mut zero = Zero::new(&comm, &[&w[..], &b[..]], &sgd(1.0), &stage(0)).unwrap();
    {
        let (params, mut grads) = zero.parameters_and_gradients(&[0, 1], &[1, 0]).unwrap();
        assert_eq!(params[0], &[3.0; 4]);
        grads[0].copy_from_slice(params[1]);
        grads[1].fill(0.5);
    }
    zero.mark_ready(1).unwrap();
    zero.mark_ready(0).unwrap();
    zero.wait(-1).unwrap();
    zero.step().unwrap();
    assert_eq!(zero.parameter(0).unwrap(), &[2.5; 4]);
    assert_eq!(zero.parameter(1).unwrap(), &[0.0; 2]);
    assert_error(
        zero.parameters_and_gradients(&[], &[0, 0]).map(|_| ()),
        Status::InvalidArgument,
        "twice",
    );
}

#[test]
fn sixteen_bit_parameters_come_back_typed() {
    let comm = common::world();
    let half = [F16::from_f32(1.5); 3];
    let zero = Zero::new(&comm, &[&half[..]], &sgd(0.1), &stage(1)).unwrap();
    assert_eq!(zero.parameter(0).unwrap(), &half[..]);
    let bf = [Bf16::from_f32(-2.0); 5];
    let zero = Zero::new(&comm, &[&bf[..]], &OptimizerOptions::default(), &stage(2)).unwrap();
    assert_eq!(zero.parameter(0).unwrap(), &bf[..]);
    let memory = zero.memory().unwrap();
    // A bfloat16 model keeps f32 master weights of what it updates.
    assert_eq!(memory.master_weights, 5 * 4);
    assert!(memory.peak >= memory.total());
}

#[test]
fn refusals_name_their_status() {
    let comm = common::world();
    let w = [0.0f32; 4];
    let doubles = [0.0f64; 4];
    assert_error(
        Zero::new(&comm, &[&doubles[..]], &sgd(0.1), &stage(1)).map(|_| ()),
        Status::InvalidArgument,
        "",
    );
    assert_error(
        Zero::new(&comm, &[&w[..]], &sgd(0.1), &stage(4)).map(|_| ()),
        Status::InvalidArgument,
        "stage",
    );
    assert_error(
        Zero::<f32>::new(&comm, &[], &sgd(0.1), &stage(1)).map(|_| ()),
        Status::InvalidArgument,
        "",
    );
    let units_short_of_the_parameters = ZeroOptions {
        unit_sizes: Some(vec![1]),
        ..stage(1)
    };
    assert_error(
        Zero::new(
            &comm,
            &[&w[..2], &w[2..]],
            &sgd(0.1),
            &units_short_of_the_parameters,
        )
        .map(|_| ()),
        Status::InvalidArgument,
        "add up",
    );
    assert_error(
        Zero::new(&comm, &[&w[..]], &sgd(-1.0), &stage(1)).map(|_| ()),
        Status::InvalidArgument,
        "lr",
    );

    let mut zero = Zero::new(&comm, &[&w[..]], &sgd(0.1), &stage(3)).unwrap();
    assert_error(zero.parameter(1).map(|_| ()), Status::InvalidArgument, "");
    assert_error(zero.gradient(1).map(|_| ()), Status::InvalidArgument, "");
    assert_error(zero.mark_ready(1), Status::InvalidArgument, "");
    assert_error(zero.gather(1), Status::InvalidArgument, "");
    assert_error(zero.parameter(0).map(|_| ()), Status::InvalidUsage, "");
    assert_error(zero.release(0), Status::InvalidUsage, "");
    assert_error(zero.set_lr(f32::NAN), Status::InvalidArgument, "");
    // A gradient is lent once per micro-step: not after it is marked.
    zero.gather_wait(0, -1).unwrap();
    zero.gradient(0).unwrap().fill(1.0);
    zero.mark_ready(0).unwrap();
    assert_error(zero.gradient(0).map(|_| ()), Status::InvalidUsage, "");
    assert_error(zero.mark_ready(0), Status::InvalidUsage, "");
    // Mid micro-step, sync cannot change.
    assert_error(zero.set_sync(false), Status::InvalidUsage, "");
    assert!(zero.sync());
    zero.wait(-1).unwrap();
    // A unit still gathered blocks the step.
    assert_error(zero.step().map(|_| ()), Status::InvalidUsage, "");
    zero.release(0).unwrap();
    zero.step().unwrap();
    assert_eq!(zero.loss_scale().unwrap(), 1.0);
}

#[test]
fn a_step_needs_the_micro_step_ended_and_wait_names_what_was_not_marked() {
    let comm = common::world();
    let (w, b) = (vec![0.0f32; 2], vec![0.0f32; 2]);
    let mut zero = Zero::new(&comm, &[&w[..], &b[..]], &sgd(0.1), &stage(1)).unwrap();
    zero.mark_ready(1).unwrap();
    assert_error(zero.step().map(|_| ()), Status::InvalidUsage, "");
    assert_error(zero.wait(-1), Status::InvalidUsage, "0");
}

#[test]
fn no_sync_accumulates_and_restores_the_setting() {
    let comm = common::world();
    let w = [0.0f32; 3];
    let mut zero = Zero::new(&comm, &[&w[..]], &sgd(1.0), &stage(1)).unwrap();
    zero.no_sync(|z| {
        assert!(!z.sync());
        z.gradient(0).unwrap().fill(1.0);
        z.mark_ready(0).unwrap();
        z.wait(-1).unwrap();
    })
    .unwrap();
    assert!(zero.sync());
    zero.gradient(0).unwrap().iter_mut().for_each(|g| *g += 2.0);
    zero.mark_ready(0).unwrap();
    zero.wait(-1).unwrap();
    zero.step().unwrap();
    assert_eq!(zero.parameter(0).unwrap(), &[-3.0; 3]);
}

#[test]
fn a_checkpoint_restores_parameters_and_state() {
    let comm = common::world();
    let dir = std::env::temp_dir().join(format!("dtrain-rust-zero-{}", std::process::id()));
    let w = [1.0f32; 5];
    let momentum = OptimizerOptions {
        momentum: Some(0.9),
        ..sgd(0.1)
    };
    let train = |zero: &mut Zero<'_, f32>| {
        zero.gradient(0).unwrap().fill(1.0);
        zero.mark_ready(0).unwrap();
        zero.wait(-1).unwrap();
        zero.step().unwrap();
    };
    let mut saved = Zero::new(&comm, &[&w[..]], &momentum, &stage(1)).unwrap();
    train(&mut saved);
    saved.save(&dir).unwrap();
    let mut loaded = Zero::new(&comm, &[&w[..]], &momentum, &stage(2)).unwrap();
    loaded.load(&dir).unwrap();
    assert_eq!(loaded.parameter(0).unwrap(), saved.parameter(0).unwrap());
    // The momentum came along: the next steps agree too.
    train(&mut saved);
    train(&mut loaded);
    assert_eq!(loaded.parameter(0).unwrap(), saved.parameter(0).unwrap());

    let other_shape = [0.0f32; 4];
    let mut foreign = Zero::new(&comm, &[&other_shape[..]], &momentum, &stage(1)).unwrap();
    assert_error(foreign.load(&dir), Status::InvalidArgument, "");
    assert_error(
        foreign.load(dir.join("missing")),
        Status::InvalidArgument,
        "",
    );
    assert_error(foreign.save("with\0nul"), Status::InvalidArgument, "NUL");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_model_split_over_a_model_comm_clips_by_the_norm_without_the_excluded() {
    let comm = common::world();
    // The model communicator is a world of one too: the norm is this rank's,
    // the second parameter's gradient only; clipping to 1 scales both.
    let model = comm.split(Some(0), 0).unwrap().unwrap();
    let clip = OptimizerOptions {
        max_grad_norm: Some(1.0),
        ..sgd(1.0)
    };
    let options = ZeroOptions {
        norm_excluded: vec![0],
        ..stage(1)
    };
    let (a, b) = (vec![0.0f32; 2], vec![0.0f32; 3]);
    let mut zero = Zero::with_model_comm(&comm, &model, &[&a[..], &b[..]], &clip, &options).unwrap();
    for (i, g) in [(1, 4.0), (0, 10.0)] {
        zero.gradient(i).unwrap().fill(g);
        zero.mark_ready(i).unwrap();
    }
    zero.wait(-1).unwrap();
    let info = zero.step().unwrap();
    let norm = 48.0f64.sqrt();
    assert!((info.grad_norm - norm).abs() < 1e-5, "{info:?}");
    for (i, g) in [(0, 10.0), (1, 4.0)] {
        for &p in zero.parameter(i).unwrap() {
            assert!((p as f64 + g / norm).abs() < 1e-5, "parameter {i}: {p}");
        }
    }
    drop(zero);

    let repeated = ZeroOptions {
        norm_excluded: vec![1, 1],
        ..stage(1)
    };
    assert_error(
        Zero::with_model_comm(&comm, &model, &[&a[..], &b[..]], &clip, &repeated),
        Status::InvalidArgument,
        "repeated",
    );
    assert_error(
        Zero::new(&comm, &[&a[..], &b[..]], &clip, &options),
        Status::InvalidArgument,
        "needs optim->comm",
    );
}
