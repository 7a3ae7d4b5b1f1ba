//! Expert parallelism on a world of one: routing against hand-computed
//! values, the losses, a dispatch and combine round trip with its backward
//! passes, and refusals.

mod common;

use common::assert_error;
use dtrain::{balance_loss, route, route_backward, z_loss, DeviceTensor, MoeOptions, MoePlan, Scoring, Status};

#[test]
fn routing_picks_the_top_k_and_renormalises() {
    let mut opts = MoeOptions::new(4, 2).unwrap();
    assert_eq!(opts.scoring, Scoring::Softmax);
    opts.normalize = true;
    // Two tokens over four experts.
    let logits = [0.0f32, 1.0, 2.0, 0.5, 3.0, 0.0, 0.0, 1.0];
    let routing = route(&logits, &opts).unwrap();
    assert_eq!(routing.experts, vec![2, 1, 0, 3]);
    assert_eq!(routing.dropped, 0);
    let e1 = 1.0f32.exp();
    assert!(
        (routing.weights[0] - e1 / (e1 + 1.0)).abs() < 1e-6,
        "{:?}",
        routing.weights
    );
    assert!((routing.weights[0] + routing.weights[1] - 1.0).abs() < 1e-6);

    let d_logits = route_backward(&logits, &[1.0, 1.0, 0.0, 0.0], &opts).unwrap();
    // Renormalised weights always sum to 1: their sum has no gradient.
    assert!(d_logits.iter().all(|g| g.abs() < 1e-6), "{d_logits:?}");
}

#[test]
fn the_losses_follow_their_formulas() {
    let opts = MoeOptions::new(2, 1).unwrap();
    let logits = [0.0f32; 4]; // two tokens, a uniform router: both pick expert 0
    let mut d_logits = vec![0.0f32; 4];
    let (loss, counts) = balance_loss(&logits, &opts, 1.0, Some(&mut d_logits)).unwrap();
    assert_eq!(counts, vec![2, 0]);
    assert!((loss - 1.0).abs() < 1e-6, "{loss}"); // 2 * (1 * 0.5 + 0 * 0.5)
    let z = z_loss(&logits, 2, 1.0, None).unwrap();
    assert!((z - 2.0f64.ln().powi(2)).abs() < 1e-6, "{z}");
}

#[test]
fn dispatch_and_combine_round_trip() {
    let comm = common::world();
    let opts = MoeOptions::new(2, 2).unwrap();
    let experts = [0i64, 1, 1, -1]; // token 1's second pair was dropped
    let hidden = 2;
    let mut plan = MoePlan::new(&comm, &experts, hidden, &opts).unwrap();
    assert_eq!(plan.local_experts().unwrap(), (0, 2));
    assert_eq!(plan.received().unwrap(), 3);
    assert_eq!(plan.expert_counts().unwrap(), vec![1, 2]);

    let tokens = [1.0f32, 2.0, 3.0, 4.0];
    let mut received = vec![0.0f32; 6];
    plan.dispatch(&tokens, &mut received).unwrap();
    assert_eq!(received, vec![1.0, 2.0, 1.0, 2.0, 3.0, 4.0]);

    let weights = [0.5f32, 0.25, 2.0, 9.0];
    let mut out = vec![0.0f32; 4];
    plan.combine(&received, &weights, &mut out).unwrap();
    assert_eq!(out, vec![0.75, 1.5, 6.0, 8.0]);

    let d_out = [1.0f32, 0.0, 0.0, 1.0];
    let mut d_received = vec![0.0f32; 6];
    let mut d_weights = vec![7.0f32; 4];
    plan.combine_backward(&d_out, &weights, &mut d_received, &mut d_weights)
        .unwrap();
    assert_eq!(d_weights, vec![1.0, 1.0, 4.0, 0.0]);
    assert_eq!(d_received, vec![0.5, 0.0, 0.25, 0.0, 0.0, 2.0]);

    let mut d_tokens = vec![0.0f32; 4];
    plan.dispatch_backward(&d_received, &mut d_tokens).unwrap();
    assert_eq!(d_tokens, vec![0.75, 0.0, 0.0, 2.0]);
}

#[test]
fn bad_arguments_are_refused() {
    let comm = common::world();
    let opts = MoeOptions::new(2, 3).unwrap();
    assert_eq!(route(&[0.0; 4], &opts).err().unwrap().status, Status::InvalidArgument);
    let opts = MoeOptions::new(2, 1).unwrap();
    assert_eq!(route(&[0.0; 3], &opts).err().unwrap().status, Status::InvalidArgument);
    let err = MoePlan::new(&comm, &[0, 2], 4, &opts).err().unwrap();
    assert_eq!(err.status, Status::InvalidArgument);
    let mut plan = MoePlan::new(&comm, &[0, 1], 4, &opts).unwrap();
    let mut received = vec![0.0f32; 8];
    let err = plan.dispatch(&[0.0; 6], &mut received).err().unwrap();
    assert_eq!(err.status, Status::InvalidArgument);
    let err = plan
        .combine_backward(&[0.0; 8], &[1.0; 2], &mut received, &mut [0.0; 2])
        .err()
        .unwrap();
    assert_eq!(err.status, Status::InvalidUsage);
}

#[test]
fn the_built_in_experts_run_each_block_through_its_own_weights() {
    // Two experts, H = F = 1: y = act(x * w1[l]) * w2[l]; expert 1 gets no rows.
    let experts = dtrain::Experts {
        counts: &[2, 0],
        w1: &[2.0, 5.0],
        w2: &[3.0, 7.0],
        hidden: 1,
        inner: 1,
        activation: dtrain::Activation::Silu,
    };
    let x = [1.0f32, -1.0];
    let (pre, y) = experts.forward(&x).unwrap();
    assert_eq!(pre, vec![2.0, -2.0]);
    let silu = |v: f32| v / (1.0 + (-v).exp());
    assert!(
        (y[0] - 3.0 * silu(2.0)).abs() < 1e-6 && (y[1] - 3.0 * silu(-2.0)).abs() < 1e-6,
        "{y:?}"
    );
    let grads = experts.backward(&x, &pre, &[1.0, 0.0]).unwrap();
    assert!((grads.dw2[0] - silu(2.0)).abs() < 1e-6, "{grads:?}");
    assert_eq!(grads.dw1[1], 0.0);
    assert_eq!(grads.dw2[1], 0.0);
    let short = dtrain::Experts {
        counts: &[1, 0],
        ..experts
    };
    assert_eq!(short.forward(&x).err().unwrap().status, Status::InvalidArgument);
}

#[test]
fn without_a_device_the_exchanges_refuse_device_tensors() {
    let info = dtrain::build_info();
    if !(info.contains("cuda: compiled, no device") || info.contains("cuda: not compiled")) {
        eprintln!("skipped: this machine has a CUDA device ({info}); the refusal is not observable");
        return;
    }
    let comm = common::world();
    let opts = MoeOptions::new(2, 2).unwrap();
    let mut plan = MoePlan::new(&comm, &[0i64, 1, 1, -1], 2, &opts).unwrap();
    // Host memory that claims to be on device 0: libdtrain must refuse it
    // before reading it.
    let mut tokens = vec![1.0f32; 4];
    let mut rows = vec![0.0f32; 6];
    let mut weights = vec![0.5f32; 4];
    let mut out = vec![0.0f32; 4];
    // SAFETY: libdtrain refuses these before reading them (asserted below).
    let (x, mut r, w, mut o) = unsafe {
        (
            DeviceTensor::from_device_ptr(tokens.as_mut_ptr(), 4, 0),
            DeviceTensor::from_device_ptr(rows.as_mut_ptr(), 6, 0),
            DeviceTensor::from_device_ptr(weights.as_mut_ptr(), 4, 0),
            DeviceTensor::from_device_ptr(out.as_mut_ptr(), 4, 0),
        )
    };
    let needle = "CUDA tensors need a CUDA device";
    assert_error(plan.dispatch_device(&x, &mut r), Status::Unsupported, &format!("tokens: {needle}"));
    assert_error(plan.combine_device(&r, &w, &mut o), Status::Unsupported, &format!("expert_out: {needle}"));
    assert_error(plan.dispatch_backward_device(&r, &mut o), Status::Unsupported, &format!("d_received: {needle}"));

    // Refused calls fix no place: the plan runs on the host, and combine's
    // backward pass (which needs combine first) refuses device tensors too.
    let mut received = vec![0.0f32; 6];
    plan.dispatch(&[1.0, 2.0, 3.0, 4.0], &mut received).unwrap();
    assert_eq!(received, vec![1.0, 2.0, 1.0, 2.0, 3.0, 4.0]);
    let mut combined = vec![0.0f32; 4];
    plan.combine(&received, &[0.5, 0.25, 2.0, 9.0], &mut combined).unwrap();
    let mut d_weights = vec![7.0f32; 4];
    // SAFETY: as above.
    let mut dw = unsafe { DeviceTensor::from_device_ptr(d_weights.as_mut_ptr(), 4, 0) };
    assert_error(plan.combine_backward_device(&o, &w, &mut r, &mut dw), Status::Unsupported, &format!("d_out: {needle}"));
    assert_eq!((tokens, rows, out, d_weights), (vec![1.0; 4], vec![0.0; 6], vec![0.0; 4], vec![7.0; 4]));
}
