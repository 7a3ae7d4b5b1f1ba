//! Zero (ZeRO stages 1–3) checked across real ranks; run under dtrun:
//!
//! ```sh
//! cargo build --offline --locked --example zero_allranks
//! dtrun -n 2 target/debug/examples/zero_allranks [EXPECTED_RANKS]
//! ```
//!
//! Every rank trains the same linear model (y = W x + b, mean squared error)
//! on its shard of each global batch, with SGD (momentum) and with AdamW, in
//! stages 1, 2 and 3, and compares the parameters after every step with one
//! process training on the whole batch in f64. Then: memory figures (stage 3
//! holds less than stage 1), refusals every rank makes alike, and a
//! rank-local refusal that the others hear about. A failure prints what
//! differed, on which rank, and exits 1; dtrun then stops the other ranks.
//! CTest runs it as rust_zero_multirank_2.

use std::process::ExitCode;

use dtrain::{Comm, OptimizerKind, OptimizerOptions, Status, Zero, ZeroOptions};

const INPUTS: usize = 5;
const OUTPUTS: usize = 3;
/// Samples per rank in each global batch.
const PER_RANK: usize = 4;
const STEPS: usize = 4;

struct Failure(String);

impl From<dtrain::Error> for Failure {
    fn from(error: dtrain::Error) -> Failure {
        Failure(format!("unexpected error: {error}"))
    }
}

type Outcome<T = ()> = Result<T, Failure>;

/// A deterministic value in [-1, 1) for each `(step, sample, k)`, the same on
/// every rank, so that each rank can build the whole batch and take its shard.
fn value(step: usize, sample: usize, k: usize, salt: u64) -> f64 {
    let mut x = (step as u64) << 40 ^ (sample as u64) << 20 ^ (k as u64) << 4 ^ salt;
    x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 32;
    (x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

fn inputs(step: usize, sample: usize) -> [f64; INPUTS] {
    std::array::from_fn(|k| value(step, sample, k, 1))
}

fn targets(step: usize, sample: usize) -> [f64; OUTPUTS] {
    std::array::from_fn(|k| value(step, sample, k, 2))
}

/// Gradients of the mean over `samples` of ½‖W x + b − t‖²: (dW, db).
fn gradients(
    w: &[f64],
    b: &[f64],
    step: usize,
    samples: std::ops::Range<usize>,
) -> (Vec<f64>, Vec<f64>) {
    let count = samples.len() as f64;
    let (mut dw, mut db) = (vec![0.0; OUTPUTS * INPUTS], vec![0.0; OUTPUTS]);
    for s in samples {
        let (x, t) = (inputs(step, s), targets(step, s));
        for o in 0..OUTPUTS {
            let y: f64 = b[o] + (0..INPUTS).map(|k| w[o * INPUTS + k] * x[k]).sum::<f64>();
            let dy = (y - t[o]) / count;
            db[o] += dy;
            for k in 0..INPUTS {
                dw[o * INPUTS + k] += dy * x[k];
            }
        }
    }
    (dw, db)
}

/// The optimizer under test and its f64 reference (PyTorch's formulas).
#[derive(Clone, Copy)]
enum Rule {
    Sgd,
    AdamW,
}

const LR_SGD: f64 = 0.1;
const MOMENTUM: f64 = 0.9;
const LR_ADAMW: f64 = 0.01;
const WEIGHT_DECAY: f64 = 0.1;

impl Rule {
    fn options(self) -> OptimizerOptions {
        match self {
            Rule::Sgd => OptimizerOptions {
                kind: OptimizerKind::Sgd,
                lr: Some(LR_SGD as f32),
                momentum: Some(MOMENTUM as f32),
                ..Default::default()
            },
            Rule::AdamW => OptimizerOptions {
                kind: OptimizerKind::AdamW,
                lr: Some(LR_ADAMW as f32),
                weight_decay: Some(WEIGHT_DECAY as f32),
                ..Default::default()
            },
        }
    }

    fn name(self) -> &'static str {
        match self {
            Rule::Sgd => "SGD",
            Rule::AdamW => "AdamW",
        }
    }
}

/// One process updating the whole model: parameters and their state.
struct Reference {
    rule: Rule,
    params: [Vec<f64>; 2],
    first: [Vec<f64>; 2],
    second: [Vec<f64>; 2],
    steps: i32,
}

impl Reference {
    fn new(rule: Rule, params: [Vec<f64>; 2]) -> Reference {
        let zeros = || params.clone().map(|p| vec![0.0; p.len()]);
        Reference {
            rule,
            first: zeros(),
            second: zeros(),
            params,
            steps: 0,
        }
    }

    fn step(&mut self, grads: [Vec<f64>; 2]) {
        self.steps += 1;
        let t = self.steps;
        for (k, g) in grads.iter().enumerate() {
            for (i, &g) in g.iter().enumerate() {
                let p = &mut self.params[k][i];
                let (m, v) = (&mut self.first[k][i], &mut self.second[k][i]);
                match self.rule {
                    Rule::Sgd => {
                        *m = if t == 1 { g } else { MOMENTUM * *m + g };
                        *p -= LR_SGD * *m;
                    }
                    Rule::AdamW => {
                        let (beta1, beta2, eps) = (0.9f64, 0.999f64, 1e-8);
                        *p *= 1.0 - LR_ADAMW * WEIGHT_DECAY;
                        *m = beta1 * *m + (1.0 - beta1) * g;
                        *v = beta2 * *v + (1.0 - beta2) * g * g;
                        let m_hat = *m / (1.0 - beta1.powi(t));
                        let v_hat = *v / (1.0 - beta2.powi(t));
                        *p -= LR_ADAMW * m_hat / (v_hat.sqrt() + eps);
                    }
                }
            }
        }
    }
}

fn close(what: &str, got: &[f32], want: &[f64]) -> Outcome {
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if (g as f64 - w).abs() > 1e-5 * w.abs() + 1e-6 {
            return Err(Failure(format!(
                "{what}: element {i} is {g}, want {w} (rtol 1e-5)"
            )));
        }
    }
    if got.len() != want.len() {
        return Err(Failure(format!(
            "{what}: {} elements, want {}",
            got.len(),
            want.len()
        )));
    }
    Ok(())
}

fn options_of(stage: i32) -> ZeroOptions {
    ZeroOptions {
        stage,
        // Stages 1–2: small units, so that several reductions run.
        bucket_bytes: (stage < 3).then_some(16),
        ..ZeroOptions::default()
    }
}

/// Trains `STEPS` steps in `stage` and compares with the reference after each.
fn train(comm: &Comm<'_>, rank: usize, size: usize, stage: i32, rule: Rule) -> Outcome {
    let what = format!("stage {stage} {}", rule.name());
    // Each rank starts from different values: creation must take rank 0's.
    let start = |rank: usize| -> [Vec<f32>; 2] {
        [
            (0..OUTPUTS * INPUTS)
                .map(|i| value(rank, 0, i, 3) as f32)
                .collect(),
            (0..OUTPUTS).map(|i| value(rank, 1, i, 3) as f32).collect(),
        ]
    };
    let mine = start(rank);
    let mut zero = Zero::new(
        comm,
        &[&mine[0], &mine[1]],
        &rule.options(),
        &options_of(stage),
    )?;
    let mut reference = Reference::new(
        rule,
        start(0).map(|p| p.iter().map(|&x| x as f64).collect()),
    );
    // Stage 3 has one unit per parameter; stages 1–2 keep everything whole,
    // so their (no-op) gathers may name any unit.
    let unit_of = |i: usize| if stage == 3 { i } else { 0 };

    for step in 0..STEPS {
        // Forward: the parameters, read while their units are gathered.
        let mut params: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for (i, param) in params.iter_mut().enumerate() {
            *param = zero.with_unit(unit_of(i), |z| -> dtrain::Result<Vec<f64>> {
                Ok(z.parameter(i)?.iter().map(|&x| x as f64).collect())
            })??;
        }
        let shard = rank * PER_RANK..(rank + 1) * PER_RANK;
        let (dw, db) = gradients(&params[0], &params[1], step, shard);
        // Backward: the last parameter first, each added into its buffer and marked.
        for (i, g) in [(1, &db), (0, &dw)] {
            zero.with_unit(unit_of(i), |z| -> dtrain::Result<()> {
                for (acc, &x) in z.gradient(i)?.iter_mut().zip(g) {
                    *acc += x as f32;
                }
                z.mark_ready(i)
            })??;
        }
        zero.wait(-1)?;
        let info = zero.step()?;
        if info.skipped || info.step != step as i64 + 1 {
            return Err(Failure(format!("{what}: step {step} gave {info:?}")));
        }

        let (want_w, want_b) = (reference.params[0].clone(), reference.params[1].clone());
        let (dw, db) = gradients(&want_w, &want_b, step, 0..size * PER_RANK);
        reference.step([dw, db]);
        for i in 0..2 {
            let got = zero.with_unit(unit_of(i), |z| z.parameter(i).map(<[f32]>::to_vec))??;
            close(
                &format!("{what}, step {step}, parameter {i}"),
                &got,
                &reference.params[i],
            )?;
        }
    }
    Ok(())
}

fn check_memory(comm: &Comm<'_>) -> Outcome {
    let params = [vec![0.5f32; 4000], vec![0.25f32; 1000]];
    let total = |stage: i32| -> Outcome<i64> {
        let zero = Zero::new(
            comm,
            &[&params[0], &params[1]],
            &OptimizerOptions::default(),
            &options_of(stage),
        )?;
        let memory = zero.memory()?;
        if memory.parameters <= 0 || memory.optimizer_state <= 0 || memory.peak < memory.total() {
            return Err(Failure(format!("stage {stage}: implausible {memory:?}")));
        }
        Ok(memory.total())
    };
    let (stage1, stage3) = (total(1)?, total(3)?);
    if stage3 >= stage1 {
        return Err(Failure(format!(
            "stage 3 holds {stage3} bytes, not less than stage 1's {stage1}"
        )));
    }
    Ok(())
}

fn check_refusals(comm: &Comm<'_>, rank: usize) -> Outcome {
    let w = [1.0f32; 6];
    let options = ZeroOptions {
        stage: 3,
        ..ZeroOptions::default()
    };
    let mut zero = Zero::new(comm, &[&w[..]], &OptimizerOptions::default(), &options)?;
    expect(
        "gather of a unit out of range",
        zero.gather(1),
        Status::InvalidArgument,
    )?;
    expect(
        "mark_ready out of range",
        zero.mark_ready(1),
        Status::InvalidArgument,
    )?;
    expect(
        "parameter of a unit not gathered",
        zero.parameter(0).map(|_| ()),
        Status::InvalidUsage,
    )?;
    expect(
        "release of a unit not gathered",
        zero.release(0),
        Status::InvalidUsage,
    )?;
    drop(zero);

    // One rank's own bad option: it is refused there, and the others hear of it.
    let stage = if rank == 0 { 7 } else { 3 };
    let refused = Zero::new(
        comm,
        &[&w[..]],
        &OptimizerOptions::default(),
        &ZeroOptions {
            stage,
            ..ZeroOptions::default()
        },
    );
    match refused {
        Err(e) if rank == 0 && e.status == Status::InvalidArgument => Ok(()),
        Err(e) if rank != 0 && matches!(e.status, Status::Mismatch | Status::InvalidArgument) => {
            Ok(())
        }
        other => Err(Failure(format!(
            "stage {stage} on rank {rank}: {:?}",
            other.map(|_| ())
        ))),
    }
}

fn expect(what: &str, result: dtrain::Result<()>, status: Status) -> Outcome {
    match result {
        Err(e) if e.status == status => Ok(()),
        other => Err(Failure(format!("{what}: {other:?}, want {status:?}"))),
    }
}

fn run(comm: &Comm<'_>, rank: usize, size: usize) -> Outcome {
    for stage in [1, 2, 3] {
        for rule in [Rule::Sgd, Rule::AdamW] {
            train(comm, rank, size, stage, rule)?;
        }
    }
    check_memory(comm)?;
    check_refusals(comm, rank)
}

fn main() -> ExitCode {
    let comm = match Comm::new() {
        Ok(comm) => comm,
        Err(e) => {
            eprintln!("FAIL: Comm::new: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (rank, size) = match (comm.rank(), comm.size()) {
        (Ok(rank), Ok(size)) => (rank as usize, size as usize),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("FAIL: rank and size: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(expected) = std::env::args().nth(1) {
        if expected.parse() != Ok(size) {
            eprintln!("FAIL: {size} ranks, want {expected}");
            return ExitCode::FAILURE;
        }
    }
    match run(&comm, rank, size) {
        Ok(()) => {
            println!("zero_allranks: rank {rank} of {size}: stages 1-3 match the reference");
            ExitCode::SUCCESS
        }
        Err(Failure(message)) => {
            eprintln!("FAIL on rank {rank}: {message}");
            ExitCode::FAILURE
        }
    }
}
