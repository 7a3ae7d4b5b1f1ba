"""A picture of a pipeline schedule: ranks as rows, time to the right.

Every compute action of a rank becomes a box placed where it would run if
each forward took 1 unit and each backward 2 (zero-bubble schedules: forward,
input gradient and weight gradient 1 unit each), communication were free,
and every action started as soon as its rank was free and its input had
arrived: the same timing dtrain/pipeline.h states its bubble fractions for.
Boxes are coloured by micro-batch, darker for later passes, and labelled with
the pass and the micro-batch: F (forward), B (backward, or in zero-bubble
schedules its input-gradient half) and W (the weight-gradient half). Each
box's tooltip names its rank, chunk and micro-batch.
"""

from xml.sax.saxutils import escape

from ._constants import PipelineActionKind as A
from ._constants import PipelineKind
from ._constants import Status
from ._errors import InternalError

_KIND_TITLE = {PipelineKind.GPIPE: "GPipe", PipelineKind.ONE_F_ONE_B: "1F1B",
               PipelineKind.INTERLEAVED_1F1B: "interleaved 1F1B", PipelineKind.ZB_H1: "ZB-H1"}

_DURATION = {A.FORWARD: 1, A.BACKWARD: 2, A.BACKWARD_INPUT: 1, A.BACKWARD_WEIGHT: 1}
_LETTER = {A.FORWARD: "F", A.BACKWARD: "B", A.BACKWARD_INPUT: "B", A.BACKWARD_WEIGHT: "W"}
# Lightness of a micro-batch's colour, by pass: forwards light, backwards darker.
_LIGHTNESS = {A.FORWARD: 78, A.BACKWARD: 52, A.BACKWARD_INPUT: 52, A.BACKWARD_WEIGHT: 36}
_SENDS = (A.SEND_ACTIVATION, A.SEND_GRAD)
_GRADIENTS = (A.SEND_GRAD, A.RECV_GRAD)

_UNIT, _ROW, _LEFT, _TOP = 24, 30, 64, 34


def timeline(schedule):
    """{rank: [(start, action)]} of every compute action, with the unit durations above."""
    stages = schedule.stages
    lists = [schedule.actions(rank) for rank in range(stages)]
    position, clock = [0] * stages, [0] * stages
    posted = {}  # (gradient, sending stage, micro-batch) -> when
    placed = {rank: [] for rank in range(stages)}
    progress = True
    while progress:
        progress = False
        for rank, actions in enumerate(lists):
            while position[rank] < len(actions):
                action = actions[position[rank]]
                stage = action.chunk * stages + rank
                gradient = action.kind in _GRADIENTS
                if action.kind in _SENDS:
                    posted[(gradient, stage, action.microbatch)] = clock[rank]
                elif action.kind in _DURATION:
                    placed[rank].append((clock[rank], action))
                    clock[rank] += _DURATION[action.kind]
                else:
                    sender = (gradient, stage + 1 if gradient else stage - 1, action.microbatch)
                    if sender not in posted:
                        break
                    clock[rank] = max(clock[rank], posted.pop(sender))
                position[rank] += 1
                progress = True
    if any(position[rank] < len(actions) for rank, actions in enumerate(lists)):
        # The library made the schedule: a deadlock in it is the library's bug.
        raise InternalError(Status.ERR_INTERNAL, "the schedule's ranks wait on each other forever")
    return placed


def schedule_svg(schedule):
    """The SVG text of a picture of `schedule` (a dtrain.PipelineSchedule)."""
    microbatches = schedule.microbatches
    placed = timeline(schedule)
    end = max((start + _DURATION[a.kind] for row in placed.values() for start, a in row), default=0)
    width, height = _LEFT + end * _UNIT + 8, _TOP + schedule.stages * _ROW + 8
    title = (f"{_KIND_TITLE[schedule.kind]}: {schedule.stages} stages, {microbatches} micro-batches, "
             f"bubble {schedule.bubble_fraction:.0%}")
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'font-family="sans-serif" font-size="11">',
             f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="8" y="20" font-size="13">{escape(title)}</text>']
    for rank, row in placed.items():
        y = _TOP + rank * _ROW
        parts.append(f'<text x="8" y="{y + 18}">rank {rank}</text>')
        for start, action in row:
            x, w = _LEFT + start * _UNIT, _DURATION[action.kind] * _UNIT
            hue = round(360 * action.microbatch / microbatches)
            lightness = _LIGHTNESS[action.kind]
            text = "white" if lightness < 50 else "black"
            label = f"{_LETTER[action.kind]}{action.microbatch}"
            detail = (f"rank {rank}, chunk {action.chunk}, micro-batch {action.microbatch}: "
                      f"{action.kind.name.lower()}")
            parts.append(f'<g><title>{escape(detail)}</title>'
                         f'<rect x="{x}" y="{y}" width="{w}" height="{_ROW - 6}" '
                         f'fill="hsl({hue},70%,{lightness}%)" stroke="#333" stroke-width="0.5"/>'
                         f'<text x="{x + w / 2}" y="{y + 16}" text-anchor="middle" fill="{text}">'
                         f'{label}</text></g>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
