"""CUDA tensors through __dlpack__, checked on any machine with fake producers.

A fake CUDA tensor (ManualTensor on (KDL_CUDA, 0)) records what the binding
asks of it: the device first, then __dlpack__ with the stream libdtrain will
run on, so that the producer can order its pending work before it. Without a
usable CUDA device libdtrain refuses the tensor with UnsupportedError before
anything reads it (its data is host memory here).
"""

import numpy as np
import pytest

import dtrain
from dlpack_objects import KDL_CUDA, ManualTensor

FLOAT32 = dict(code=2, bits=32)  # kDLFloat, 32 bits


def has_cuda_device():
    return "cuda: compiled, no device" not in dtrain.build_info() and \
        "cuda: not compiled" not in dtrain.build_info()


def fake_cuda(count=4):
    return ManualTensor(np.zeros(count, np.float32), count=count, device=(KDL_CUDA, 0), **FLOAT32)


def fake_cpu(values):
    values = np.asarray(values, np.float32)
    return ManualTensor(values, count=values.size, **FLOAT32)


no_device = pytest.mark.skipif(has_cuda_device(), reason="this machine has a CUDA device; "
                               "the refusal without one cannot be observed here")


class TorchLikeStream:
    def __init__(self, handle):
        self.cuda_stream = handle


class CupyLikeStream:
    def __init__(self, handle):
        self.ptr = handle


class ProtocolStream:
    def __init__(self, handle):
        self._handle = handle

    def __cuda_stream__(self):
        return (0, self._handle)


@no_device
@pytest.mark.parametrize("stream, exported", [
    (None, 1),                            # DLPack's legacy default stream
    (1, 1), (2, 2),                       # legacy and per-thread default streams
    (0x7f00, 0x7f00),                     # a cudaStream_t address
    (-1, -1),                             # no synchronisation: the communicator's own stream
    (TorchLikeStream(0x5000), 0x5000),
    (TorchLikeStream(0), 1),              # torch's default stream has handle 0
    (CupyLikeStream(0x6000), 0x6000),
    (ProtocolStream(0x8000), 0x8000),
])
def test_cuda_tensor_gets_the_stream_and_is_refused_without_a_device(comm, stream, exported):
    tensor = fake_cuda()
    with pytest.raises(dtrain.UnsupportedError, match="send: CUDA tensors need a CUDA device"):
        comm.allreduce(tensor, stream=stream)
    assert [name for name, _ in tensor.calls] == ["__dlpack_device__", "__dlpack__"], \
        "the device decides whether a stream is passed, so it is asked first"
    assert tensor.streams == [exported]
    assert tensor.deleted == 1, "the refused tensor is given back"


@no_device
def test_every_operation_passes_its_stream(comm):
    n = comm.size
    calls = {
        "allreduce": lambda s, r: comm.allreduce(s, r, stream=3),
        "reduce_scatter": lambda s, r: comm.reduce_scatter(s, r, stream=3),
        "allgather": lambda s, r: comm.allgather(s, r, stream=3),
        "alltoall": lambda s, r: comm.alltoall(s, r, stream=3),
        "alltoallv": lambda s, r: comm.alltoallv(s, [4] * n, r, [4] * n, stream=3),
    }
    for name, call in calls.items():
        send, recv = fake_cuda(4 * n), fake_cuda(4 * n)
        with pytest.raises(dtrain.UnsupportedError, match="CUDA tensors need a CUDA device"):
            call(send, recv)
        assert (send.streams, recv.streams) == ([3], [3]), name
    for name, call in {
        "broadcast": lambda b: comm.broadcast(b, stream=3),
        "send": lambda b: comm.send(b, 0, stream=3),
        "recv": lambda b: comm.recv(b, 0, stream=3),
    }.items():
        buf = fake_cuda()
        with pytest.raises(dtrain.UnsupportedError, match="buf: CUDA tensors need a CUDA device"):
            call(buf)
        assert buf.streams == [3], name


@no_device
def test_async_refusal_and_tensor_check(comm):
    tensor = fake_cuda()
    with pytest.raises(dtrain.UnsupportedError):
        comm.allreduce(tensor, async_op=True, stream=2)
    assert tensor.deleted == 1
    # Converted for the call only: given back after the refusal, while the
    # refusal is being raised (the deleter here is Python code).
    checked = fake_cuda()
    with pytest.raises(dtrain.UnsupportedError, match="tensor: CUDA tensors need a CUDA device"):
        dtrain.tensor_check(checked)
    assert checked.deleted == 1


@no_device
def test_ddp_exports_cuda_gradients_with_its_stream(comm):
    grads = [fake_cuda(3), fake_cuda(5)]
    with pytest.raises(dtrain.UnsupportedError, match=r"gradients\[0\]: CUDA tensors need a CUDA device"):
        dtrain.DDP(comm, grads, stream=TorchLikeStream(0x5000))
    assert [g.streams for g in grads] == [[0x5000], [0x5000]]
    assert [g.deleted for g in grads] == [1, 1], "the refused gradients are given back"


def test_ddp_refuses_what_is_not_a_stream_before_any_export(comm):
    grad = fake_cuda()
    with pytest.raises(dtrain.InvalidArgumentError, match="stream: .* is not a CUDA stream"):
        dtrain.DDP(comm, [grad], stream=0)
    assert grad.streams == []


def test_ddp_host_gradients_ignore_the_stream(comm):
    grads = [np.full(3, 2.0, np.float32)]
    with dtrain.DDP(comm, grads, stream=0x7f00) as ddp:
        ddp.mark_ready(0)
        ddp.wait()
    np.testing.assert_array_equal(grads[0], [2, 2, 2])


def test_host_tensors_get_no_stream(comm):
    # The CPU fake raises BufferError when it is given a stream, as numpy does.
    send, recv = fake_cpu([1, 2, 3]), fake_cpu([0, 0, 0])
    comm.allreduce(send, recv, stream=0x7f00)
    np.testing.assert_array_equal(recv.storage, [1, 2, 3])
    assert (send.streams, recv.streams) == (["none"], ["none"])
    assert [name for name, _ in send.calls] == ["__dlpack_device__", "__dlpack__"]


def test_a_stream_with_numpy_arrays_is_ignored(comm):
    buf = np.arange(4, dtype=np.float32)
    comm.allreduce(buf, stream=2)
    request = comm.broadcast(buf, stream=TorchLikeStream(0x5000), async_op=True)
    request.wait()
    request.free()
    np.testing.assert_array_equal(buf, [0, 1, 2, 3])


@pytest.mark.parametrize("stream", [0, -2, True, "1", 1.0, object(), TorchLikeStream(-5),
                                    CupyLikeStream(None)])
def test_what_is_not_a_stream_is_refused_before_any_export(comm, stream):
    tensor = fake_cuda()
    with pytest.raises(dtrain.InvalidArgumentError, match="stream: .* is not a CUDA stream"):
        comm.allreduce(tensor, stream=stream)
    assert tensor.calls == []


def test_producers_without_dlpack_device_are_host_tensors(comm):
    class Old:
        """An exporter from before __dlpack_device__: no stream for it."""

        def __init__(self, array):
            self.array = array
            self.kwargs = []

        def __dlpack__(self, **kwargs):
            self.kwargs.append(kwargs)
            return self.array.__dlpack__()

    buf = Old(np.ones(3, np.float32))
    comm.allreduce(buf, stream=5)
    assert buf.kwargs == [{}]


def test_a_failing_dlpack_device_is_reported(comm):
    class Broken:
        def __dlpack__(self, **kwargs):
            raise AssertionError("__dlpack__ must not be called")

        def __dlpack_device__(self):
            raise RuntimeError("device query failed")

    with pytest.raises(dtrain.InvalidArgumentError, match="send: device query failed"):
        comm.allreduce(Broken())
