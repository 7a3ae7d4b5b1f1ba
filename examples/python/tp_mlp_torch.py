"""A torch model whose MLP is tensor-parallel through dtrain.tp, checked against the same model without it.

    dtrun -n 2 python3 examples/python/tp_mlp_torch.py [--steps N]

The block y = W2 gelu(W1 x + b1) + b2 is split Megatron-style over the ranks:
W1 and b1 by output rows (column-parallel), W2 by input columns
(row-parallel). Two torch.autograd.Functions wrap dtrain.tp's forward and
backward calls, so torch's autograd and optimizer drive the training as
usual; the tensors cross into libdtrain by DLPack, without copies. Every rank
also trains the whole model, without tensor parallelism, from the same
weights on the same data, and the two must agree: the losses within 1e-4
relative at every step, and each rank's shards of the final weights within
1e-4 of the whole model's. Exits 1 when they do not, 0 when they do; 77
(skipped) when PyTorch is not installed.
"""

import argparse
import os
import sys

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import dtrain  # noqa: E402

try:
    import torch
except ImportError:
    print("tp_mlp_torch.py: PyTorch is not installed (pip install torch)")
    sys.exit(77)


class ColumnParallel(torch.autograd.Function):
    """y_r = x W_r^T + b_r with this rank's rows of W; dx is summed over the ranks."""

    @staticmethod
    def forward(ctx, x, weight, bias, comm):
        ctx.save_for_backward(x, weight)
        ctx.comm = comm
        y = x.new_empty(x.shape[0], weight.shape[0])
        dtrain.tp.column_linear_forward(comm, x.detach(), weight.detach(), bias.detach(), y)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight = (t.detach() for t in ctx.saved_tensors)
        dx, dw, db = torch.empty_like(x), torch.empty_like(weight), weight.new_empty(weight.shape[0])
        dtrain.tp.column_linear_backward(ctx.comm, x, weight, dy.detach().contiguous(), dx, dw, db)
        return dx, dw, db, None


class RowParallel(torch.autograd.Function):
    """y = sum over ranks of x_r W_r^T, plus b once."""

    @staticmethod
    def forward(ctx, x, weight, bias, comm):
        ctx.save_for_backward(x, weight)
        ctx.comm = comm
        y = x.new_empty(x.shape[0], weight.shape[0])
        dtrain.tp.row_linear_forward(comm, x.detach(), weight.detach(), bias.detach(), y)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, weight = (t.detach() for t in ctx.saved_tensors)
        dx, dw, db = torch.empty_like(x), torch.empty_like(weight), weight.new_empty(weight.shape[0])
        dtrain.tp.row_linear_backward(ctx.comm, x, weight, dy.detach().contiguous(), dx, dw, db)
        return dx, dw, db, None


class ParallelMlp(torch.nn.Module):
    def __init__(self, dense, comm):
        super().__init__()
        r, n = comm.rank, comm.size
        ffn = dense.up.out_features
        rows = slice(r * ffn // n, (r + 1) * ffn // n)
        self.comm = comm
        self.w1 = torch.nn.Parameter(dense.up.weight.detach()[rows].clone())
        self.b1 = torch.nn.Parameter(dense.up.bias.detach()[rows].clone())
        self.w2 = torch.nn.Parameter(dense.down.weight.detach()[:, rows].clone())
        self.b2 = torch.nn.Parameter(dense.down.bias.detach().clone())
        self.rows = rows

    def forward(self, x):
        h = torch.nn.functional.gelu(ColumnParallel.apply(x, self.w1, self.b1, self.comm), approximate="tanh")
        return RowParallel.apply(h, self.w2, self.b2, self.comm)


class DenseMlp(torch.nn.Module):
    def __init__(self, hidden, ffn):
        super().__init__()
        self.up, self.down = torch.nn.Linear(hidden, ffn), torch.nn.Linear(ffn, hidden)

    def forward(self, x):
        return self.down(torch.nn.functional.gelu(self.up(x), approximate="tanh"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--tokens", type=int, default=32)
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--ffn", type=int, default=64)
    args = p.parse_args()
    torch.set_num_threads(1)
    with dtrain.Comm() as comm:
        say = print if comm.rank == 0 else (lambda *a, **k: None)
        if args.ffn % comm.size:
            sys.exit(f"tp_mlp_torch.py: --ffn {args.ffn} does not divide by {comm.size} ranks")
        torch.manual_seed(0)  # the same weights and data on every rank
        dense = DenseMlp(args.hidden, args.ffn)
        parallel = ParallelMlp(dense, comm)
        target = torch.nn.Linear(args.hidden, args.hidden)  # the function to learn
        optimizers = [torch.optim.SGD(m.parameters(), lr=0.05) for m in (dense, parallel)]
        worst = 0.0
        for step in range(args.steps):
            x = torch.randn(args.tokens, args.hidden)
            with torch.no_grad():
                y = target(x)
            losses = []
            for model, opt in zip((dense, parallel), optimizers):
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(model(x), y)
                loss.backward()
                opt.step()
                losses.append(loss.item())
            worst = max(worst, abs(losses[1] - losses[0]) / abs(losses[0]))
            if step % 5 == 0 or step == args.steps - 1:
                say(f"step {step:3d}  loss without tp {losses[0]:.6f}  with tp over {comm.size} ranks {losses[1]:.6f}")
        with torch.no_grad():
            shards = [(dense.up.weight[parallel.rows], parallel.w1),
                      (dense.down.weight[:, parallel.rows], parallel.w2), (dense.down.bias, parallel.b2)]
            weights = max(float((a - b).abs().max() / a.abs().max()) for a, b in shards)
        say(f"largest relative difference: losses {worst:.2e}, final weights {weights:.2e}")
        if worst > 1e-4 or weights > 1e-4:
            print(f"rank {comm.rank}: the tensor-parallel model drifted from the dense one", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
