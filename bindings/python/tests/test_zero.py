"""dtrain.Zero on a world of one: a step in every stage, the arrays it lends,
checkpoints and the refusals with their exceptions (tests/multirank/zero.py
checks training across ranks)."""

import gc
import weakref

import numpy as np
import pytest

import dtrain
from dlpack_objects import KDL_BFLOAT, DLPackOnly, ManualTensor, bfloat16


def _sgd_step(z, grads, unit_of):
    """One micro-step of the header's backward loop and a step: gradient i is grads[i]."""
    for i in reversed(range(len(grads))):
        with z.unit(unit_of(i)):
            z.gradient(i)[...] += grads[i]
            z.mark_ready(i)
    z.wait()
    return z.step()


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_a_step_in_every_stage_follows_sgd(comm, stage):
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full(2, 2.0, np.float32)
    with dtrain.Zero(comm, [w, b], "sgd", stage=stage, lr=0.5) as z:
        assert len(z) == 2 and z.unit_count >= 1
        unit_of = (lambda i: i) if stage == 3 else (lambda i: 0)
        info = _sgd_step(z, [np.ones((2, 3), np.float32), np.ones(2, np.float32)], unit_of)
        assert isinstance(info, dtrain.StepInfo)
        assert not info.skipped and info.step == 1 and info.loss_scale == 1.0
        assert info.grad_norm == pytest.approx(8 ** 0.5)
        with z.unit(unit_of(0)):
            weights = z.parameter(0)
            assert weights.dtype == np.float32 and weights.shape == (2, 3)
            np.testing.assert_array_equal(weights, w - 0.5)
        with z.unit(unit_of(1)):
            np.testing.assert_array_equal(z.parameter(1), [1.5, 1.5])
    # The initial values were only read.
    np.testing.assert_array_equal(w, np.arange(6).reshape(2, 3))


def test_the_arrays_are_the_zeros_own_memory(comm):
    p = np.ones(4, np.float32)
    z = dtrain.Zero(comm, [p], optimizer={"kind": "sgd", "lr": 1.0}, stage=1)
    view = z.parameter(0)
    assert np.shares_memory(view, z.parameter(0))
    grad = z.gradient(0)
    grad += 0.25
    np.testing.assert_array_equal(z.gradient(0), 0.25)  # the same buffer, not a copy
    z.mark_ready(0)
    z.wait()
    z.step()
    # The step updated the parameters under the view taken before it.
    np.testing.assert_array_equal(view, 0.75)
    z.close()
    assert z.closed
    with pytest.raises(dtrain.InvalidUsageError, match="closed"):
        z.parameter(0)


def test_a_view_keeps_its_zero_alive(comm):
    z = dtrain.Zero(comm, [np.full(3, 2.0, np.float32)])
    alive = weakref.ref(z)
    view = z.parameter(0)
    del z
    gc.collect()
    assert alive() is not None  # collecting it would free the memory under the view
    np.testing.assert_array_equal(view, 2.0)
    del view
    gc.collect()
    assert alive() is None


def test_initial_values_come_from_dlpack_objects_and_read_only_arrays(comm):
    frozen = np.full(3, 4.0, np.float32)
    frozen.setflags(write=False)
    through_dlpack = DLPackOnly(np.full((2, 2), -1.0, np.float32))
    with dtrain.Zero(comm, [frozen, through_dlpack], stage=2) as z:
        np.testing.assert_array_equal(z.parameter(0), 4.0)
        assert z.parameter(1).shape == (2, 2)
        np.testing.assert_array_equal(z.parameter(1), -1.0)


def test_sixteen_bit_parameters(comm):
    half = np.array([1.5, -2.0, 0.25], np.float16)
    with dtrain.Zero(comm, [half], "sgd", lr=0.5) as z:
        assert z.parameter(0).dtype == np.float16
        np.testing.assert_array_equal(z.parameter(0), half)
        # float32 master weights for the 16-bit parameters this rank updates.
        assert z.memory().master_weights == 3 * 4
    bits = bfloat16([1.0, -3.0, 0.5, 2.0])
    source = ManualTensor(bits, KDL_BFLOAT, 16, bits.size)
    with dtrain.Zero(comm, [source], stage=3) as z:
        assert source.deleted == 1  # the initial values were given back after creation
        with z.unit(0):
            got = z.parameter(0)
            # Without ml_dtypes, bfloat16 comes back as its bit patterns.
            assert got.dtype.itemsize == 2
            np.testing.assert_array_equal(got.view(np.uint16), bits)


def test_memory_figures(comm):
    params = [np.zeros(1000, np.float32), np.zeros(10, np.float32)]
    with dtrain.Zero(comm, params, stage=1) as z:
        memory = z.memory()
    assert isinstance(memory, dtrain.ZeroMemory)
    assert memory.parameters == memory.gradients == 1010 * 4  # full, float32
    assert memory.optimizer_state == 2 * 1010 * 4              # AdamW's two moments
    assert memory.master_weights == 0 and memory.padding == 0
    assert memory.total == (memory.parameters + memory.gradients + memory.optimizer_state
                            + memory.master_weights + memory.communication)
    assert memory.peak >= memory.total


def test_unit_releases_on_leaving_the_block_even_on_error(comm):
    with dtrain.Zero(comm, [np.ones(2, np.float32), np.ones(3, np.float32)], stage=3) as z:
        assert z.unit_count == 2
        with pytest.raises(RuntimeError, match="inside"):
            with z.unit(1):
                np.testing.assert_array_equal(z.parameter(1), 1.0)
                raise RuntimeError("inside")
        with pytest.raises(dtrain.InvalidUsageError):
            z.parameter(1)  # released: stage 3 serves only gathered units
        with pytest.raises(dtrain.InvalidUsageError):
            z.release(1)


def test_stage_3_units_follow_unit_sizes(comm):
    params = [np.full(n, float(n), np.float32) for n in (3, 1, 4, 2)]
    with dtrain.Zero(comm, params, stage=3, unit_sizes=[2, 2], prefetch=False) as z:
        assert z.unit_count == 2
        z.gather(1)
        z.gather_wait(1)
        np.testing.assert_array_equal(z.parameter(2), 4.0)
        np.testing.assert_array_equal(z.parameter(3), 2.0)
        with pytest.raises(dtrain.InvalidUsageError):
            z.parameter(0)
        z.release(1)


def test_no_sync_accumulates_and_restores(comm):
    with dtrain.Zero(comm, [np.zeros(3, np.float32)], "sgd", lr=1.0) as z:
        with z.no_sync():
            assert not z.sync
            z.gradient(0)[...] += 1.0
            z.mark_ready(0)
            z.wait()
        assert z.sync
        z.set_sync(True)
        z.gradient(0)[...] += 2.0
        z.mark_ready(0)
        z.wait()
        z.step()
        np.testing.assert_array_equal(z.parameter(0), -3.0)


def test_learning_rate_and_loss_scale(comm):
    with dtrain.Zero(comm, [np.ones(2, np.float32)], "sgd", lr=1.0, loss_scale=4.0) as z:
        assert z.loss_scale == 4.0
        z.set_lr(0.5)
        z.gradient(0)[...] += 4.0  # scaled by 4: a gradient of 1
        z.mark_ready(0)
        z.wait()
        z.step()
        np.testing.assert_array_equal(z.parameter(0), 0.5)
        with pytest.raises(dtrain.InvalidArgumentError):
            z.set_lr(float("nan"))


def test_a_checkpoint_restores_parameters_and_optimizer_state(comm, tmp_path):
    def train(z):
        with z.unit(0):
            z.gradient(0)[...] += np.arange(5, dtype=np.float32)
            z.mark_ready(0)
        z.wait()
        z.step()

    def values(z):
        with z.unit(0):
            return z.parameter(0).copy()

    saved = dtrain.Zero(comm, [np.ones(5, np.float32)], "adamw", lr=0.1, stage=1)
    train(saved)
    saved.save(tmp_path / "ckpt")
    # Loaded into another stage, from other initial values.
    loaded = dtrain.Zero(comm, [np.zeros(5, np.float32)], "adamw", lr=0.1, stage=3)
    loaded.load(tmp_path / "ckpt")
    np.testing.assert_array_equal(values(loaded), values(saved))
    # The moments and the step count came along: the next steps agree too.
    train(saved)
    train(loaded)
    np.testing.assert_allclose(values(loaded), values(saved), rtol=1e-6)

    with dtrain.Zero(comm, [np.zeros(4, np.float32)]) as other_shape:
        with pytest.raises(dtrain.InvalidArgumentError):
            other_shape.load(tmp_path / "ckpt")
        with pytest.raises(dtrain.InvalidArgumentError):
            other_shape.load(tmp_path / "missing")
        with pytest.raises(dtrain.InvalidArgumentError, match="directory"):
            other_shape.save(42)
    saved.close()
    loaded.close()


def test_bad_indices_raise_invalid_argument(comm):
    with dtrain.Zero(comm, [np.ones(2, np.float32)], stage=3) as z:
        for call in (z.parameter, z.gradient, z.mark_ready, z.gather, z.release):
            with pytest.raises(dtrain.InvalidArgumentError):
                call(7)
            with pytest.raises(dtrain.InvalidArgumentError, match="negative"):
                call(-1)
        with pytest.raises(dtrain.InvalidArgumentError):
            z.gather_wait(7)
        # Not gathered, so not served.
        with pytest.raises(dtrain.InvalidUsageError):
            z.parameter(0)


def test_misuse_raises_invalid_usage(comm):
    with dtrain.Zero(comm, [np.ones(2, np.float32), np.ones(2, np.float32)]) as z:
        z.mark_ready(1)
        with pytest.raises(dtrain.InvalidUsageError):
            z.mark_ready(1)
        with pytest.raises(dtrain.InvalidUsageError):
            z.gradient(1)
        with pytest.raises(dtrain.InvalidUsageError):
            z.sync = False  # in the middle of a micro-step
        assert z.sync
        with pytest.raises(dtrain.InvalidUsageError):
            z.step()
        with pytest.raises(dtrain.InvalidUsageError, match="0"):
            z.wait()  # gradient 0 was never marked


@pytest.mark.parametrize("stage", [0, 1, 2, 3])
def test_a_model_split_over_model_comm_clips_by_the_norm_without_the_excluded(comm, stage):
    # The model communicator is a world of one too, so the norm is this
    # rank's: the second parameter's gradient only, the first being left
    # out; clipping to 1 scales both.
    with comm.split(0) as model_comm:
        with dtrain.Zero(comm, [np.zeros(2, np.float32), np.zeros(3, np.float32)], "sgd", stage=stage,
                         lr=1.0, max_grad_norm=1.0, model_comm=model_comm, norm_excluded=[0]) as z:
            unit_of = (lambda i: i) if stage == 3 else (lambda i: 0)
            info = _sgd_step(z, [np.full(2, 10.0, np.float32), np.full(3, 4.0, np.float32)], unit_of)
            assert info.grad_norm == pytest.approx(48 ** 0.5)
            scale = 1.0 / (48 ** 0.5)
            with z.unit(unit_of(0)):
                np.testing.assert_allclose(z.parameter(0), np.full(2, -10.0 * scale), rtol=1e-5)
            with z.unit(unit_of(1)):
                np.testing.assert_allclose(z.parameter(1), np.full(3, -4.0 * scale), rtol=1e-5)


@pytest.mark.parametrize("arguments, match", [
    (dict(norm_excluded=[0]), "needs optim->comm"),
    (dict(norm_excluded=[-1]), "norm_excluded"),
    (dict(stage=4), "stage"),
    (dict(stage="three"), "stage"),
    (dict(bucket_bytes=0), "bucket_bytes"),
    (dict(unit_sizes=[5]), "add up"),
    (dict(stage=3, unit_sizes=["a"]), "unit_sizes"),
    (dict(stage=3, unit_sizes=[2]), "add up"),
    (dict(optimizer="rmsprop"), "kind"),
    (dict(optimizer="sgd", kind="adamw"), "twice"),
    (dict(momentum_typo=0.9), "momentum_typo"),
    (dict(lr="fast"), "optimizer"),
    (dict(lr=-1.0), "lr"),
])
def test_bad_options_raise_invalid_argument(comm, arguments, match):
    with pytest.raises(dtrain.InvalidArgumentError, match=match):
        dtrain.Zero(comm, [np.ones(1, np.float32)], **arguments)


def test_the_model_comm_must_not_be_the_zeros_own(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match="own communicator"):
        dtrain.Zero(comm, [np.ones(1, np.float32)], model_comm=comm)
    with comm.split(0) as model_comm:
        with pytest.raises(dtrain.InvalidArgumentError, match=r"norm_excluded\[0\] = 1 is not a parameter"):
            dtrain.Zero(comm, [np.ones(1, np.float32)], model_comm=model_comm, norm_excluded=[1])


def test_bad_parameters_raise(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match=r"params\[1\]"):
        dtrain.Zero(comm, [np.ones(1, np.float32), object()])
    with pytest.raises(dtrain.InvalidArgumentError):
        dtrain.Zero(comm, [np.ones(1, np.float32), np.ones(1, np.float16)])  # mixed dtypes
    with pytest.raises(dtrain.InvalidArgumentError):
        dtrain.Zero(comm, [np.ones(1, np.float64)])
    with pytest.raises(dtrain.InvalidArgumentError):
        dtrain.Zero(comm, [])
