//! Pipeline: the executor on a world of one, with two chunks handing over
//! locally (interleaved 1F1B, p = 1, v = 2). The model is y = w1 * (w0 * x)
//! per element, the loss the sum of y: the gradients are known exactly.

mod common;

use std::cell::RefCell;

use dtrain::{
    Pipeline, PipelineSchedule, PipelineScheduleOptions, ScheduleKind, StageFunctions, Status,
};

use common::{assert_error, world};

const ELEMENTS: usize = 4;
const W0: f32 = 2.0;
const W1: f32 = 3.0;

fn batch(microbatch: i32) -> Vec<f32> {
    (0..ELEMENTS)
        .map(|i| (microbatch * 10 + i as i32) as f32)
        .collect()
}

fn schedule(kind: ScheduleKind, chunks: Option<i32>) -> PipelineSchedule {
    PipelineSchedule::new(&PipelineScheduleOptions {
        kind,
        stages: 1,
        microbatches: 2,
        chunks,
    })
    .unwrap()
}

#[derive(Default)]
struct Trainer {
    loss: f32,
    grad_w0: f32,
    grad_w1: f32,
    saved_inputs: Vec<Vec<f32>>,
    chunks_done: Vec<i32>,
}

fn functions(trainer: &RefCell<Trainer>) -> StageFunctions<'_, f32> {
    StageFunctions {
        forward: Box::new(move |chunk, microbatch, input, output| {
            let mut t = trainer.borrow_mut();
            if chunk == 0 {
                assert!(input.is_none());
                for (o, x) in output.unwrap().iter_mut().zip(batch(microbatch)) {
                    *o = W0 * x;
                }
            } else {
                assert!(output.is_none());
                let input = input.unwrap().to_vec();
                t.loss += input.iter().map(|h| W1 * h).sum::<f32>();
                t.saved_inputs.push(input);
            }
            Ok(())
        }),
        backward: Box::new(move |chunk, microbatch, grad_output, grad_input| {
            let mut t = trainer.borrow_mut();
            if chunk == 1 {
                let h = t.saved_inputs.remove(0);
                t.grad_w1 += h.iter().sum::<f32>();
                grad_input.unwrap().fill(W1);
            } else {
                let g = grad_output.unwrap();
                t.grad_w0 += g
                    .iter()
                    .zip(batch(microbatch))
                    .map(|(g, x)| g * x)
                    .sum::<f32>();
            }
            Ok(())
        }),
        backward_weight: None,
        chunk_done: Some(Box::new(move |chunk| {
            trainer.borrow_mut().chunks_done.push(chunk);
            Ok(())
        })),
    }
}

#[test]
fn two_local_chunks_give_the_exact_gradients() {
    let comm = world();
    let trainer = RefCell::new(Trainer::default());
    let schedule = schedule(ScheduleKind::Interleaved1F1B, Some(2));
    let mut pipeline = Pipeline::new(&comm, &schedule, ELEMENTS, functions(&trainer)).unwrap();
    let info = pipeline.step().unwrap();
    drop(pipeline);
    let t = trainer.into_inner();
    let xs: f32 = (0..2).flat_map(batch).sum();
    assert_eq!(t.loss, W1 * W0 * xs);
    assert_eq!(t.grad_w1, W0 * xs);
    assert_eq!(t.grad_w0, W1 * xs);
    assert_eq!(t.chunks_done, vec![1, 0]);
    assert_eq!(info.peak_in_flight, schedule.peak_in_flight(0).unwrap());
    assert!(info.step_seconds > 0.0);
}

#[test]
fn an_error_from_a_closure_ends_the_step_naming_the_action() {
    let comm = world();
    let functions = StageFunctions::<f32> {
        forward: Box::new(|_, microbatch, _, _| {
            if microbatch == 1 {
                Err(dtrain::Error::new(Status::InvalidUsage, "no"))
            } else {
                Ok(())
            }
        }),
        backward: Box::new(|_, _, _, _| Ok(())),
        backward_weight: None,
        chunk_done: None,
    };
    let mut pipeline = Pipeline::new(
        &comm,
        &schedule(ScheduleKind::GPipe, None),
        ELEMENTS,
        functions,
    )
    .unwrap();
    assert_error(
        pipeline.step(),
        Status::InvalidUsage,
        "rank 0: FORWARD of chunk 0, micro-batch 1",
    );
}

#[test]
fn a_panic_in_a_closure_comes_back_from_step() {
    let comm = world();
    let functions = StageFunctions::<f32> {
        forward: Box::new(|_, _, _, _| panic!("stage exploded")),
        backward: Box::new(|_, _, _, _| Ok(())),
        backward_weight: None,
        chunk_done: None,
    };
    let mut pipeline = Pipeline::new(
        &comm,
        &schedule(ScheduleKind::OneFOneB, None),
        ELEMENTS,
        functions,
    )
    .unwrap();
    let payload =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pipeline.step())).unwrap_err();
    assert_eq!(payload.downcast_ref::<&str>(), Some(&"stage exploded"));
}

#[test]
fn zero_bubble_needs_backward_weight() {
    let comm = world();
    let functions = StageFunctions::<f32> {
        forward: Box::new(|_, _, _, _| Ok(())),
        backward: Box::new(|_, _, _, _| Ok(())),
        backward_weight: None,
        chunk_done: None,
    };
    assert_error(
        Pipeline::new(
            &comm,
            &schedule(ScheduleKind::ZbH1, None),
            ELEMENTS,
            functions,
        )
        .map(|_| ()),
        Status::InvalidArgument,
        "opts->backward_weight",
    );
}
