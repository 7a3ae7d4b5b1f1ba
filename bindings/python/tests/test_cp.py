"""Context parallelism from Python on a world of one: blockwise attention and
its merge against numpy in float64, layouts, ring attention and its
gradients, refusals."""

import numpy as np
import pytest

import dtrain


def reference(q, k, v, causal, scale, d_o=None):
    """Attention (and its gradients from d_o) in float64; positions are 0..seq-1."""
    q, k, v = (np.asarray(x, np.float64) for x in (q, k, v))
    group = q.shape[1] // k.shape[1]
    k, v = np.repeat(k, group, axis=1), np.repeat(v, group, axis=1)
    s = np.einsum("ihc,jhc->hij", q, k) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[1:], bool)), s, -np.inf)
    lse = np.log(np.exp(s - s.max(-1, keepdims=True)).sum(-1)) + s.max(-1)
    p = np.exp(s - lse[..., None])
    o = np.einsum("hij,jhc->ihc", p, v)
    if d_o is None:
        return o, lse.T
    d_o = np.asarray(d_o, np.float64)
    dp = np.einsum("ihc,jhc->hij", d_o, v)
    ds = p * (dp - np.einsum("ihc,ihc->hi", d_o, o)[..., None]) * scale
    dq = np.einsum("hij,jhc->ihc", ds, k)
    dk = np.einsum("hij,ihc->jhc", ds, q)
    dv = np.einsum("hij,ihc->jhc", p, d_o)
    fold = lambda x: x.reshape(x.shape[0], -1, group, x.shape[2]).sum(axis=2)  # noqa: E731
    return dq, fold(dk), fold(dv)


def tensors(seq=6, q_heads=4, kv_heads=2, head_dim=8, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.uniform(-1, 1, (seq, q_heads, head_dim)).astype(np.float32)
    k = rng.uniform(-1, 1, (seq, kv_heads, head_dim)).astype(np.float32)
    v = rng.uniform(-1, 1, (seq, kv_heads, head_dim)).astype(np.float32)
    return q, k, v


@pytest.mark.parametrize("causal", [False, True])
def test_attention_matches_numpy_with_grouped_heads(causal):
    q, k, v = tensors()
    positions = np.arange(6, dtype=np.int64)
    o, lse = dtrain.attention(q, k, v, positions, positions, causal=causal, scale=0.4)
    want_o, want_lse = reference(q, k, v, causal, 0.4)
    np.testing.assert_allclose(o, want_o, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-5, atol=1e-6)


def test_merging_two_key_blocks_gives_attention_over_both():
    q, k, v = tensors()
    o, lse = dtrain.attention(q, k[:4], v[:4])
    o2, lse2 = dtrain.attention(q, k[4:], v[4:])
    dtrain.attention_merge(o, lse, o2, lse2)
    want_o, want_lse = reference(q, k, v, False, 1 / np.sqrt(8))
    np.testing.assert_allclose(o, want_o, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-5, atol=1e-6)


def test_zigzag_shard_positions_and_unshard():
    full = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
    rebuilt = np.zeros_like(full)
    for rank in range(2):
        positions = dtrain.cp_positions(4, 2, rank, "zigzag")
        np.testing.assert_array_equal(positions, [[0, 1, 6, 7], [2, 3, 4, 5]][rank])
        local = dtrain.cp_shard(full, 2, rank, dtrain.CpLayout.ZIGZAG)
        np.testing.assert_array_equal(local, full[positions])
        dtrain.cp_unshard(local, rebuilt, 2, rank, "zigzag")
    np.testing.assert_array_equal(rebuilt, full)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("forward, backward", [
    (dtrain.ring_attention_forward, dtrain.ring_attention_backward),
    (dtrain.ulysses_attention_forward, dtrain.ulysses_attention_backward),
])
def test_sharded_attention_on_one_rank_is_attention_and_its_gradients(comm, causal, forward, backward):
    q, k, v = tensors(seed=3)
    d_o = np.random.default_rng(4).uniform(-1, 1, q.shape).astype(np.float32)
    o, lse = forward(comm, q, k, v, causal=causal, layout="contiguous")
    want_o, want_lse = reference(q, k, v, causal, 1 / np.sqrt(8))
    np.testing.assert_allclose(o, want_o, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-5, atol=1e-6)
    grads = backward(comm, q, k, v, o, lse, d_o, causal=causal, layout="contiguous")
    for got, want in zip(grads, reference(q, k, v, causal, 1 / np.sqrt(8), d_o)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_half_precision_outputs_are_float32_rounded_once(comm):
    # Multiples of 1/128 in [-1, 1]: exact in float16.
    q, k, v = (np.round(x * 128) / 128 for x in tensors(seed=5))
    d_o = np.round(np.random.default_rng(6).uniform(-1, 1, q.shape) * 128) / 128
    half = [x.astype(np.float16) for x in (q, k, v, d_o)]
    o, lse = dtrain.ring_attention_forward(comm, *half[:3], causal=True, layout="contiguous")
    assert o.dtype == np.float16 and lse.dtype == np.float32
    want_o, want_lse = reference(q, k, v, True, 1 / np.sqrt(8))
    # Half a unit in the last place of float16 (2^-11), relative.
    np.testing.assert_allclose(o, want_o, rtol=2.0 ** -11, atol=1e-6)
    np.testing.assert_allclose(lse, want_lse, rtol=1e-5, atol=1e-6)
    grads = dtrain.ring_attention_backward(comm, *half[:3], o, lse, half[3], causal=True, layout="contiguous")
    for got, want in zip(grads, reference(q, k, v, True, 1 / np.sqrt(8), d_o)):
        assert got.dtype == np.float16
        np.testing.assert_allclose(got, want, rtol=2.0 ** -10, atol=2.0 ** -10 * np.abs(want).max())


def test_refusals(comm):
    q, k, v = tensors(seq=3)
    with pytest.raises(dtrain.InvalidArgumentError, match="2 \\* cp"):
        dtrain.ring_attention_forward(comm, q, k, v, layout="zigzag")
    with pytest.raises(dtrain.InvalidArgumentError, match="q_positions"):
        dtrain.attention(q, k, v, causal=True)
    with pytest.raises(dtrain.InvalidArgumentError, match="heads"):
        dtrain.attention(np.ascontiguousarray(q[:, :3]), k, v)
    with pytest.raises(dtrain.InvalidArgumentError, match="unknown layout"):
        dtrain.cp_positions(4, 2, 0, "spiral")
