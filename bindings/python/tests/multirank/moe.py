"""dtrain's MoE calls across real ranks; run under dtrun:

    dtrun -n 2 python3 moe.py [EXPECTED_RANKS]

Every rank routes its own tokens (rank r has 3 + 2r), dispatches them over the
world as the ep communicator, runs its local experts (expert e is x -> x W_e)
on the rows it receives, combines, and goes back through both backward calls;
numpy, holding every expert and every rank's tokens in float64, must agree
(rtol 1e-5). Then ranks that disagree about the number of experts must all get
MismatchError. A failure prints what differed, on which rank, and exits 1.
CTest runs it as python_moe_multirank_2.
"""

import sys
import traceback

import numpy as np

import dtrain

EXPERTS, TOP_K, HIDDEN = 4, 2, 3


def tokens_of(rank):
    rng = np.random.default_rng(100 + rank)
    t = 3 + 2 * rank
    return (rng.standard_normal((t, EXPERTS)).astype(np.float32), rng.standard_normal((t, HIDDEN)).astype(np.float32),
            rng.standard_normal((t, HIDDEN)).astype(np.float32))


def reference(rank, weights, experts, w):
    """y, d_tokens and d_weights of rank `rank` in float64: every expert held here."""
    _, x, dy = tokens_of(rank)
    x, dy = x.astype(np.float64), dy.astype(np.float64)
    y, dx, dw = np.zeros_like(x), np.zeros_like(x), np.zeros(weights.shape)
    for t in range(x.shape[0]):
        for j in range(TOP_K):
            e = experts[t, j]
            out = x[t] @ w[e]
            y[t] += weights[t, j] * out
            dw[t, j] = dy[t] @ out
            dx[t] += weights[t, j] * (dy[t] @ w[e].T)
    return y, dx, dw


def check(what, got, want, rank):
    if not np.allclose(got, want, rtol=1e-5, atol=1e-5):
        raise AssertionError(f"rank {rank}: {what} differs:\n{got}\nwanted\n{want}")


def run(comm):
    rank, size = comm.rank, comm.size
    w = np.random.default_rng(7).standard_normal((EXPERTS, HIDDEN, HIDDEN))
    opts = dtrain.MoeOptions(EXPERTS, TOP_K, normalize=True)
    logits, x, dy = tokens_of(rank)
    weights, experts, dropped = dtrain.moe_route(logits, opts)
    assert dropped == 0
    with dtrain.MoePlan(comm, experts, HIDDEN, opts) as plan:
        first, local = plan.local_experts
        received = plan.dispatch(x)
        expert_out = np.zeros_like(received)
        row = 0
        for l, n in enumerate(plan.expert_counts):
            expert_out[row:row + n] = received[row:row + n] @ w[first + l]
            row += n
        y = plan.combine(expert_out, weights)
        d_expert_out, d_weights = plan.combine_backward(dy, weights)
        d_received = np.zeros_like(d_expert_out)
        row = 0
        for l, n in enumerate(plan.expert_counts):
            d_received[row:row + n] = d_expert_out[row:row + n] @ w[first + l].T
            row += n
        dx = plan.dispatch_backward(d_received)
    y_ref, dx_ref, dw_ref = reference(rank, weights, experts, w)
    check("y", y, y_ref, rank)
    check("d_tokens", dx, dx_ref, rank)
    check("d_weights", d_weights, dw_ref, rank)

    wrong = dtrain.MoeOptions(2 * EXPERTS if rank == size - 1 else EXPERTS, 1)
    try:
        dtrain.MoePlan(comm, np.zeros((2, 1), dtype=np.int64), HIDDEN, wrong)
    except dtrain.MismatchError as e:
        assert "num_experts" in str(e), str(e)
    else:
        raise AssertionError(f"rank {rank}: disagreeing num_experts was not refused")


def main(argv):
    with dtrain.Comm() as comm:
        if len(argv) > 1 and comm.size != int(argv[1]):
            print(f"expected {argv[1]} ranks, got {comm.size}")
            return 1
        try:
            run(comm)
        except Exception:
            traceback.print_exc()
            return 1
        print(f"rank {comm.rank}: MoE across {comm.size} ranks equals numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
