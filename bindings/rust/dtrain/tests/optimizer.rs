//! Optimizer over borrowed slices: updates, clipping, the loss scaler and
//! refused input.

mod common;

use dtrain::{Bf16, Optimizer, OptimizerKind, OptimizerOptions, Status, F16};

fn sgd(lr: f32) -> OptimizerOptions {
    OptimizerOptions {
        kind: OptimizerKind::Sgd,
        lr: Some(lr),
        ..OptimizerOptions::default()
    }
}

#[test]
fn sgd_with_momentum_updates_in_place() {
    let mut w = vec![1.0f32; 5];
    let mut b = vec![2.0f32; 3];
    let (mut gw, mut gb) = (vec![0.0f32; 5], vec![0.0f32; 3]);
    let options = OptimizerOptions {
        momentum: Some(0.5),
        ..sgd(0.1)
    };
    {
        let mut opt =
            Optimizer::new(vec![&mut w, &mut b], vec![&mut gw, &mut gb], &options).unwrap();
        assert_eq!(opt.len(), 2);
        for step in 1..=2 {
            opt.grad_mut(0).fill(1.0);
            opt.grad_mut(1).fill(-1.0);
            let info = opt.step().unwrap();
            assert!(!info.skipped);
            assert_eq!(info.step, step);
            assert!((info.grad_norm - 8f64.sqrt()).abs() < 1e-12);
        }
        // Buffer 1, then 0.5 * 1 + 1: two steps of 0.1 and 0.15.
        assert!(opt.param(0).iter().all(|&x| (x - 0.75).abs() < 1e-6));
        assert!(opt.param(1).iter().all(|&x| (x - 2.25).abs() < 1e-6));
        opt.zero_grad().unwrap();
        assert!(opt.grad(1).iter().all(|&x| x == 0.0));
    }
    // The borrows end with the optimizer.
    assert!((w[0] - 0.75).abs() < 1e-6 && gw[0] == 0.0);
}

#[test]
fn adamw_first_step_moves_by_lr() {
    let mut w = [1.0f32, -1.0, 0.5];
    let mut g = [0.25f32, -4.0, 1.0];
    let mut opt = Optimizer::new(
        vec![&mut w[..]],
        vec![&mut g[..]],
        &OptimizerOptions {
            lr: Some(0.01),
            ..OptimizerOptions::default()
        },
    )
    .unwrap();
    assert_eq!(opt.lr().unwrap(), 0.01);
    opt.step().unwrap();
    // Bias-corrected Adam's first step is lr times the sign of the gradient.
    let expected = [0.99f32, -0.99, 0.49];
    for (x, e) in opt.param(0).iter().zip(expected) {
        assert!((x - e).abs() < 1e-6, "{x} vs {e}");
    }
    opt.set_lr(0.0).unwrap();
    assert_eq!(opt.lr().unwrap(), 0.0);
    common::assert_error(opt.set_lr(f32::NAN), Status::InvalidArgument, "lr = nan");
}

#[test]
fn clipping_scales_the_gradients() {
    let mut w = [0.0f32; 2];
    let mut g = [3.0f32, 4.0];
    let options = OptimizerOptions {
        max_grad_norm: Some(1.0),
        ..sgd(1.0)
    };
    let mut opt = Optimizer::new(vec![&mut w[..]], vec![&mut g[..]], &options).unwrap();
    assert_eq!(opt.step().unwrap().grad_norm, 5.0);
    assert!((opt.grad(0)[0] - 0.6).abs() < 1e-6 && (opt.grad(0)[1] - 0.8).abs() < 1e-6);
    assert!((opt.param(0)[1] + 0.8).abs() < 1e-6);
}

#[test]
fn half_precision_with_a_dynamic_loss_scale() {
    let mut w = [F16::from_f32(1.0); 4];
    let mut g = [F16::from_f32(0.0); 4];
    let options = OptimizerOptions {
        loss_scale: Some(256.0),
        dynamic_loss_scale: true,
        growth_interval: Some(1),
        ..sgd(0.5)
    };
    let mut opt = Optimizer::new(vec![&mut w[..]], vec![&mut g[..]], &options).unwrap();
    opt.grad_mut(0).fill(F16::from_f32(f32::INFINITY));
    let info = opt.step().unwrap();
    assert!(info.skipped);
    assert_eq!(info.loss_scale, 128.0);
    assert_eq!(opt.param(0), &[F16::from_f32(1.0); 4]);

    opt.grad_mut(0).fill(F16::from_f32(128.0)); // a gradient of 1, scaled
    let info = opt.step().unwrap();
    assert!(!info.skipped);
    assert_eq!(info.loss_scale, 256.0);
    assert_eq!(opt.loss_scale().unwrap(), 256.0);
    assert_eq!(opt.param(0), &[F16::from_f32(0.5); 4]);
    assert_eq!(opt.grad(0), &[F16::from_f32(1.0); 4]);
}

#[test]
fn bfloat16_parameters() {
    let mut w = [Bf16::from_f32(2.0); 3];
    let mut g = [Bf16::from_f32(1.0); 3];
    let mut opt = Optimizer::new(vec![&mut w[..]], vec![&mut g[..]], &sgd(0.5)).unwrap();
    opt.step().unwrap();
    assert_eq!(opt.param(0), &[Bf16::from_f32(1.5); 3]);
}

#[test]
fn sharded_over_a_world_of_one() {
    let comm = common::world();
    let mut w = [1.0f32; 4];
    let mut g = [1.0f32; 4];
    let mut opt = Optimizer::sharded(vec![&mut w[..]], vec![&mut g[..]], &sgd(0.1), &comm).unwrap();
    assert_eq!(opt.step().unwrap().grad_norm, 2.0);
}

#[test]
fn refused_input() {
    let mut w = [1.0f32; 4];
    let mut g = [0.0f32; 3];
    common::assert_error(
        Optimizer::new(vec![&mut w[..]], vec![&mut g[..]], &sgd(0.1)),
        Status::InvalidArgument,
        "grads[0]: shape (3,) differs from its parameter's, (4,)",
    );
    common::assert_error(
        Optimizer::new(vec![&mut w[..]], vec![], &sgd(0.1)),
        Status::InvalidArgument,
        "0 gradients for 1 parameters",
    );
    common::assert_error(
        Optimizer::<f32>::new(vec![], vec![], &sgd(0.1)),
        Status::InvalidArgument,
        "n is 0",
    );
    common::assert_error(
        Optimizer::new(vec![&mut w[..]], vec![&mut g[..]], &sgd(-1.0)),
        Status::InvalidArgument,
        "options.lr = -1",
    );
    let options = OptimizerOptions {
        nesterov: true,
        ..sgd(0.1)
    };
    let mut g4 = [0.0f32; 4];
    common::assert_error(
        Optimizer::new(vec![&mut w[..]], vec![&mut g4[..]], &options),
        Status::InvalidArgument,
        "nesterov = 1 needs momentum > 0",
    );
    let mut iw = [1i32; 2];
    let mut ig = [0i32; 2];
    common::assert_error(
        Optimizer::new(vec![&mut iw[..]], vec![&mut ig[..]], &sgd(0.1)),
        Status::InvalidArgument,
        "params[0]: dtype int32 cannot be optimized",
    );
}
