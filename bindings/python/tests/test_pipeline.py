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


def test_the_picture_places_every_compute_action_with_unit_durations():
    import xml.etree.ElementTree as ET

    s = dtrain.PipelineSchedule("zb_h1", 3, 4)
    root = ET.fromstring(s.to_svg())
    ns = {"svg": "http://www.w3.org/2000/svg"}
    boxes = root.findall("svg:g/svg:rect", ns)
    assert len(boxes) == 3 * 3 * 4  # F, B and W of 4 micro-batches on 3 ranks
    assert {float(b.get("width")) for b in boxes} == {24.0}
    labels = sorted(t.text for t in root.findall("svg:g/svg:text", ns))
    assert labels.count("W3") == 3 and labels.count("F0") == 3
    # The makespan is the closed form's: busy 3 m units per rank, idle the rest.
    busy = 3 * 4
    makespan = (float(root.get("width")) - 64 - 8) / 24
    assert (makespan - busy) / makespan == pytest.approx(s.bubble_fraction)
    s.close()
    with pytest.raises(dtrain.InvalidUsageError):
        s.to_svg()
