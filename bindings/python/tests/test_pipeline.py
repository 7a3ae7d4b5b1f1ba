"""dtrain.PipelineSchedule: a schedule's actions, figures and refusals (the
C++ tests check every kind's properties over all shapes)."""

import pytest

import dtrain
from dtrain import PipelineAction, PipelineActionKind as A


def test_1f1b_on_two_ranks_lists_every_step():
    with dtrain.PipelineSchedule("1f1b", stages=2, microbatches=2) as s:
        assert s.kind == dtrain.PipelineKind.ONE_F_ONE_B and s.stages == 2
        assert s.actions(0) == [
            PipelineAction(A.FORWARD, 0, 0, -1), PipelineAction(A.SEND_ACTIVATION, 0, 0, 1),
            PipelineAction(A.FORWARD, 0, 1, -1), PipelineAction(A.SEND_ACTIVATION, 0, 1, 1),
            PipelineAction(A.RECV_GRAD, 0, 0, 1), PipelineAction(A.BACKWARD, 0, 0, -1),
            PipelineAction(A.RECV_GRAD, 0, 1, 1), PipelineAction(A.BACKWARD, 0, 1, -1)]
        assert s.length(1) == len(s.actions(1)) == 8
        assert s.bubble_fraction == pytest.approx(1 / 3)
        assert [s.peak_in_flight(r) for r in range(2)] == [2, 1]
    assert s.closed


def test_zb_h1_splits_backward_and_interleaved_runs_chunks():
    zb = dtrain.PipelineSchedule(dtrain.PipelineKind.ZB_H1, 4, 8)
    kinds = {a.kind for a in zb.actions(3)}
    assert A.BACKWARD_INPUT in kinds and A.BACKWARD_WEIGHT in kinds and A.BACKWARD not in kinds
    assert zb.bubble_fraction == pytest.approx(3 / 27)
    interleaved = dtrain.PipelineSchedule("interleaved_1f1b", 4, 8, chunks=3)
    assert {a.chunk for a in interleaved.actions(0)} == {0, 1, 2}
    assert interleaved.bubble_fraction == pytest.approx(3 / 27)


def test_refusals_name_the_field():
    with pytest.raises(dtrain.InvalidArgumentError, match="opts->microbatches"):
        dtrain.PipelineSchedule("interleaved_1f1b", 4, 6)
    with pytest.raises(dtrain.InvalidArgumentError, match="opts->chunks"):
        dtrain.PipelineSchedule("gpipe", 4, 6, chunks=2)
    with pytest.raises(dtrain.InvalidArgumentError, match="opts->stages"):
        dtrain.PipelineSchedule("1f1b", 0, 6)
    with pytest.raises(dtrain.InvalidArgumentError, match="opts->kind"):
        dtrain.PipelineSchedule(9, 2, 2)
    with pytest.raises(dtrain.InvalidArgumentError, match="kind"):
        dtrain.PipelineSchedule("pipedream", 2, 2)
    with pytest.raises(dtrain.InvalidArgumentError, match="stages"):
        dtrain.PipelineSchedule("1f1b", 2.5, 2)
    s = dtrain.PipelineSchedule("gpipe", 2, 2)
    with pytest.raises(dtrain.InvalidArgumentError, match="rank = 2"):
        s.actions(2)
    with pytest.raises(dtrain.InvalidArgumentError, match="index = 8"):
        s.action(0, 8)
    s.close()
    with pytest.raises(dtrain.InvalidUsageError):
        s.length(0)
