"""The example GPT (examples/gpt) trained in PyTorch at dp x tp x pp over gloo: tokens/s to set beside train_gpt's.

    dtrun -n 8 python3 benchmarks/torch_gpt/compare.py --dp 2 --tp 2 --pp 2 [--steps 30] [--json out.json]

Run it under dtrun, as the other comparisons are (the binding must be
importable: PYTHONPATH=<build>/bindings/python, LD_LIBRARY_PATH=<build>/capi);
libdtrain serves only to agree on torch's rendezvous port. benchmarks/run_gpt.sh
runs it and train_gpt with the same options, one after the other.

The model is train_gpt's: a character-level GPT on the same text (the
fortune databases, vocabulary padded to a multiple of 8), learned position
embeddings, pre-norm blocks of causal self-attention and a GELU (tanh) MLP of
4 x hidden, a final norm and an output layer without bias; the same --layers,
--hidden, --heads, --seq, --batch (sequences per step over all ranks) and
--microbatches (per data-parallel rank); AdamW with the global gradient norm
clipped to 1 and a warm-up + cosine learning rate, f32, one compute thread per
rank. The mesh is (pp, dp, tp), tp innermost, as train_gpt's:
  tp  torch.distributed.tensor.parallel: ColwiseParallel on the queries,
      keys and values (three layers, so that a rank's columns are whole heads)
      and on the MLP's first layer, RowwiseParallel on the attention's output
      projection and the MLP's second layer; the token embedding
      RowwiseParallel (split over the vocabulary, as train_gpt's), the output
      layer ColwiseParallel over the vocabulary, its logits left split
      (DTensor, Shard(-1)) for torch's vocabulary-parallel cross-entropy,
      loss_parallel, around the schedule's step, as train_gpt's loss.
  pp  torch.distributed.pipelining: PipelineStage and Schedule1F1B, the
      blocks split evenly, the embeddings on the first stage and the final
      norm, output layer and loss on the last; the loss function divides by
      the micro-batches itself (scale_grads=False), which gives the gradient
      norm of one process's full-batch step (with the default
      scale_grads=True it came out --microbatches times larger).
  dp  DistributedDataParallel over gloo on each stage's module (its DTensor
      parameters made local by torch's _pre_dp_module_transform, the TP + DDP
      composition torch provides), the pipeline stage synchronising on the
      last micro-batch's backward.
A step is one schedule step, the clipping and the AdamW step, and an
allreduce of the loss over all ranks (as train_gpt's step ends). Rank 0
prints a line every --log-every steps and the tokens/s over steps 2 to
--steps (train_gpt's summary counts the same steps), and its process's peak
resident memory.
"""

import argparse
import math
import os
import resource
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import torch_common as common  # noqa: E402  (first: it sets the thread counts numpy and torch read)

import numpy as np  # noqa: E402

VOCAB_PAD = 8  # train_gpt pads the vocabulary to a multiple of this


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    for name, default, what in (("dp", 1, "data-parallel size"), ("tp", 1, "tensor-parallel size"),
                                ("pp", 1, "pipeline stages"), ("microbatches", 4, "micro-batches per step and dp rank"),
                                ("layers", 4, "blocks"), ("hidden", 128, "model width"), ("heads", 4, "attention heads"),
                                ("seq", 64, "context length"), ("batch", 16, "sequences per step over all ranks"),
                                ("steps", 30, "steps"), ("warmup", 20, "learning-rate warm-up steps"),
                                ("log-every", 10, "steps between progress lines"), ("seed", 1, "weights and batches")):
        p.add_argument(f"--{name}", type=int, default=default, help=f"{what} (default {default})")
    p.add_argument("--lr", type=float, default=3e-3, help="peak learning rate (default 0.003)")
    p.add_argument("--data", default="/usr/share/games/fortunes", help="a text file or a fortune directory")
    p.add_argument("--json", help="also write the results here (rank 0)")
    return p.parse_args()


def load_text(path):
    """train_gpt's corpus: the training nine tenths as ids, and the padded vocabulary."""
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path)
                       if "." not in n and os.path.isfile(os.path.join(path, n + ".dat")))
        text = b"".join(open(os.path.join(path, n), "rb").read() for n in names)
    else:
        text = open(path, "rb").read()
    raw = np.frombuffer(text, dtype=np.uint8)
    present = np.unique(raw)
    ids = np.searchsorted(present, raw).astype(np.int64)
    vocab = (len(present) + VOCAB_PAD - 1) // VOCAB_PAD * VOCAB_PAD
    return ids[:len(ids) - len(ids) // 10], vocab


def modules(torch):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self, hidden, heads):
            super().__init__()
            self.dim = hidden // heads
            self.ln1, self.ln2 = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
            self.q, self.k, self.v = (nn.Linear(hidden, hidden) for _ in range(3))
            self.proj = nn.Linear(hidden, hidden)
            self.fc1, self.fc2 = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)

        def forward(self, x):
            b, t, _ = x.shape
            h = self.ln1(x)
            # -1: the heads this tensor-parallel rank holds
            q, k, v = (m(h).view(b, t, -1, self.dim).transpose(1, 2) for m in (self.q, self.k, self.v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(a.transpose(1, 2).reshape(b, t, -1))
            return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))

    class Stage(nn.Module):
        """Blocks [first, last) of the model, with the embeddings or the head where they belong."""

        def __init__(self, args, vocab, first, last):
            super().__init__()
            self.tok = nn.Embedding(vocab, args.hidden) if first == 0 else None
            self.pos = nn.Embedding(args.seq, args.hidden) if first == 0 else None
            self.blocks = nn.ModuleList(Block(args.hidden, args.heads) for _ in range(first, last))
            self.lnf = nn.LayerNorm(args.hidden) if last == args.layers else None
            self.head = nn.Linear(args.hidden, vocab, bias=False) if last == args.layers else None
            for name, p in self.named_parameters():  # GPT-2's initialisation, as train_gpt's
                if p.dim() == 2:
                    scaled = name.endswith(("proj.weight", "fc2.weight"))
                    nn.init.normal_(p, std=0.02 / (math.sqrt(2 * args.layers) if scaled else 1))
                elif name.endswith("bias"):
                    nn.init.zeros_(p)

        def forward(self, x):
            if self.tok is not None:
                x = self.tok(x) + self.pos.weight[:x.shape[1]]
            for block in self.blocks:
                x = block(x)
            if self.head is not None:
                x = self.head(self.lnf(x))
            return x

    return Stage


def tp_plan(stage):
    """torch's tensor-parallel styles for `stage`'s layers, and the names of the parameters they split."""
    from torch.distributed.tensor import Replicate
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel
    plan = {}
    for i in range(len(stage.blocks)):
        for name in ("q", "k", "v", "fc1"):
            plan[f"blocks.{i}.{name}"] = ColwiseParallel()
        for name in ("proj", "fc2"):
            plan[f"blocks.{i}.{name}"] = RowwiseParallel()
    if stage.tok is not None:
        plan["tok"] = RowwiseParallel(input_layouts=Replicate())  # the token ids, whole on every rank
    if stage.head is not None:
        plan["head"] = ColwiseParallel(use_local_output=False)  # logits split over the vocabulary
    split = {f"{layer}.{kind}" for layer in plan for kind in ("weight", "bias")}
    # A row-parallel layer's bias is whole on every rank.
    split -= {f"{layer}.bias" for layer, style in plan.items() if isinstance(style, RowwiseParallel)}
    return plan, split


def refusal(args, world):
    """What about the mesh options does not fit `world` ranks, or None."""
    if args.dp * args.tp * args.pp != world:
        return f"--dp {args.dp} x --tp {args.tp} x --pp {args.pp} is not the world's {world} ranks"
    if args.layers % args.pp or args.heads % args.tp or args.batch % (args.dp * args.microbatches):
        return "--pp must divide --layers, --tp --heads, --dp x --microbatches --batch"
    return None


def main():
    args = parse_args()
    comm, say, torch, dist = common.start(lambda world: refusal(args, world))
    torch.manual_seed(args.seed)

    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B
    from torch.distributed.tensor import DTensor, Replicate
    from torch.distributed.tensor.parallel import loss_parallel, parallelize_module
    from torch.distributed.tensor.parallel.ddp import _pre_dp_module_transform
    from torch.nn.parallel import DistributedDataParallel

    mesh = init_device_mesh("cpu", (args.pp, args.dp, args.tp), mesh_dim_names=("pp", "dp", "tp"))
    pp_rank, dp_rank, tp_rank = (mesh.get_local_rank(d) for d in ("pp", "dp", "tp"))
    # The ranks of one model replica (tp x pp), over which the gradient norm adds up.
    replicas = [dist.new_group([p * args.dp * args.tp + d * args.tp + t for p in range(args.pp)
                                for t in range(args.tp)]) for d in range(args.dp)]
    model_group = replicas[dp_rank]

    train, vocab = load_text(args.data)
    per_stage = args.layers // args.pp
    stage_module = modules(torch)(args, vocab, pp_rank * per_stage, (pp_rank + 1) * per_stage)
    plan, split = tp_plan(stage_module)
    # Each tp rank counts the parameters it holds whole only on tp rank 0: a replica counts once in the norm.
    counted = [name in split or tp_rank == 0 for name, _ in stage_module.named_parameters()]
    parallelize_module(stage_module, mesh["tp"], plan)
    _pre_dp_module_transform(stage_module)
    module = DistributedDataParallel(stage_module, process_group=mesh["dp"].get_group()) if args.dp > 1 \
        else stage_module
    stage = PipelineStage(module, pp_rank, args.pp, torch.device("cpu"), group=mesh["pp"].get_group())
    first, last = pp_rank == 0, pp_rank == args.pp - 1

    def loss_fn(logits, targets):
        # The step's loss is the mean over its micro-batches: each contributes its mean / M. (The
        # schedule's own scale_grads=True left the gradients M times too large here.)
        targets = DTensor.from_local(targets.reshape(-1), logits.device_mesh, [Replicate()])
        return torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), targets) / args.microbatches

    schedule = Schedule1F1B(stage, args.microbatches, loss_fn=loss_fn, scale_grads=False)
    params = list(stage_module.parameters())
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.0)

    def learning_rate(step):
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        progress = min(1.0, (step - args.warmup) / max(1, args.steps - args.warmup - 1))
        return args.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))

    rng = np.random.default_rng(args.seed)
    local = args.batch // args.dp
    tokens = seconds = 0.0
    for step in range(args.steps):
        # Every rank draws the whole step's windows and keeps its data rank's.
        starts = rng.integers(0, len(train) - args.seq - 1, size=args.batch)[dp_rank * local:(dp_rank + 1) * local]
        windows = np.stack([train[s:s + args.seq + 1] for s in starts])
        x, y = torch.from_numpy(windows[:, :-1].copy()), torch.from_numpy(windows[:, 1:].copy())
        dist.barrier()
        t0 = time.perf_counter()
        optimizer.zero_grad(set_to_none=False)
        losses = []
        with loss_parallel():  # the loss and its backward over the logits' vocabulary shards
            if first and last:
                schedule.step(x, target=y, losses=losses)
            elif first:
                schedule.step(x)
            else:
                schedule.step(target=y if last else None, losses=losses)
        squares = torch.zeros(1, dtype=torch.float64)
        for p, mine in zip(params, counted):
            if mine and p.grad is not None:
                squares += p.grad.double().pow(2).sum()
        dist.all_reduce(squares, group=model_group)
        norm = float(squares.sqrt())
        if norm > 1.0:
            for p in params:
                p.grad.mul_(1.0 / (norm + 1e-6))
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(step)
        optimizer.step()
        loss = torch.tensor([float(torch.stack(losses).detach().sum()) if last and tp_rank == 0 and losses else 0.0],
                            dtype=torch.float64)
        dist.all_reduce(loss)
        loss = float(loss) / args.dp
        elapsed = time.perf_counter() - t0
        if step > 0:  # the first step infers shapes and warms the connections up, as train_gpt skips it
            tokens += args.batch * args.seq
            seconds += elapsed
        if (step + 1) % args.log_every == 0 or step == 0 or step + 1 == args.steps:
            say(f"step {step + 1:5d}/{args.steps}  loss {loss:.7f}  grad-norm {norm:.4f}  "
                f"{args.batch * args.seq / elapsed:8.0f} tok/s  {1e3 * elapsed:7.1f} ms", flush=True)

    peak = np.array([resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0], dtype=np.float64)  # MiB
    comm.allreduce(peak, op="max")
    rate = tokens / seconds if seconds > 0 else 0.0
    say(f"summary: {rate:.0f} tokens/s over steps 2-{args.steps} (torch, dp {args.dp} x tp {args.tp} x pp {args.pp}, "
        f"1F1B, {args.microbatches} micro-batches); peak resident memory of a rank {peak[0]:.0f} MiB")
    common.finish(args, comm, dist, say,
                  {"benchmark": "gpt", "side": "torch", "dp": args.dp, "tp": args.tp, "pp": args.pp,
                   "schedule": "1f1b", "microbatches": args.microbatches, "layers": args.layers,
                   "hidden": args.hidden, "heads": args.heads, "seq": args.seq, "batch": args.batch,
                   "vocab": vocab, "steps": args.steps, "tokens_per_s": rate, "final_loss": loss,
                   "peak_rss_mib": float(peak[0])})
    return 0


if __name__ == "__main__":
    sys.exit(main())
