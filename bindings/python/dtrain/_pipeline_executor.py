"""The pipeline executor: runs this rank's list of a schedule, calling Python stage functions."""

import dataclasses

import numpy as np

from . import _capi
from ._constants import Status
from ._errors import Error, InvalidArgumentError
from ._handle import _Handle

# dlpack.h's DLDataTypeCode (kDLInt, kDLUInt, kDLFloat) of the numpy kinds an activation may have.
_DLPACK_CODES = {"i": 0, "u": 1, "f": 2}


@dataclasses.dataclass(frozen=True)
class PipelineStepInfo:
    """What one :meth:`Pipeline.step` measured on this rank (``dt_pipeline_step_info``).

    ``recv_wait_seconds`` is the time blocked on receives (this rank's idle
    time), ``comm_wait_seconds`` the time blocked in any wait,
    ``bubble_fraction`` their ratio to ``step_seconds`` for receives, and
    ``peak_in_flight`` the most (chunk, micro-batch) pairs alive at once.
    """
    step_seconds: float
    recv_wait_seconds: float
    comm_wait_seconds: float
    bubble_fraction: float
    peak_in_flight: int


class _StageFunctions:
    """What the C trampolines call: each method runs the trainer's function
    and returns a status, keeping the first exception for step()."""

    def __init__(self, dtype, forward, backward, backward_weight, chunk_done):
        self.dtype = dtype
        self.forward = forward
        self.backward = backward
        self.backward_weight = backward_weight
        self.chunk_done = chunk_done
        self.error = None

    def _array(self, view):
        return None if view is None else np.frombuffer(view, dtype=self.dtype)

    def _run(self, function, *args):
        try:
            function(*args)
            return int(Status.OK)
        except BaseException as exc:  # noqa: B902 - nothing may unwind into C
            if self.error is None:
                self.error = exc
            return int(exc.status) if isinstance(exc, Error) else int(Status.ERR_ABORTED)

    def _forward(self, chunk, microbatch, input_view, output_view):
        return self._run(self.forward, chunk, microbatch, self._array(input_view), self._array(output_view))

    def _backward(self, chunk, microbatch, grad_output_view, grad_input_view):
        return self._run(self.backward, chunk, microbatch, self._array(grad_output_view),
                         self._array(grad_input_view))

    def _backward_weight(self, chunk, microbatch):
        return self._run(self.backward_weight, chunk, microbatch)

    def _chunk_done(self, chunk):
        return self._run(self.chunk_done, chunk)


class Pipeline(_Handle):
    """Runs this rank's list of a :class:`PipelineSchedule` (see dtrain/pipeline.h).

    ``comm`` is the pipeline group (its size must be the schedule's stages).
    Every activation between stages, and its gradient, is a flat numpy array
    of ``activation_elements`` elements of ``dtype``, owned by the executor
    and valid only during the call that gets it (copy what you keep)::

        def forward(chunk, microbatch, input, output): ...          # input None on the first stage,
                                                                     # output None on the last
        def backward(chunk, microbatch, grad_output, grad_input): ...  # grad_output None on the last,
                                                                       # grad_input None on the first
        p = dtrain.Pipeline(comm, schedule, 16, "float32", forward, backward)
        info = p.step()

    ``backward_weight(chunk, microbatch)`` is required for ZB_H1 schedules
    and refused otherwise; ``chunk_done(chunk)`` is called once per chunk and
    step after its last weight gradient. An exception in any of them ends the
    step on this rank and is raised again from :meth:`step`, its cause the
    library's error naming the rank and action. After a failed step the
    communicator is broken. ``close()`` frees it.
    """

    _noun = "Pipeline"

    def __init__(self, comm, schedule, activation_elements, dtype, forward, backward, backward_weight=None,
                 chunk_done=None):
        dtype = np.dtype(dtype)
        if dtype.kind not in _DLPACK_CODES:
            raise InvalidArgumentError(Status.ERR_INVALID_ARGUMENT, f"dtype: {dtype} is not a number type")
        self._stages = _StageFunctions(dtype, forward, backward, backward_weight, chunk_done)
        opts = _capi.dt_pipeline_options()
        _capi.dt_pipeline_options_init(opts, _capi.DT_PIPELINE_OPTIONS_VERSION)
        _capi.dtpy_pipeline_options_set(opts, int(activation_elements), _DLPACK_CODES[dtype.kind], dtype.itemsize * 8, self._stages,
                                        backward_weight is not None, chunk_done is not None)
        self._handle = _capi.dt_pipeline_create(comm._live(), schedule._live(), opts)

    def step(self):
        """Runs one training step; returns its :class:`PipelineStepInfo`."""
        self._stages.error = None
        try:
            info = _capi.dt_pipeline_step(self._live())
        except Error as error:
            raised, self._stages.error = self._stages.error, None
            if raised is not None:
                raise raised from error
            raise
        return PipelineStepInfo(*info)

    def close(self):
        """Frees the executor. Safe twice."""
        handle, self._handle = self._handle, None
        if handle is not None:
            _capi.dt_pipeline_destroy(handle)

    def __repr__(self):
        return "<dtrain.Pipeline closed>" if self._handle is None else "<dtrain.Pipeline>"
