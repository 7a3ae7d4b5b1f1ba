"""CUDA tensors from torch and cupy on a real device (pytest marker ``gpu``).

CTest runs these as python_gpu (label gpu); each test skips, saying why,
where the framework, its CUDA support or a device libdtrain can use is
missing. Out-of-place operations on a side stream show the ordering: the
input is written by a kernel queued on that stream just before the call, and
the result is read by work queued after it, with no synchronisation between.
"""

import numpy as np
import pytest

import dtrain

pytestmark = pytest.mark.gpu

N = 1 << 22  # large enough that the kernels producing the input take a while


def require_device():
    info = dtrain.build_info()
    if "cuda: compiled, no device" in info or "cuda: not compiled" in info:
        pytest.skip(f"libdtrain has no usable CUDA device ({info})")


def torch_cuda():
    torch = pytest.importorskip("torch", reason="torch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("torch sees no CUDA device (torch.cuda.is_available() is False)")
    require_device()
    return torch


def cupy_cuda():
    cupy = pytest.importorskip("cupy", reason="cupy is not installed")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("cupy sees no CUDA device")
    except cupy.cuda.runtime.CUDARuntimeError as e:
        pytest.skip(f"cupy sees no CUDA device ({e})")
    require_device()
    return cupy


def test_torch_allreduce_on_a_side_stream():
    torch = torch_cuda()
    with dtrain.Comm(device=0) as comm:
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            send = torch.arange(N, device="cuda", dtype=torch.float32).sin_().mul_(3)
            recv = torch.empty_like(send)
            comm.allreduce(send, recv, op="sum", stream=stream)
            doubled = recv * 2
        stream.synchronize()
        expected = torch.arange(N, dtype=torch.float32).sin_().mul_(3) * 2
        assert torch.allclose(doubled.cpu(), expected)


def test_torch_default_stream_and_async():
    torch = torch_cuda()
    with dtrain.Comm(device=0) as comm:
        send = torch.full((N,), 1.5, device="cuda", dtype=torch.bfloat16)
        recv = torch.zeros_like(send)
        request = comm.allreduce(send, recv, op="max", async_op=True)
        request.wait()
        request.free()
        assert torch.equal(recv.cpu(), torch.full((N,), 1.5, dtype=torch.bfloat16))


def test_cupy_allreduce_on_a_side_stream():
    cupy = cupy_cuda()
    with dtrain.Comm(device=0) as comm:
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            send = cupy.sin(cupy.arange(N, dtype=cupy.float32)) * 3
            recv = cupy.empty_like(send)
            comm.allreduce(send, recv, stream=stream)
            doubled = recv * 2
        stream.synchronize()
        expected = cupy.sin(cupy.arange(N, dtype=cupy.float32)) * 6
        assert bool(cupy.allclose(doubled, expected))


def test_torch_ddp_on_a_side_stream():
    """CUDA gradients written by backward on a side stream, marked at once:
    the DDP's copies wait for that stream, and wait() leaves the averages."""
    torch = torch_cuda()
    with dtrain.Comm(device=0) as comm:
        stream = torch.cuda.Stream()
        grads = [torch.zeros(N, device="cuda"), torch.zeros(7, device="cuda")]
        with dtrain.DDP(comm, grads, bucket_bytes=1 << 20, stream=stream) as ddp, torch.cuda.stream(stream):
            for step in range(2):
                for i in reversed(range(len(grads))):
                    n = grads[i].numel()
                    grads[i].copy_(torch.arange(n, device="cuda", dtype=torch.float32).sin_().add_(step))
                    ddp.mark_ready(i)
                ddp.wait()
                for g in grads:
                    n = g.numel()
                    # Computed by the same kernels as the gradients: the
                    # CPU's sin differs from the GPU's in the last bits.
                    expected = torch.arange(n, device="cuda", dtype=torch.float32).sin_().add_(step)
                    assert torch.equal(g, expected), f"step {step}, {n} elements"


def test_torch_zero_on_a_side_stream_equals_host_zero():
    """dtrain.Zero over torch CUDA parameters, trained on a side stream, against
    the same Zero over numpy copies: every parameter agrees after each step. Each
    gradient is added by a kernel queued behind a spin on the side stream and
    marked at once, so a reduction not ordered after that stream would read a
    buffer still holding zeros."""
    torch = torch_cuda()

    rng = np.random.default_rng(0)
    shapes = [(64, 33), (33,), (7, 64)]
    init = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    with dtrain.Comm(device=0) as comm:
        stream = torch.cuda.Stream()
        for stage in (0, 1, 2, 3):
            params = [torch.from_numpy(a).cuda() for a in init]
            torch.cuda.synchronize()
            kwargs = dict(stage=stage, unit_sizes=[1, 1, 1], lr=0.01)
            with dtrain.Zero(comm, [a.copy() for a in init], **kwargs) as host, \
                    dtrain.Zero(comm, params, stream=stream, **kwargs) as gpu:
                for step in range(3):
                    grads = [rng.standard_normal(s).astype(np.float32) for s in shapes]
                    for i in reversed(range(len(shapes))):
                        with host.unit(i):
                            host.gradient(i)[...] += grads[i]
                            host.mark_ready(i)
                    host.wait()
                    host.step()
                    with torch.cuda.stream(stream):
                        for i in reversed(range(len(shapes))):
                            with gpu.unit(i):
                                g = gpu.gradient(i)
                                assert isinstance(g, dtrain.DeviceArray)
                                update = torch.from_numpy(grads[i]).to("cuda")
                                torch.cuda._sleep(2_000_000)
                                torch.from_dlpack(g).add_(update)
                                gpu.mark_ready(i)
                        gpu.wait()
                        gpu.step()
                    for i in range(len(shapes)):
                        with host.unit(i), gpu.unit(i):
                            p = torch.from_dlpack(gpu.parameter(i))
                            assert p.device == torch.device("cuda", 0) and tuple(p.shape) == shapes[i]
                            np.testing.assert_allclose(p.cpu().numpy(), host.parameter(i), rtol=1e-5, atol=1e-6,
                                                       err_msg=f"stage {stage}, step {step}, parameter {i}")


def test_torch_tensor_parallel_mlp_on_cuda_equals_host():
    """A Megatron MLP block (column- then row-parallel linear, GELU between)
    forward and backward on torch CUDA tensors written on the default stream
    just before each call, against the same calls on host tensors."""
    torch = torch_cuda()
    from dtrain import tp

    gen = torch.Generator().manual_seed(7)
    T, H, F = 64, 32, 128
    host = {name: torch.randn(*shape, generator=gen)
            for name, shape in {"x": (T, H), "w1": (F, H), "b1": (F,), "w2": (H, F), "b2": (H,),
                                "dy": (T, H)}.items()}

    def block(t, device):
        h = torch.empty(T, F, device=device)
        y = torch.empty(T, H, device=device)
        tp.column_linear_forward(comm, t["x"], t["w1"], t["b1"], h)
        a = torch.nn.functional.gelu(h)
        tp.row_linear_forward(comm, a, t["w2"], t["b2"], y)
        da, dw2, db2 = torch.empty_like(a), torch.empty_like(t["w2"]), torch.empty_like(t["b2"])
        tp.row_linear_backward(comm, a, t["w2"], t["dy"], da, dw2, db2)
        h.requires_grad_(True)
        torch.nn.functional.gelu(h).backward(da)
        dh = h.grad.detach().contiguous()
        dx, dw1, db1 = torch.empty_like(t["x"]), torch.empty_like(t["w1"]), torch.empty_like(t["b1"])
        tp.column_linear_backward(comm, t["x"], t["w1"], dh, dx, dw1, db1)
        return {"y": y, "dx": dx, "dw1": dw1, "db1": db1, "dw2": dw2, "db2": db2}

    with dtrain.Comm(device=0) as comm:
        want = block(host, "cpu")
        # Inputs made by kernels on torch's default (legacy) stream, which the calls wait for.
        device = {name: (value * 3).cuda().div_(3) for name, value in host.items()}
        got = block(device, "cuda")
        torch.cuda.synchronize()
    for name, value in want.items():
        scale = value.abs().max().item()
        assert (got[name].cpu() - value).abs().max().item() <= 1e-4 * scale, name


def test_torch_moe_layer_on_cuda_equals_host():
    torch = torch_cuda()
    from test_moe import as_numpy, moe_layer
    with dtrain.Comm(device=0) as comm:
        want = as_numpy(moe_layer(comm, lambda a: a))
        results = moe_layer(comm, lambda a: torch.from_numpy(a).cuda())
        assert results["y"].is_cuda and results["experts"].is_cuda
        got = as_numpy(results)
    for name, value in want.items():
        if value.dtype == np.int64:
            np.testing.assert_array_equal(got[name], value, err_msg=name)
        else:
            np.testing.assert_allclose(got[name], value, rtol=1e-4, atol=1e-5 * max(1.0, np.abs(value).max()),
                                       err_msg=name)
