"""dtrain.Pipeline on a world of one: two chunks handing over locally
(interleaved 1F1B, p = 1, v = 2). The model is y = w1 * (w0 * x) per element
and the loss the sum of y, so the gradients are exact."""

import threading

import numpy as np
import pytest

import dtrain

N = 4
W0, W1 = 2.0, 3.0


def batch(microbatch):
    return np.arange(N, dtype=np.float32) + 10 * microbatch


class Trainer:
    def __init__(self):
        self.loss = self.grad_w0 = self.grad_w1 = 0.0
        self.saved = []
        self.done = []
        self.threads = set()

    def forward(self, chunk, microbatch, input, output):
        self.threads.add(threading.get_ident())
        if chunk == 0:
            assert input is None
            output[:] = W0 * batch(microbatch)
        else:
            assert output is None
            self.saved.append(input.copy())
            self.loss += float(np.sum(W1 * input))

    def backward(self, chunk, microbatch, grad_output, grad_input):
        if chunk == 1:
            assert grad_output is None
            self.grad_w1 += float(np.sum(self.saved.pop(0)))
            grad_input[:] = W1
        else:
            assert grad_input is None
            self.grad_w0 += float(np.sum(grad_output * batch(microbatch)))

    def chunk_done(self, chunk):
        self.done.append(chunk)


def test_two_local_chunks_give_the_exact_gradients(comm):
    schedule = dtrain.PipelineSchedule("interleaved_1f1b", stages=1, microbatches=2, chunks=2)
    t = Trainer()
    with dtrain.Pipeline(comm, schedule, N, np.float32, t.forward, t.backward, chunk_done=t.chunk_done) as p:
        info = p.step()
    xs = float(np.sum(batch(0)) + np.sum(batch(1)))
    assert t.loss == W1 * W0 * xs
    assert t.grad_w1 == W0 * xs
    assert t.grad_w0 == W1 * xs
    assert t.done == [1, 0]
    assert t.threads == {threading.get_ident()}
    assert info.peak_in_flight == schedule.peak_in_flight(0)
    assert info.step_seconds > 0 and 0 <= info.bubble_fraction < 1


def test_an_exception_in_a_callback_is_raised_from_step(comm):
    schedule = dtrain.PipelineSchedule("gpipe", stages=1, microbatches=2)

    def forward(chunk, microbatch, input, output):
        if microbatch == 1:
            raise KeyError("stage exploded")

    with dtrain.Pipeline(comm, schedule, N, "float32", forward, lambda *args: None) as p:
        with pytest.raises(KeyError, match="stage exploded") as caught:
            p.step()
    assert isinstance(caught.value.__cause__, dtrain.AbortedError)
    assert "rank 0: FORWARD of chunk 0, micro-batch 1" in str(caught.value.__cause__)


def test_a_dtrain_error_keeps_its_status(comm):
    schedule = dtrain.PipelineSchedule("1f1b", stages=1, microbatches=1)

    def backward(chunk, microbatch, grad_output, grad_input):
        raise dtrain.InvalidUsageError(dtrain.Status.ERR_INVALID_USAGE, "not now")

    with dtrain.Pipeline(comm, schedule, N, "float32", lambda *args: None, backward) as p:
        with pytest.raises(dtrain.InvalidUsageError) as caught:
            p.step()
    assert "BACKWARD of chunk 0, micro-batch 0" in str(caught.value.__cause__)


def test_refusals_name_the_field(comm):
    zero_bubble = dtrain.PipelineSchedule("zb_h1", stages=1, microbatches=2)
    nothing = lambda *args: None  # noqa: E731
    with pytest.raises(dtrain.InvalidArgumentError, match="opts->backward_weight"):
        dtrain.Pipeline(comm, zero_bubble, N, "float32", nothing, nothing)
    with pytest.raises(dtrain.InvalidArgumentError, match="opts->activation_elements"):
        dtrain.Pipeline(comm, zero_bubble, 0, "float32", nothing, nothing, backward_weight=nothing)
    with pytest.raises(dtrain.InvalidArgumentError, match="dtype"):
        dtrain.Pipeline(comm, zero_bubble, N, "complex64", nothing, nothing, backward_weight=nothing)
    wider = dtrain.PipelineSchedule("1f1b", stages=2, microbatches=2)
    with pytest.raises(dtrain.InvalidArgumentError, match="comm has 1 ranks"):
        dtrain.Pipeline(comm, wider, N, "float32", nothing, nothing)
