"""dtrain.tp on a world of one (tp = 1): every layer against numpy's dense one."""

import numpy as np
import pytest

import dtrain
from dtrain import tp

rng = np.random.default_rng(7)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_column_then_row_is_the_dense_mlp(comm):
    x, w1, b1, w2, b2 = rand(6, 4), rand(8, 4), rand(8), rand(4, 8), rand(4)
    h = tp.column_linear_forward(comm, x, w1, b1, np.zeros((6, 8), np.float32))
    np.testing.assert_allclose(h, x @ w1.T + b1, rtol=1e-5, atol=1e-5)
    y = tp.row_linear_forward(comm, h, w2, b2, np.zeros((6, 4), np.float32))
    np.testing.assert_allclose(y, h @ w2.T + b2, rtol=1e-5, atol=1e-5)
    dy = rand(6, 4)
    dh, dw2, db2 = np.zeros_like(h), np.zeros_like(w2), np.zeros_like(b2)
    tp.row_linear_backward(comm, h, w2, dy, dh, dw2, db2)
    np.testing.assert_allclose(dh, dy @ w2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dw2, dy.T @ h, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(db2, dy.sum(0), rtol=1e-5, atol=1e-5)
    dx, dw1 = np.zeros_like(x), np.zeros_like(w1)
    tp.column_linear_backward(comm, x, w1, dh, dx, dw1, None)
    np.testing.assert_allclose(dx, dh @ w1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dw1, dh.T @ x, rtol=1e-5, atol=1e-5)


def test_embedding_and_cross_entropy(comm):
    table, ids = rand(10, 3), np.array([1, 4, 4, 9], np.int64)
    out = tp.embedding_forward(comm, table, ids, np.zeros((4, 3), np.float32))
    np.testing.assert_array_equal(out, table[ids])
    logits, targets = rand(4, 10), np.array([0, 3, -100, 9], np.int64)
    loss, lse = np.zeros(4, np.float32), np.zeros(4, np.float32)
    tp.cross_entropy_forward(comm, logits, targets, loss, lse)
    want_lse = np.log(np.exp(logits.astype(np.float64)).sum(1))
    want = want_lse - logits[np.arange(4), np.maximum(targets, 0)]
    want[2] = 0
    np.testing.assert_allclose(lse, want_lse, rtol=1e-5)
    np.testing.assert_allclose(loss, want, rtol=1e-5, atol=1e-6)
    dlogits = tp.cross_entropy_backward(comm, logits, targets, lse, np.ones(4, np.float32), np.zeros_like(logits))
    assert (dlogits[2] == 0).all()
    np.testing.assert_allclose(dlogits.sum(1)[[0, 1, 3]], 0, atol=1e-5)


def test_mappings_and_shards(comm):
    a = rand(4, 6)
    assert (tp.region_forward(comm, "reduce", a, np.zeros_like(a)) == a).all()
    assert (tp.region_backward(comm, tp.Region.COPY, a, np.zeros_like(a)) == a).all()
    qkv = rand(8, 3)
    local = tp.shard("qkv", qkv, np.zeros_like(qkv), 0, 1, q_heads=2, kv_heads=1)
    np.testing.assert_array_equal(local, qkv)
    np.testing.assert_array_equal(tp.unshard(comm, "rows", local, np.zeros_like(qkv)), qkv)


def test_bad_shapes_are_refused(comm):
    with pytest.raises(dtrain.InvalidArgumentError, match="y is"):
        tp.column_linear_forward(comm, rand(6, 4), rand(8, 4), None, np.zeros((6, 7), np.float32))
    with pytest.raises(dtrain.InvalidArgumentError, match="outside the vocabulary"):
        tp.embedding_forward(comm, rand(10, 3), np.array([10]), np.zeros((1, 3), np.float32))
