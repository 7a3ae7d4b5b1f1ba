"""Expert parallelism on a world of one: routing and its backward pass
against numpy, the losses, a dispatch and combine round trip with its backward
passes, and refusals."""

import numpy as np
import pytest

import dtrain


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_route_picks_the_top_k_and_renormalises():
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((6, 4)).astype(np.float32)
    opts = dtrain.MoeOptions(4, 2, normalize=True)
    weights, experts, dropped = dtrain.moe_route(logits, opts)
    p = softmax(logits.astype(np.float64))
    expected_experts = np.argsort(-p, axis=1, kind="stable")[:, :2]
    np.testing.assert_array_equal(experts, expected_experts)
    chosen = np.take_along_axis(p, expected_experts, axis=1)
    np.testing.assert_allclose(weights, chosen / chosen.sum(axis=1, keepdims=True), rtol=1e-5)
    assert dropped == 0


def test_route_backward_equals_numerical_gradient():
    rng = np.random.default_rng(4)
    logits = rng.standard_normal((3, 4))
    d_weights = rng.standard_normal((3, 2))
    opts = dtrain.MoeOptions(4, 2, scoring=dtrain.MoeScoring.SIGMOID)
    _, experts, _ = dtrain.moe_route(logits.astype(np.float32), opts)

    def objective(x):  # sum of d_weights * sigmoid(chosen logits), the choice held fixed
        return float((d_weights / (1 + np.exp(-np.take_along_axis(x, experts, axis=1)))).sum())

    numeric = np.zeros_like(logits)
    for i in np.ndindex(logits.shape):
        step = np.zeros_like(logits)
        step[i] = 1e-6
        numeric[i] = (objective(logits + step) - objective(logits - step)) / 2e-6
    d_logits = dtrain.moe_route_backward(logits.astype(np.float32), d_weights.astype(np.float32), opts)
    np.testing.assert_allclose(d_logits, numeric, rtol=1e-4, atol=1e-6)


def test_capacity_drops_the_later_tokens():
    logits = np.array([[1, 0], [2, 0], [3, 0], [4, 0]], dtype=np.float32)
    opts = dtrain.MoeOptions(2, 1, capacity_factor=1.0)
    _, experts, dropped = dtrain.moe_route(logits, opts)
    np.testing.assert_array_equal(experts[:, 0], [0, 0, -1, -1])
    assert dropped == 2
    opts.drop_policy = dtrain.MoeDropPolicy.BY_SCORE
    _, experts, _ = dtrain.moe_route(logits, opts)
    np.testing.assert_array_equal(experts[:, 0], [-1, -1, 0, 0])


def test_the_losses_follow_their_formulas():
    logits = np.zeros((2, 2), dtype=np.float32)  # a uniform router: both tokens pick expert 0
    d_logits = np.zeros_like(logits)
    loss, counts = dtrain.moe_balance_loss(logits, dtrain.MoeOptions(2, 1), 1.0, d_logits)
    assert loss == pytest.approx(1.0)
    np.testing.assert_array_equal(counts, [2, 0])
    assert dtrain.moe_z_loss(logits) == pytest.approx(np.log(2.0) ** 2)
    assert dtrain.EXPERT_GRAD_DIMS == "dp,cp" and dtrain.DENSE_GRAD_DIMS == "dp,cp,ep"


def test_dispatch_and_combine_round_trip(comm):
    opts = dtrain.MoeOptions(2, 2)
    experts = np.array([[0, 1], [1, -1]], dtype=np.int64)  # token 1's second pair was dropped
    with dtrain.MoePlan(comm, experts, 2, opts) as plan:
        assert plan.local_experts == (0, 2)
        assert plan.received == 3
        assert plan.expert_counts == [1, 2]
        tokens = np.array([[1, 2], [3, 4]], dtype=np.float32)
        received = plan.dispatch(tokens)
        np.testing.assert_array_equal(received, [[1, 2], [1, 2], [3, 4]])
        weights = np.array([[0.5, 0.25], [2.0, 9.0]], dtype=np.float32)
        np.testing.assert_array_equal(plan.combine(received, weights), [[0.75, 1.5], [6, 8]])
        d_received, d_weights = plan.combine_backward(np.array([[1, 0], [0, 1]], dtype=np.float32), weights)
        np.testing.assert_array_equal(d_weights, [[1, 1], [4, 0]])
        np.testing.assert_array_equal(d_received, [[0.5, 0], [0.25, 0], [0, 2]])
        np.testing.assert_array_equal(plan.dispatch_backward(d_received), [[0.75, 0], [0, 2]])


def test_bad_arguments_are_refused(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match="top_k"):
        dtrain.moe_route(np.zeros((2, 2), dtype=np.float32), dtrain.MoeOptions(2, 3))
    with pytest.raises(dtrain.UnsupportedError, match="float32"):
        dtrain.moe_route(np.zeros((2, 2)), dtrain.MoeOptions(2, 1))
    opts = dtrain.MoeOptions(2, 1)
    with pytest.raises(dtrain.InvalidArgumentError, match="experts"):
        dtrain.MoePlan(comm, np.array([[2]], dtype=np.int64), 4, opts)
    plan = dtrain.MoePlan(comm, np.array([[0], [1]], dtype=np.int64), 4, opts)
    with pytest.raises(dtrain.InvalidArgumentError, match="tokens"):
        plan.dispatch(np.zeros((2, 3), dtype=np.float32))
    with pytest.raises(dtrain.InvalidUsageError, match="combine"):
        plan.combine_backward(np.zeros((2, 4), dtype=np.float32), np.ones((2, 1), dtype=np.float32))
    plan.close()
    with pytest.raises(dtrain.InvalidUsageError, match="closed"):
        plan.received


def test_the_built_in_experts_equal_numpy():
    rng = np.random.default_rng(5)
    counts = [3, 0, 2]  # the middle expert gets no rows
    x = rng.standard_normal((5, 4)).astype(np.float32)
    w1 = rng.standard_normal((3, 4, 6)).astype(np.float32)
    w2 = rng.standard_normal((3, 6, 4)).astype(np.float32)
    dy = rng.standard_normal((5, 4)).astype(np.float32)
    hidden, y = dtrain.moe_experts_forward(x, counts, w1, w2, dtrain.MoeActivation.SILU)
    blocks = [(0, slice(0, 3)), (2, slice(3, 5))]
    silu = lambda v: v / (1 + np.exp(-v))  # noqa: E731
    for expert, rows in blocks:
        pre = x[rows].astype(np.float64) @ w1[expert]
        np.testing.assert_allclose(hidden[rows], pre, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(y[rows], silu(pre) @ w2[expert], rtol=1e-5, atol=1e-5)
    dx, dw1, dw2 = dtrain.moe_experts_backward(x, counts, w1, w2, hidden, dy, dtrain.MoeActivation.SILU)
    for expert, rows in blocks:
        pre = hidden[rows].astype(np.float64)
        s = 1 / (1 + np.exp(-pre))
        d_pre = (dy[rows] @ w2[expert].T) * s * (1 + pre * (1 - s))
        np.testing.assert_allclose(dw2[expert], silu(pre).T @ dy[rows], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(dw1[expert], x[rows].T @ d_pre, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(dx[rows], d_pre @ w1[expert].T, rtol=1e-4, atol=1e-5)
    assert not dw1[1].any() and not dw2[1].any()
    with pytest.raises(dtrain.InvalidArgumentError, match="add up"):
        dtrain.moe_experts_forward(x, [1, 1, 1], w1, w2)


def moe_layer(comm, tensor):
    """A whole layer (route, plan, dispatch, built-in experts, combine, every backward pass and the
    losses) on arrays made by ``tensor`` from numpy: its results as the calls returned them."""
    rng = np.random.default_rng(6)
    opts = dtrain.MoeOptions(4, 2, normalize=True, capacity_factor=0.75, drop_policy=dtrain.MoeDropPolicy.BY_SCORE)
    logits = tensor(rng.standard_normal((9, 4)).astype(np.float32))
    x = tensor(rng.standard_normal((9, 6)).astype(np.float32))
    w1 = tensor(rng.standard_normal((4, 6, 5)).astype(np.float32))
    w2 = tensor(rng.standard_normal((4, 5, 6)).astype(np.float32))
    dy = tensor(rng.standard_normal((9, 6)).astype(np.float32))
    out = {}
    out["weights"], out["experts"], out["dropped"] = dtrain.moe_route(logits, opts)
    with dtrain.MoePlan(comm, out["experts"], 6, opts) as plan:
        out["received"] = plan.dispatch(x)
        out["hidden"], expert_out = dtrain.moe_experts_forward(out["received"], plan.expert_counts, w1, w2)
        out["y"] = plan.combine(expert_out, out["weights"])
        d_expert_out, out["d_weights"] = plan.combine_backward(dy, out["weights"])
        d_received, out["dw1"], out["dw2"] = dtrain.moe_experts_backward(
            out["received"], plan.expert_counts, w1, w2, out["hidden"], d_expert_out)
        out["dx"] = plan.dispatch_backward(d_received)
    out["d_logits"] = dtrain.moe_route_backward(logits, out["d_weights"], opts)
    out["balance"], out["counts"] = dtrain.moe_balance_loss(logits, opts, 0.01, d_logits=out["d_logits"])
    out["z"] = dtrain.moe_z_loss(logits, 0.001, d_logits=out["d_logits"])
    return out


def as_numpy(results):
    return {name: (v.cpu().numpy() if hasattr(v, "cpu") else np.asarray(v)) for name, v in results.items()}


def test_torch_tensors_give_torch_results_equal_to_numpy(comm):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    want = moe_layer(comm, lambda a: a)
    got = moe_layer(comm, torch.from_numpy)
    for name in ("weights", "received", "y", "dx", "d_logits", "dw1"):
        assert isinstance(got[name], torch.Tensor) and got[name].dtype == torch.float32, name
    assert isinstance(got["experts"], torch.Tensor) and got["experts"].dtype == torch.int64
    assert want["dropped"] > 0
    got = as_numpy(got)
    for name, value in as_numpy(want).items():
        np.testing.assert_array_equal(got[name], value, err_msg=name)
