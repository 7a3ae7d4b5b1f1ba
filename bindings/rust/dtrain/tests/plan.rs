//! The planner through the safe API: a search read back, one configuration's
//! verdict, presets and cluster files, and ZeRO memory against a live Zero.

mod common;

use dtrain::{
    cluster_load, cluster_preset, plan_evaluate, zero_memory, DataType, OptimizerOptions, Plan,
    PlanConfig, PlanFormat, PlanModel, PlanOptions, PlanReason, ScheduleKind, Status, Zero,
    ZeroOptions,
};

fn model() -> PlanModel {
    PlanModel::new(8, 1024, 16, 32000, 1024)
}

#[test]
fn search_ranks_fastest_first_and_counts_rejections() {
    let options = PlanOptions {
        keep: Some(5),
        ..PlanOptions::new(64)
    };
    let plan = Plan::new(&model(), &cluster_preset("h100", 2).unwrap(), &options).unwrap();
    let summary = plan.summary().unwrap();
    assert_eq!(summary.kept, 5);
    assert!(summary.evaluated > summary.feasible && summary.feasible > 0);
    let mut previous = 0.0;
    for i in 0..summary.kept {
        let e = plan.ranked(i).unwrap();
        assert_eq!(e.reason, PlanReason::Accepted);
        assert!(e.time.step >= previous);
        previous = e.time.step;
        let c = e.config;
        assert_eq!(c.dp * c.tp * c.pp * c.cp * c.ep, 16);
        assert!((e.memory.total as f64) <= 0.9 * 80e9);
    }
    assert_eq!(plan.ranked(5).unwrap_err().status, Status::InvalidArgument);
    let ep = plan
        .rejection(PlanReason::ExpertsEp)
        .unwrap()
        .expect("ep rejected on a dense model");
    assert!(
        ep.count > 0 && ep.example.ep > 1 && ep.message.contains("dense model"),
        "{ep:?}"
    );
    assert!(plan.rejection(PlanReason::HeadsTp).unwrap().is_none());
    let path = std::env::temp_dir().join(format!("dtrain_rust_plan_{}.json", std::process::id()));
    plan.write(&path, PlanFormat::Json, 2).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("\"rank\": 2") && !text.contains("\"rank\": 3"));
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        plan.write("/nonexistent/dir/plan.svg", PlanFormat::Svg, 1)
            .unwrap_err()
            .status,
        Status::Io
    );
}

#[test]
fn evaluate_gives_the_estimate_or_the_reason() {
    let cluster = cluster_preset("a100", 1).unwrap();
    let options = PlanOptions::new(64);
    let e = plan_evaluate(
        &model(),
        &cluster,
        &options,
        &PlanConfig {
            tp: 8,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(e.reason, PlanReason::Accepted);
    assert!(e.time.tp > 0.0);
    let interleaved = PlanConfig {
        pp: 8,
        schedule: ScheduleKind::Interleaved1F1B,
        virtual_stages: 2,
        ..Default::default()
    };
    let e = plan_evaluate(&model(), &cluster, &options, &interleaved).unwrap();
    assert_eq!(e.reason, PlanReason::LayersPp);
    assert!(
        e.rejection.as_deref().unwrap().contains("pp*v = 16"),
        "{:?}",
        e.rejection
    );
    let big = PlanModel::new(64, 8192, 64, 32000, 1024);
    let e = plan_evaluate(
        &big,
        &cluster,
        &options,
        &PlanConfig {
            dp: 8,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(e.reason, PlanReason::Memory);
    assert!(e.memory.total as f64 > 72e9);
    let bad = PlanConfig {
        zero_stage: 4,
        dp: 8,
        ..Default::default()
    };
    assert_eq!(
        plan_evaluate(&model(), &cluster, &options, &bad)
            .unwrap_err()
            .status,
        Status::InvalidArgument
    );
    let no_batch = PlanOptions::new(0);
    assert!(Plan::new(&model(), &cluster, &no_batch)
        .unwrap_err()
        .message
        .contains("global_batch"));
}

#[test]
fn presets_and_cluster_files() {
    let a100 = cluster_preset("a100", 4).unwrap();
    assert_eq!(
        (a100.nodes, a100.gpus_per_node, a100.peak_flops),
        (4, 8, 312e12)
    );
    assert!(cluster_preset("v100", 1)
        .unwrap_err()
        .message
        .contains("h200"));
    let path = std::env::temp_dir().join(format!("dtrain_rust_cluster_{}.txt", std::process::id()));
    std::fs::write(&path, "preset = h200\nnodes = 3\ninter_bandwidth = 25e9\n").unwrap();
    let c = cluster_load(&path).unwrap();
    assert_eq!((c.nodes, c.gpu_memory, c.inter_bandwidth), (3, 141e9, 25e9));
    std::fs::remove_file(&path).unwrap();
    assert_eq!(cluster_load(&path).unwrap_err().status, Status::Io);
}

#[test]
fn zero_memory_predicts_a_live_zero() {
    let comm = common::world();
    let sizes = [500i64, 300, 201];
    for stage in 0..4 {
        let params: Vec<Vec<f32>> = sizes.iter().map(|&n| vec![0.0f32; n as usize]).collect();
        let slices: Vec<&[f32]> = params.iter().map(|p| p.as_slice()).collect();
        let options = ZeroOptions {
            stage,
            unit_sizes: Some(vec![1, 1, 1]),
            ..Default::default()
        };
        let zero = Zero::new(&comm, &slices, &OptimizerOptions::default(), &options).unwrap();
        let measured = zero.memory().unwrap();
        let predicted = zero_memory(
            &sizes,
            stage,
            1,
            0,
            DataType::F32,
            &OptimizerOptions::default(),
        )
        .unwrap();
        assert_eq!(predicted, measured, "stage {stage}");
    }
    let error =
        zero_memory(&sizes, 1, 2, 2, DataType::F32, &OptimizerOptions::default()).unwrap_err();
    assert_eq!(error.status, Status::InvalidArgument);
}
