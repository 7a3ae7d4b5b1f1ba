"""Load balance of a skewed MoE router before and after training it with the auxiliary losses.

    python3 benchmarks/moe_balance.py [--experts 8] [--top-k 2] [--steps 200] [--json PATH]

The binding must be importable (PYTHONPATH=<build>/bindings/python,
LD_LIBRARY_PATH=<build>/capi). One process: the losses are local to a rank.

A router logits = x W + b over fresh random tokens each step starts skewed
(b favours the first experts, as a router that has collapsed onto a few
experts does). Each step adds the gradients of dtrain.moe_balance_loss (the
Switch Transformer loss, coefficient --coeff) and dtrain.moe_z_loss
(coefficient --z-coeff) and takes an SGD step on W and b; there is no task
loss, so what changes is the losses' own doing. Prints the imbalance, max /
mean tokens per expert (1.0 is perfectly even), and the balance loss (1.0
for a uniform router) every --every steps.
"""

import argparse
import json

import numpy as np

import dtrain


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tokens", type=int, default=2048, help="tokens per step (default 2048)")
    p.add_argument("--hidden", type=int, default=64, help="token width (default 64)")
    p.add_argument("--experts", type=int, default=8, help="experts (default 8)")
    p.add_argument("--top-k", type=int, default=2, help="experts per token (default 2)")
    p.add_argument("--steps", type=int, default=200, help="training steps (default 200)")
    p.add_argument("--lr", type=float, default=0.5, help="SGD learning rate (default 0.5)")
    p.add_argument("--coeff", type=float, default=1.0, help="balance loss coefficient (default 1)")
    p.add_argument("--z-coeff", type=float, default=1e-3, help="z-loss coefficient (default 0.001)")
    p.add_argument("--skew", type=float, default=3.0, help="initial logit bias of expert 0, falling linearly to 0")
    p.add_argument("--every", type=int, default=25, help="print every N steps (default 25)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", help="also write the results here")
    return p.parse_args()


def main():
    args = parse_args()
    rng = np.random.default_rng(args.seed)
    e, h = args.experts, args.hidden
    w = (rng.standard_normal((h, e)) * h ** -0.5).astype(np.float32)
    b = np.linspace(args.skew, 0.0, e, dtype=np.float32)
    options = dtrain.MoeOptions(e, args.top_k)
    rows = []
    print(f"# router of {e} experts, k = {args.top_k}, {args.tokens} tokens a step; "
          f"balance loss x {args.coeff}, z-loss x {args.z_coeff}, SGD lr {args.lr}")
    print(f"{'step':>6} {'max/mean':>9} {'balance':>9} {'z-loss':>9}  tokens per expert")
    for step in range(args.steps + 1):
        x = rng.standard_normal((args.tokens, h), dtype=np.float32)
        logits = x @ w + b
        d_logits = np.zeros_like(logits)
        balance, counts = dtrain.moe_balance_loss(logits, options, args.coeff, d_logits)
        z = dtrain.moe_z_loss(logits, args.z_coeff, d_logits)
        imbalance = counts.max() / counts.mean()
        if step % args.every == 0 or step == args.steps:
            print(f"{step:>6} {imbalance:>9.3f} {balance:>9.4f} {z:>9.3f}  {counts.tolist()}")
            rows.append({"step": step, "max_over_mean": float(imbalance), "balance_loss": float(balance),
                         "z_loss": float(z), "counts": counts.tolist()})
        if step < args.steps:
            w -= args.lr * (x.T @ d_logits)
            b -= args.lr * d_logits.sum(0)
    print(f"# max/mean tokens per expert: {rows[0]['max_over_mean']:.3f} before, {rows[-1]['max_over_mean']:.3f} after")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"benchmark": "moe_balance", "experts": e, "top_k": args.top_k, "steps": args.steps,
                       "coeff": args.coeff, "z_coeff": args.z_coeff, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
