//! Trains a small multi-layer perceptron with data parallelism, written as a
//! Rust trainer would write it: its own forward and backward, libdtrain's
//! DDP for the gradients and its AdamW for the step.
//!
//! ```sh
//! cargo build --offline --locked --example train_mlp
//! dtrun -n 2 target/debug/examples/train_mlp [--steps N] [--batch N] [--lr X] [--log-every N]
//! target/debug/examples/train_mlp              # a world of one
//! ```
//!
//! The task is synthetic but learnable: inputs uniform in [-1, 1), labelled
//! by a fixed random teacher network (the class with the largest output),
//! fresh samples every step, the same numbers whatever the number of ranks.
//! Every rank takes its shard of each global batch and computes the mean
//! cross-entropy's gradient over it; DDP averages the gradients over the
//! ranks, the output layer's travelling while the hidden layer's are
//! computed; AdamW then takes the same step on every rank. So N ranks train
//! the same model as one process, up to rounding: the last line, "final loss
//! L, parameters P" (P the sum of the squared parameters), is what CTest
//! compares between one rank and two. Exits 1 when the loss did not fall
//! below half of the first step's.

// The products index flattened row-major matrices by (row, column), which
// reads closer to the formulas than zipped iterators.
#![allow(clippy::needless_range_loop)]

use std::process::ExitCode;

use dtrain::{Comm, Ddp, DdpOptions, Optimizer, OptimizerKind, OptimizerOptions, ReduceOp};

const INPUTS: usize = 16;
const HIDDEN: usize = 64;
const CLASSES: usize = 4;

struct Settings {
    steps: usize,
    batch: usize,
    lr: f32,
    log_every: usize,
}

const USAGE: &str = "usage: train_mlp [--steps N] [--batch N] [--lr X] [--log-every N]
  --steps N      optimizer steps (default 150)
  --batch N      global batch: samples per step over all ranks, a multiple of the ranks (default 64)
  --lr X         AdamW learning rate (default 0.01)
  --log-every N  a progress line every N steps (default 25)";

fn parse_settings() -> Result<Settings, String> {
    let mut s = Settings {
        steps: 150,
        batch: 64,
        lr: 0.01,
        log_every: 25,
    };
    let mut args = std::env::args().skip(1);
    while let Some(name) = args.next() {
        if name == "-h" || name == "--help" {
            println!("{USAGE}");
            std::process::exit(0);
        }
        let value = args.next().ok_or(format!("{name} needs a value"))?;
        let count = || match value.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("{name}: '{value}' is not a positive integer")),
        };
        match name.as_str() {
            "--steps" => s.steps = count()?,
            "--batch" => s.batch = count()?,
            "--log-every" => s.log_every = count()?,
            "--lr" => {
                s.lr = value
                    .parse::<f32>()
                    .ok()
                    .filter(|lr| *lr >= 0.0)
                    .ok_or(format!("--lr: '{value}' is not a non-negative number"))?
            }
            _ => return Err(format!("unknown option '{name}'")),
        }
    }
    Ok(s)
}

/// A deterministic value in [-1, 1) for each `(a, b, c, salt)`.
fn value(a: usize, b: usize, c: usize, salt: u64) -> f32 {
    let mut x = (a as u64) << 40 ^ (b as u64) << 20 ^ (c as u64) << 4 ^ salt;
    x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x ^= x >> 32;
    ((x >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32
}

/// The two layers' weights, in the order DDP and AdamW are given them
/// (forward order): w1 [HIDDEN x INPUTS], b1, w2 [CLASSES x HIDDEN], b2.
struct Mlp {
    w1: Vec<f32>,
    b1: Vec<f32>,
    w2: Vec<f32>,
    b2: Vec<f32>,
}

impl Mlp {
    /// Uniform in ±1/sqrt(fan-in), biases zero; the same on every rank.
    fn new(seed: u64) -> Mlp {
        let init = |rows: usize, cols: usize, salt: u64| -> Vec<f32> {
            let scale = 1.0 / (cols as f32).sqrt();
            (0..rows * cols)
                .map(|i| scale * value(i / cols, i % cols, 0, seed ^ salt))
                .collect()
        };
        Mlp {
            w1: init(HIDDEN, INPUTS, 11),
            b1: vec![0.0; HIDDEN],
            w2: init(CLASSES, HIDDEN, 13),
            b2: vec![0.0; CLASSES],
        }
    }

    /// All zeros: the shape of the gradients.
    fn zeros() -> Mlp {
        Mlp {
            w1: vec![0.0; HIDDEN * INPUTS],
            b1: vec![0.0; HIDDEN],
            w2: vec![0.0; CLASSES * HIDDEN],
            b2: vec![0.0; CLASSES],
        }
    }

    /// The hidden activations tanh(w1 x + b1) and the output logits.
    fn forward(&self, x: &[f32]) -> (Vec<f32>, Vec<f32>) {
        let hidden: Vec<f32> = (0..HIDDEN)
            .map(|j| (self.b1[j] + dot(&self.w1[j * INPUTS..(j + 1) * INPUTS], x)).tanh())
            .collect();
        let logits = (0..CLASSES)
            .map(|c| self.b2[c] + dot(&self.w2[c * HIDDEN..(c + 1) * HIDDEN], &hidden))
            .collect();
        (hidden, logits)
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn sample(step: usize, index: usize) -> Vec<f32> {
    (0..INPUTS).map(|k| value(step, index, k, 1)).collect()
}

fn label(teacher: &Mlp, x: &[f32]) -> usize {
    let (_, logits) = teacher.forward(x);
    (0..CLASSES)
        .max_by(|&a, &b| logits[a].total_cmp(&logits[b]))
        .unwrap_or(0)
}

/// softmax(logits) - onehot(target), and -log softmax(logits)[target].
fn cross_entropy(logits: &[f32], target: usize) -> (Vec<f32>, f64) {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let exps: Vec<f64> = logits.iter().map(|&z| f64::from(z - max).exp()).collect();
    let sum: f64 = exps.iter().sum();
    let dlogits = exps
        .iter()
        .enumerate()
        .map(|(c, e)| (e / sum) as f32 - if c == target { 1.0 } else { 0.0 })
        .collect();
    (dlogits, sum.ln() - f64::from(logits[target] - max))
}

/// One step's forward and backward over this rank's samples: each layer's
/// gradient is written into the DDP's slices and marked ready as soon as it
/// is complete, the output layer's first. Returns this rank's summed loss.
fn forward_backward(
    ddp: &mut Ddp<'_, f32, Optimizer<'_, f32>>,
    teacher: &Mlp,
    step: usize,
    samples: std::ops::Range<usize>,
) -> Result<f64, dtrain::Error> {
    let model = {
        let opt = ddp.optimizer();
        Mlp {
            w1: opt.param(0).to_vec(),
            b1: opt.param(1).to_vec(),
            w2: opt.param(2).to_vec(),
            b2: opt.param(3).to_vec(),
        }
    };
    let scale = 1.0 / samples.len() as f32;
    let mut loss = 0.0;
    let mut grads = Mlp::zeros();
    let mut kept = Vec::with_capacity(samples.len()); // (x, hidden, dlogits) per sample
    for index in samples {
        let x = sample(step, index);
        let (hidden, logits) = model.forward(&x);
        let (dlogits, sample_loss) = cross_entropy(&logits, label(teacher, &x));
        loss += sample_loss;
        for c in 0..CLASSES {
            let dz = dlogits[c] * scale;
            grads.b2[c] += dz;
            for j in 0..HIDDEN {
                grads.w2[c * HIDDEN + j] += dz * hidden[j];
            }
        }
        kept.push((x, hidden, dlogits));
    }
    // The output layer is done: its gradients travel while the hidden layer's
    // are computed.
    ddp.grad_mut(2).copy_from_slice(&grads.w2);
    ddp.grad_mut(3).copy_from_slice(&grads.b2);
    ddp.mark_ready(3)?;
    ddp.mark_ready(2)?;
    for (x, hidden, dlogits) in &kept {
        for j in 0..HIDDEN {
            let dh: f32 = (0..CLASSES)
                .map(|c| model.w2[c * HIDDEN + j] * dlogits[c])
                .sum();
            let da = dh * (1.0 - hidden[j] * hidden[j]) * scale;
            grads.b1[j] += da;
            for k in 0..INPUTS {
                grads.w1[j * INPUTS + k] += da * x[k];
            }
        }
    }
    ddp.grad_mut(0).copy_from_slice(&grads.w1);
    ddp.grad_mut(1).copy_from_slice(&grads.b1);
    ddp.mark_ready(1)?;
    ddp.mark_ready(0)?;
    Ok(loss)
}

fn train(comm: &Comm<'_>, s: &Settings) -> Result<bool, dtrain::Error> {
    let (rank, size) = (comm.rank()? as usize, comm.size()? as usize);
    if s.batch % size != 0 {
        eprintln!(
            "train_mlp: --batch {} is not a multiple of the {size} ranks",
            s.batch
        );
        return Ok(false);
    }
    let teacher = Mlp::new(7);
    let mut model = Mlp::new(1);
    let mut grads = Mlp::zeros();
    let adamw = OptimizerOptions {
        kind: OptimizerKind::AdamW,
        lr: Some(s.lr),
        ..Default::default()
    };
    let mut optimizer = Optimizer::new(
        vec![
            &mut model.w1[..],
            &mut model.b1[..],
            &mut model.w2[..],
            &mut model.b2[..],
        ],
        vec![
            &mut grads.w1[..],
            &mut grads.b1[..],
            &mut grads.w2[..],
            &mut grads.b2[..],
        ],
        &adamw,
    )?;
    let mut ddp = Ddp::with_optimizer(comm, &mut optimizer, &DdpOptions::default())?;

    let per_rank = s.batch / size;
    let (mut first, mut last) = (0.0, 0.0);
    for step in 0..s.steps {
        let shard = rank * per_rank..(rank + 1) * per_rank;
        let local_loss = forward_backward(&mut ddp, &teacher, step, shard)?;
        ddp.wait(-1)?; // every gradient is now the mean over the global batch
        ddp.optimizer().step()?;
        let mut loss = [local_loss];
        comm.allreduce_in_place(&mut loss, ReduceOp::Sum)?;
        last = loss[0] / s.batch as f64;
        if step == 0 {
            first = last;
        }
        if rank == 0 && (step % s.log_every == 0 || step + 1 == s.steps) {
            println!("step {step:5}  loss {last:.5}");
        }
    }
    let opt = ddp.optimizer();
    let squares: f64 = (0..4)
        .flat_map(|i| opt.param(i).iter())
        .map(|&p| f64::from(p) * f64::from(p))
        .sum();
    if rank == 0 {
        println!("final loss {last:.9e}, parameters {squares:.9e}");
    }
    Ok(last < 0.5 * first)
}

fn main() -> ExitCode {
    let settings = match parse_settings() {
        Ok(s) => s,
        Err(message) => {
            eprintln!("train_mlp: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let comm = match Comm::new() {
        Ok(comm) => comm,
        Err(error) => {
            eprintln!("train_mlp: joining the job failed: {error}");
            return ExitCode::FAILURE;
        }
    };
    match train(&comm, &settings) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("train_mlp: the loss did not fall below half of the first step's");
            ExitCode::FAILURE
        }
        Err(error) => {
            // The other ranks hear of it at once instead of at their deadline.
            eprintln!("train_mlp: rank {}: {error}", comm.rank().unwrap_or(-1));
            let _ = comm.abort();
            ExitCode::FAILURE
        }
    }
}
