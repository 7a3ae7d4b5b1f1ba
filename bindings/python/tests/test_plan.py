"""dtrain.Plan and friends: a search read back, one configuration's verdict,
presets and cluster files, ZeRO memory against a live Zero, refusals."""

import json

import numpy as np
import pytest

import dtrain

MODEL = dtrain.PlanModel(layers=8, hidden=1024, heads=16, vocab=32000, seq_len=1024)


def test_search_ranks_fastest_first_and_counts_rejections(tmp_path):
    cluster = dtrain.cluster_preset("h100", nodes=2)
    with dtrain.Plan(MODEL, cluster, global_batch=64, keep=5) as plan:
        summary = plan.summary()
        assert summary["kept"] == 5 and summary["evaluated"] > summary["feasible"] > 0
        ranked = plan.ranked()
        steps = [e.time["step"] for e in ranked]
        assert steps == sorted(steps)
        for e in ranked:
            c = e.config
            assert c.dp * c.tp * c.pp * c.cp * c.ep == 16
            assert e.memory["total"] <= 0.9 * 80e9
            assert e.time["step"] == pytest.approx(sum(v for k, v in e.time.items() if k != "step"))
        rejections = plan.rejections()
        assert rejections[dtrain.PlanReason.EXPERTS_EP].count > 0
        assert "dense model" in rejections[dtrain.PlanReason.EXPERTS_EP].message
        assert dtrain.PlanReason.HEADS_TP not in rejections
        plan.write(tmp_path / "plan.json", "json", top=2)
        written = json.loads((tmp_path / "plan.json").read_text())
        assert [c["rank"] for c in written["configurations"]] == [1, 2]
        assert written["configurations"][0]["time"]["step"] == pytest.approx(steps[0], rel=1e-5)
        plan.write(tmp_path / "plan.svg", "svg", top=3)
        assert (tmp_path / "plan.svg").read_text().startswith("<svg")
        with pytest.raises(dtrain.IoError):
            plan.write(tmp_path / "missing" / "plan.svg", "svg")
        with pytest.raises(dtrain.InvalidArgumentError, match="format"):
            plan.write(tmp_path / "plan.txt", "pdf")
    with pytest.raises(dtrain.InvalidUsageError):
        plan.summary()


def test_evaluate_gives_the_estimate_or_the_reason():
    cluster = dtrain.cluster_preset("a100")
    e = dtrain.plan_evaluate(MODEL, cluster, dtrain.PlanConfig(tp=8), global_batch=64)
    assert e.reason == dtrain.PlanReason.ACCEPTED and e.time["tp"] > 0
    with pytest.raises(dtrain.PlanRejectedError, match=r"pp\*v = 16") as info:
        dtrain.plan_evaluate(MODEL, cluster, dtrain.PlanConfig(pp=8, schedule="interleaved_1f1b", virtual_stages=2),
                             global_batch=64)
    assert info.value.reason == dtrain.PlanReason.LAYERS_PP and info.value.estimate is None
    big = dtrain.PlanModel(layers=64, hidden=8192, heads=64, vocab=32000, seq_len=1024)
    with pytest.raises(dtrain.PlanRejectedError, match="needs") as info:
        dtrain.plan_evaluate(big, cluster, dtrain.PlanConfig(dp=8), global_batch=64)
    assert info.value.reason == dtrain.PlanReason.MEMORY
    assert info.value.estimate.memory["total"] > 72e9
    with pytest.raises(dtrain.InvalidArgumentError, match="recompute"):
        dtrain.plan_evaluate(MODEL, cluster, dtrain.PlanConfig(dp=8, recompute="some"), global_batch=64)


def test_presets_and_cluster_files(tmp_path):
    a100 = dtrain.cluster_preset("a100", nodes=4)
    assert (a100.nodes, a100.gpus_per_node, a100.peak_flops) == (4, 8, 312e12)
    with pytest.raises(dtrain.InvalidArgumentError, match="h200"):
        dtrain.cluster_preset("v100")
    path = tmp_path / "cluster.txt"
    path.write_text("preset = h200\nnodes = 3\ninter_bandwidth = 25e9\n")
    c = dtrain.cluster_load(path)
    assert (c.nodes, c.gpu_memory, c.inter_bandwidth) == (3, 141e9, 25e9)
    path.write_text("preset = h200\nspeed = 3\n")
    with pytest.raises(dtrain.InvalidArgumentError, match=":2: unknown key"):
        dtrain.cluster_load(path)
    with pytest.raises(dtrain.IoError):
        dtrain.cluster_load(tmp_path / "none.txt")


def test_search_limits_are_options():
    cluster = dtrain.cluster_preset("a100")
    with dtrain.Plan(MODEL, cluster, 64, dimensions=["tp"], zero_stages=[1], recompute=["full"], keep=1000) as plan:
        for e in plan.ranked():
            assert (e.config.pp, e.config.cp, e.config.ep, e.config.zero_stage) == (1, 1, 1, 1)
            assert e.config.recompute == dtrain.PlanRecompute.FULL
    # ZB-H1 only when asked: then every pipelined configuration runs it.
    nodes = dtrain.cluster_preset("h100", nodes=2)
    with dtrain.Plan(MODEL, nodes, 64, dimensions=["pp"], schedules=["zb_h1"], keep=1000) as plan:
        pipelined = [e.config for e in plan.ranked() if e.config.pp > 1]
        assert pipelined and all(c.schedule == dtrain.PipelineKind.ZB_H1 for c in pipelined)
    with dtrain.Plan(MODEL, nodes, 64, dimensions=["pp"], keep=1000) as plan:
        assert all(e.config.schedule != dtrain.PipelineKind.ZB_H1 for e in plan.ranked())
    bad = dtrain.PlanModel(layers=8, hidden=1024, heads=12, vocab=32000, seq_len=1024)
    with pytest.raises(dtrain.InvalidArgumentError, match="not divisible by model.heads"):
        dtrain.Plan(bad, cluster, 64)
    with pytest.raises(dtrain.InvalidArgumentError, match="global_batch"):
        dtrain.Plan(MODEL, cluster, 0)


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_zero_memory_predicts_a_live_zero(comm, stage):
    sizes = [500, 300, 201]
    params = [np.zeros(n, dtype=np.float32) for n in sizes]
    with dtrain.Zero(comm, params, stage=stage, unit_sizes=[1, 1, 1]) as zero:
        measured = zero.memory()
    assert dtrain.zero_memory(sizes, stage, ranks=1, dtype="float32") == measured
    with pytest.raises(dtrain.InvalidArgumentError):
        dtrain.zero_memory(sizes, stage, ranks=1, dtype="int8")
    with pytest.raises(dtrain.InvalidArgumentError):
        dtrain.zero_memory(sizes, stage, ranks=2, rank=2)
