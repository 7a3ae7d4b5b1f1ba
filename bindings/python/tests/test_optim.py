"""dtrain.Optimizer: SGD and AdamW over numpy arrays and DLPack objects."""

import gc

import numpy as np
import pytest

import dtrain
from dtrain import _capi
from dlpack_objects import KDL_BFLOAT, ManualTensor, bfloat16


def _model(dtype=np.float32, sizes=(7, 1, 33)):
    rng = np.random.default_rng(5)
    params = [rng.uniform(0.5, 2.0, n).astype(dtype) for n in sizes]
    grads = [np.zeros(n, dtype) for n in sizes]
    return params, grads


def _adamw_reference(p, grads, lr, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.0):
    p, m, v = p.astype(np.float64), 0.0, 0.0
    for t, g in enumerate(grads, 1):
        g = g.astype(np.float64)
        p = p * (1 - lr * weight_decay)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        p = p - lr / (1 - beta1 ** t) * m / (np.sqrt(v) / np.sqrt(1 - beta2 ** t) + eps)
    return p


def test_adamw_steps_like_the_reference():
    params, grads = _model()
    start = [p.copy() for p in params]
    rng = np.random.default_rng(6)
    history = [[], [], []]
    with dtrain.Optimizer(params, grads, "adamw", lr=0.01, weight_decay=0.1) as opt:
        assert opt.lr == pytest.approx(0.01)
        for step in range(1, 4):
            for k, g in enumerate(grads):
                g[:] = rng.uniform(-1, 1, g.size)
                history[k].append(g.copy())
            info = opt.step()
            assert isinstance(info, dtrain.StepInfo)
            assert not info.skipped and info.step == step and info.loss_scale == 1.0
            norm = np.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2)) for g in grads))
            assert info.grad_norm == pytest.approx(norm, rel=1e-12)
    for p, p0, gs in zip(params, start, history):
        np.testing.assert_allclose(p, _adamw_reference(p0, gs, 0.01, weight_decay=0.1), rtol=1e-6)


def test_sgd_with_momentum_lr_setter_and_zero_grad():
    p = np.ones(5, np.float32)
    g = np.full(5, 0.5, np.float32)
    opt = dtrain.Optimizer([p], [g], kind="sgd", lr=0.1, momentum=0.9, nesterov=True)
    opt.step()  # buffer = g; step g + 0.9 g
    np.testing.assert_allclose(p, 1 - 0.1 * 0.95, rtol=1e-6)
    opt.lr = 0.0
    assert opt.lr == 0.0
    before = p.copy()
    opt.step()
    np.testing.assert_array_equal(p, before)
    opt.zero_grad()
    np.testing.assert_array_equal(g, 0)
    opt.close()
    opt.close()
    assert opt.closed
    with pytest.raises(dtrain.InvalidUsageError, match="closed"):
        opt.step()


def test_clipping_reports_the_norm_and_scales_the_grads():
    p = np.zeros(4, np.float32)
    g = np.array([3, 0, 4, 0], np.float32)
    with dtrain.Optimizer([p], [g], "sgd", lr=1.0, max_grad_norm=1.0) as opt:
        info = opt.step()
    assert info.grad_norm == 5.0
    np.testing.assert_allclose(g, [0.6, 0, 0.8, 0], rtol=1e-6)
    np.testing.assert_allclose(p, -g, rtol=1e-6)


def test_dynamic_loss_scale_skips_inf_and_backs_off():
    params, grads = _model(np.float16)
    with dtrain.Optimizer(params, grads, lr=0.01, loss_scale=1024, dynamic_loss_scale=True,
                          growth_interval=2) as opt:
        assert opt.loss_scale == 1024.0
        grads[1][0] = np.inf
        before = [p.copy() for p in params]
        info = opt.step()
        assert info.skipped and info.step == 0 and info.loss_scale == 512.0
        for p, b in zip(params, before):
            np.testing.assert_array_equal(p, b)
        grads[1][0] = 100.0
        assert not opt.step().skipped
        assert opt.step().loss_scale == 1024.0


def test_bfloat16_parameters_through_dlpack():
    storage = bfloat16([1.0, -2.0, 0.5, 4.0])
    grad_storage = bfloat16([1.0, 1.0, -1.0, 0.0])
    param, grad = ManualTensor(storage, KDL_BFLOAT, 16, 4), ManualTensor(grad_storage, KDL_BFLOAT, 16, 4)
    opt = dtrain.Optimizer([param], [grad], "sgd", lr=0.5)
    opt.step()
    np.testing.assert_array_equal(storage, bfloat16([0.5, -2.5, 1.0, 4.0]))
    assert param.deleted == 0  # still borrowed
    opt.close()
    assert param.deleted == 1 and grad.deleted == 1


def test_optimizer_options_are_checked():
    params, grads = _model()
    with pytest.raises(dtrain.InvalidArgumentError, match="options.lr = -1"):
        dtrain.Optimizer(params, grads, lr=-1)
    with pytest.raises(dtrain.InvalidArgumentError, match="kind: 'adam' is not one of 'sgd', 'adamw'"):
        dtrain.Optimizer(params, grads, kind="adam")
    with pytest.raises(dtrain.InvalidArgumentError, match="nesterov = 1 needs momentum"):
        dtrain.Optimizer(params, grads, kind="sgd", nesterov=True)
    with pytest.raises(dtrain.InvalidArgumentError, match="3 gradients for 2 parameters"):
        dtrain.Optimizer(params[:2], grads)
    with pytest.raises(dtrain.InvalidArgumentError, match="n is 0"):
        dtrain.Optimizer([], [])


def test_tensors_are_checked_and_given_back():
    params, grads = _model()
    with pytest.raises(dtrain.InvalidArgumentError, match=r"grads\[2\]: shape \(5,\) differs"):
        dtrain.Optimizer(params, grads[:2] + [np.zeros(5, np.float32)])
    with pytest.raises(dtrain.InvalidArgumentError, match=r"params\[0\]: dtype int32 cannot be optimized"):
        dtrain.Optimizer([np.zeros(3, np.int32)], [np.zeros(3, np.int32)])
    with pytest.raises(dtrain.InvalidArgumentError, match=r"grads\[0\]: the buffer is read-only"):
        frozen = np.zeros(7, np.float32)
        frozen.flags.writeable = False
        dtrain.Optimizer(params[:1], [frozen])
    with pytest.raises(dtrain.InvalidArgumentError, match="overlap"):
        dtrain.Optimizer([params[0]], [params[0]])


def test_the_optimizer_keeps_its_arrays_alive():
    params, grads = _model()
    opt = dtrain.Optimizer(params, grads, "sgd", lr=1.0)
    view = params[0]
    del params, grads
    gc.collect()
    opt.zero_grad()
    opt.step()
    np.testing.assert_array_equal(view, view)  # still readable; nothing was freed under it
    del opt
    gc.collect()


def test_sharded_over_a_world_of_one(comm):
    params, grads = _model()
    for g in grads:
        g[:] = 2.0
    with dtrain.Optimizer(params, grads, "sgd", lr=0.1, comm=comm) as opt:
        info = opt.step()
    assert info.grad_norm == pytest.approx(2.0 * np.sqrt(41))


def test_low_level_calls():
    p, g = np.ones(3, np.float32), np.ones(3, np.float32)
    tensors = [(_capi.Tensor(p, True, "p"), _capi.Tensor(g, True, "g"))]
    opts = _capi.dt_optimizer_options()
    _capi.dt_optimizer_options_init(opts, _capi.DT_OPTIMIZER_OPTIONS_VERSION)
    assert opts.kind == _capi.DT_OPTIM_ADAMW and opts.growth_interval == _capi.DT_UNDEF
    opts.kind = _capi.DT_OPTIM_SGD
    opts.lr = 0.5
    handle = _capi.dt_optimizer_create(tensors, opts)
    assert isinstance(handle, _capi.dt_optimizer)
    info = _capi.dt_optimizer_step(handle)
    assert isinstance(info, _capi.dt_optimizer_step_info)
    assert info.version == _capi.DT_OPTIMIZER_STEP_INFO_VERSION and info.step == 1
    np.testing.assert_array_equal(p, 0.5)
    with pytest.raises(dtrain.InvalidArgumentError, match=r"params\[0\]: the optimizer keeps its tensors"):
        _capi.dt_optimizer_create([(p, g)], opts)
    with pytest.raises(dtrain.InvalidArgumentError, match=r"params\[0\]: expected a \(param, grad\) pair"):
        _capi.dt_optimizer_create([tensors[0][0]], opts)
    _capi.dt_optimizer_destroy(handle)
    for t in tensors[0]:
        t.release()
