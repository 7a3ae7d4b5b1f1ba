//! PipelineSchedule: a schedule's actions, figures and refusals (the C++
//! tests check every kind's properties over all shapes).

mod common;

use dtrain::{
    ActionKind, PipelineAction, PipelineSchedule, PipelineScheduleOptions, ScheduleKind, Status,
};

use common::assert_error;

fn options(kind: ScheduleKind, stages: i32, microbatches: i32) -> PipelineScheduleOptions {
    PipelineScheduleOptions {
        kind,
        stages,
        microbatches,
        chunks: None,
    }
}

#[test]
fn one_f_one_b_on_two_ranks_lists_every_step() {
    let schedule = PipelineSchedule::new(&options(ScheduleKind::OneFOneB, 2, 2)).unwrap();
    let step = |kind, microbatch, peer| PipelineAction {
        kind,
        chunk: 0,
        microbatch,
        peer,
    };
    assert_eq!(
        schedule.actions(1).unwrap(),
        [
            step(ActionKind::RecvActivation, 0, Some(0)),
            step(ActionKind::Forward, 0, None),
            step(ActionKind::Backward, 0, None),
            step(ActionKind::SendGrad, 0, Some(0)),
            step(ActionKind::RecvActivation, 1, Some(0)),
            step(ActionKind::Forward, 1, None),
            step(ActionKind::Backward, 1, None),
            step(ActionKind::SendGrad, 1, Some(0)),
        ]
    );
    assert_eq!(schedule.len(0).unwrap(), 8);
    assert!((schedule.bubble_fraction().unwrap() - 1.0 / 3.0).abs() < 1e-12);
    assert_eq!(schedule.peak_in_flight(0).unwrap(), 2);
    assert_eq!(schedule.peak_in_flight(1).unwrap(), 1);
}

#[test]
fn zb_h1_splits_backward_and_interleaved_runs_chunks() {
    let zb = PipelineSchedule::new(&options(ScheduleKind::ZbH1, 4, 8)).unwrap();
    let kinds: Vec<ActionKind> = zb.actions(3).unwrap().iter().map(|a| a.kind).collect();
    assert!(kinds.contains(&ActionKind::BackwardWeight));
    assert!(!kinds.contains(&ActionKind::Backward));
    let interleaved = PipelineSchedule::new(&PipelineScheduleOptions {
        chunks: Some(3),
        ..options(ScheduleKind::Interleaved1F1B, 4, 8)
    })
    .unwrap();
    let most = interleaved
        .actions(0)
        .unwrap()
        .iter()
        .map(|a| a.chunk)
        .max();
    assert_eq!(most, Some(2));
    assert!((interleaved.bubble_fraction().unwrap() - 3.0 / 27.0).abs() < 1e-12);
}

#[test]
fn refusals_name_the_field() {
    let uneven = PipelineSchedule::new(&options(ScheduleKind::Interleaved1F1B, 4, 6));
    assert_error(
        uneven.map(|_| ()),
        Status::InvalidArgument,
        "opts->microbatches",
    );
    let no_stages = PipelineSchedule::new(&options(ScheduleKind::GPipe, 0, 6));
    assert_error(
        no_stages.map(|_| ()),
        Status::InvalidArgument,
        "opts->stages",
    );
    let schedule = PipelineSchedule::new(&options(ScheduleKind::GPipe, 2, 2)).unwrap();
    assert_error(
        schedule.actions(2).map(|_| ()),
        Status::InvalidArgument,
        "rank = 2",
    );
    assert_error(
        schedule.action(0, 8).map(|_| ()),
        Status::InvalidArgument,
        "index = 8",
    );
    assert_error(
        schedule.peak_in_flight(-1).map(|_| ()),
        Status::InvalidArgument,
        "rank = -1",
    );
}
