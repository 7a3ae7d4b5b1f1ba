#!/usr/bin/env python3
"""The training loop of train_gpt in Python: the same GPT, data, initial
weights and AdamW, its local math in numpy and everything between ranks
through the dtrain bindings (Mesh, tp, Pipeline, DDP), so that it prints the
losses train_gpt prints for the same options.

    dtrun -n 8 python3 examples/gpt/train_gpt.py --dp 2 --tp 2 --pp 2 --steps 20

Covers dp x tp x pp with the gpipe, 1f1b and interleaved schedules (not cp,
ep, checkpoints or sampling, which train_gpt adds). Needs the binding on
PYTHONPATH.
"""
import argparse
import math
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import dtrain  # noqa: E402

F32 = np.float32
M64 = (1 << 64) - 1


def mix64(x):
    """SplitMix64's finaliser, on a numpy uint64 array (wrapping) or an int."""
    if isinstance(x, int):
        x = (x + 0x9E3779B97F4A7C15) & M64
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & M64
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & M64
        return x ^ (x >> 31)
    with np.errstate(over="ignore"):
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def window_start(seed, step, index, tokens, window):
    return mix64(mix64(mix64(seed) ^ step) ^ index) % (tokens - window - 1)


def name_hash(name):
    h = 0xCBF29CE484222325
    for c in name.encode():
        h = ((h ^ c) * 0x100000001B3) & M64
    return h


def fill_normal(n, key, stddev):
    """train_gpt's Box-Muller numbers from a counter-based generator."""
    i = np.arange(0, n, 2, dtype=np.uint64)
    with np.errstate(over="ignore"):
        h1, h2 = mix64(np.uint64(key) + i), mix64(np.uint64(key) + i + np.uint64(1))
    u1 = ((h1 >> np.uint64(11)).astype(np.float64) + 0.5) / 9007199254740992.0
    u2 = (h2 >> np.uint64(11)).astype(np.float64) / 9007199254740992.0
    r, a = np.sqrt(-2.0 * np.log(u1)), 2.0 * math.pi * u2
    out = np.empty(len(i) * 2, dtype=F32)
    out[0::2] = (r * np.cos(a)).astype(F32) * F32(stddev)
    out[1::2] = (r * np.sin(a)).astype(F32) * F32(stddev)
    return out[:n]


def load_corpus(path, window, pad=8):
    if os.path.isdir(path):
        names = sorted(f for f in os.listdir(path)
                       if "." not in f and os.path.isfile(os.path.join(path, f + ".dat")))
        text = b"".join(open(os.path.join(path, f), "rb").read() for f in names)
    else:
        text = open(path, "rb").read()
    held = max(len(text) // 10, window + 1)
    byte_values = sorted(set(text))
    ids = np.zeros(256, dtype=np.int32)
    ids[byte_values] = np.arange(len(byte_values), dtype=np.int32)
    tokens = ids[np.frombuffer(text, dtype=np.uint8)]
    vocab = (len(byte_values) + pad - 1) // pad * pad
    return tokens[:len(text) - held], vocab


class Param:
    def __init__(self, name, full, split, w):
        self.name, self.full, self.split, self.w = name, full, split, w
        self.g, self.m, self.v = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)


def layernorm(x, g, b):
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=1)
    var = ((x64 - mean[:, None]) ** 2).mean(axis=1)
    rstd = (1.0 / np.sqrt(var + np.float64(F32(1e-5)))).astype(F32)
    return (x - mean.astype(F32)[:, None]) * rstd[:, None] * g + b, (mean.astype(F32), rstd)


def layernorm_backward(x, stats, g, dy, dg, db):
    mean, rstd = stats
    xhat = (x - mean[:, None]) * rstd[:, None]
    d = dy * g
    dg += (dy * xhat).sum(axis=0)
    db += dy.sum(axis=0)
    md = d.astype(np.float64).mean(axis=1).astype(F32)
    mdx = (d * xhat).astype(np.float64).mean(axis=1).astype(F32)
    return rstd[:, None] * (d - md[:, None] - xhat * mdx[:, None])


GELU_C = F32(0.7978845608028654)


def gelu(x):
    return F32(0.5) * x * (F32(1) + np.tanh(GELU_C * (x + F32(0.044715) * x ** 3)))


def gelu_backward(x, dy):
    t = np.tanh(GELU_C * (x + F32(0.044715) * x ** 3))
    dt = GELU_C * (F32(1) + F32(3 * 0.044715) * x * x) * (F32(1) - t * t)
    return dy * (F32(0.5) * (F32(1) + t) + F32(0.5) * x * dt)


class Stage:
    """One pipeline stage of the GPT on this rank (as model.hpp's Stage)."""

    def __init__(self, a, vocab, stage, stages, tp, tp_rank):
        self.a, self.vocab, self.tp, self.tp_rank = a, vocab, tp, tp_rank
        self.first, self.last = stage == 0, stage == stages - 1
        self.params, self.layers = [], []
        H, L = a.hidden, a.layers
        std0, std_out = F32(0.02), F32(0.02) / np.sqrt(F32(2.0 * L))
        if self.first:
            self.tok = self.add("tok_emb", (vocab, H), "rows", std0, 0)
            self.pos = self.add("pos_emb", (a.seq, H), None, std0, 0)
        for layer in range(stage * L // stages, (stage + 1) * L // stages):
            n = f"h{layer}."
            self.layers.append(dict(
                ln1g=self.add(n + "ln1.g", (H,), None, 0, 1), ln1b=self.add(n + "ln1.b", (H,), None, 0, 0),
                qkvw=self.add(n + "qkv.w", (3 * H, H), "qkv", std0, 0), qkvb=self.add(n + "qkv.b", (3 * H,), "qkv", 0, 0),
                projw=self.add(n + "proj.w", (H, H), "columns", std_out, 0),
                projb=self.add(n + "proj.b", (H,), None, 0, 0),
                ln2g=self.add(n + "ln2.g", (H,), None, 0, 1), ln2b=self.add(n + "ln2.b", (H,), None, 0, 0),
                fc1w=self.add(n + "fc1.w", (4 * H, H), "rows", std0, 0),
                fc1b=self.add(n + "fc1.b", (4 * H,), "rows", 0, 0),
                fc2w=self.add(n + "fc2.w", (H, 4 * H), "columns", std_out, 0),
                fc2b=self.add(n + "fc2.b", (H,), None, 0, 0)))
        if self.last:
            self.lnfg, self.lnfb = self.add("lnf.g", (H,), None, 0, 1), self.add("lnf.b", (H,), None, 0, 0)
            self.head = self.add("head.w", (vocab, H), "rows", std0, 0)

    def add(self, name, full, split, stddev, fill):
        whole = np.full(int(np.prod(full)), F32(fill), dtype=F32)
        if stddev:
            whole = fill_normal(whole.size, mix64(self.a.seed) ^ name_hash(name), stddev)
        whole = whole.reshape(full)
        if split is None:
            w = whole
        else:
            local = list(full)
            local[-1 if split == "columns" else 0] //= self.a.tp
            w = np.empty(local, dtype=F32)
            dtrain.tp.shard(split, whole, w, self.tp_rank, self.a.tp, self.a.heads, self.a.heads)
        p = Param(name, full, split, w)
        p.counted = split is not None or self.tp_rank == 0
        self.params.append(p)
        return p

    def attention(self, qkv, seqs, length):
        heads, d = self.a.heads // self.a.tp, self.a.hidden // self.a.heads
        q, k, v = (qkv[:, i * heads * d:(i + 1) * heads * d].reshape(seqs, length, heads, d).transpose(0, 2, 1, 3)
                   for i in range(3))
        s = (q @ k.transpose(0, 1, 3, 2)) * F32(1 / math.sqrt(d))
        s = np.where(np.tril(np.ones((length, length), dtype=bool)), s, -np.inf).astype(F32)
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        p /= p.sum(axis=-1, keepdims=True)
        return (p @ v).transpose(0, 2, 1, 3).reshape(seqs * length, heads * d), (q, k, v, p)

    def attention_backward(self, saved, datt, seqs, length):
        q, k, v, p = saved
        heads, d = q.shape[1], q.shape[3]
        do = datt.reshape(seqs, length, heads, d).transpose(0, 2, 1, 3)
        dp = do @ v.transpose(0, 1, 3, 2)
        dv = p.transpose(0, 1, 3, 2) @ do
        ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
        scale = F32(1 / math.sqrt(d))
        dq, dk = (ds @ k) * scale, (ds.transpose(0, 1, 3, 2) @ q) * scale
        return np.concatenate([t.transpose(0, 2, 1, 3).reshape(seqs * length, heads * d) for t in (dq, dk, dv)], axis=1)

    def forward(self, ids, targets, x, seqs, length):
        tp, rows, H = self.tp, seqs * length, self.a.hidden
        saved = {"blocks": []}
        if self.first:
            x = np.empty((rows, H), dtype=F32)
            dtrain.tp.embedding_forward(tp, self.tok.w, ids, x)
            x += np.tile(self.pos.w[:length], (seqs, 1))
            saved["ids"] = ids
        for l in self.layers:
            b = {"x": x}
            b["h1"], b["s1"] = layernorm(x, l["ln1g"].w, l["ln1b"].w)
            b["qkv"] = np.empty((rows, l["qkvw"].w.shape[0]), dtype=F32)
            dtrain.tp.column_linear_forward(tp, b["h1"], l["qkvw"].w, l["qkvb"].w, b["qkv"])
            b["att"], b["attn"] = self.attention(b["qkv"], seqs, length)
            x1 = np.empty((rows, H), dtype=F32)
            dtrain.tp.row_linear_forward(tp, b["att"], l["projw"].w, l["projb"].w, x1)
            b["x1"] = x1 = x1 + x
            b["h2"], b["s2"] = layernorm(x1, l["ln2g"].w, l["ln2b"].w)
            b["f"] = np.empty((rows, l["fc1w"].w.shape[0]), dtype=F32)
            dtrain.tp.column_linear_forward(tp, b["h2"], l["fc1w"].w, l["fc1b"].w, b["f"])
            b["gl"] = gelu(b["f"])
            out = np.empty((rows, H), dtype=F32)
            dtrain.tp.row_linear_forward(tp, b["gl"], l["fc2w"].w, l["fc2b"].w, out)
            x = out + x1
            saved["blocks"].append(b)
        if not self.last:
            return x, saved, 0.0
        saved["xf"] = x
        saved["hf"], saved["sf"] = layernorm(x, self.lnfg.w, self.lnfb.w)
        saved["logits"] = np.empty((rows, self.head.w.shape[0]), dtype=F32)
        dtrain.tp.column_linear_forward(tp, saved["hf"], self.head.w, None, saved["logits"])
        loss, lse = np.empty(rows, dtype=F32), np.empty(rows, dtype=F32)
        dtrain.tp.cross_entropy_forward(tp, saved["logits"], targets, loss, lse, 0.0, -1)
        saved["targets"], saved["lse"] = targets, lse
        return None, saved, float(loss.astype(np.float64).sum())

    def backward(self, saved, dx, seqs, length, weight):
        tp, rows, H = self.tp, seqs * length, self.a.hidden
        if self.last:
            dlogits = np.empty_like(saved["logits"])
            dtrain.tp.cross_entropy_backward(tp, saved["logits"], saved["targets"], saved["lse"],
                                             np.full(rows, F32(weight)), dlogits, 0.0, -1)
            dh = np.empty((rows, H), dtype=F32)
            dtrain.tp.column_linear_backward(tp, saved["hf"], self.head.w, dlogits, dh, self.head.g, None,
                                             accumulate=True)
            dx = layernorm_backward(saved["xf"], saved["sf"], self.lnfg.w, dh, self.lnfg.g, self.lnfb.g)
        for l, b in zip(reversed(self.layers), reversed(saved["blocks"])):
            dgl = np.empty_like(b["gl"])
            dtrain.tp.row_linear_backward(tp, b["gl"], l["fc2w"].w, dx, dgl, l["fc2w"].g, l["fc2b"].g, accumulate=True)
            df = gelu_backward(b["f"], dgl)
            dh = np.empty((rows, H), dtype=F32)
            dtrain.tp.column_linear_backward(tp, b["h2"], l["fc1w"].w, df, dh, l["fc1w"].g, l["fc1b"].g,
                                             accumulate=True)
            dx = dx + layernorm_backward(b["x1"], b["s2"], l["ln2g"].w, dh, l["ln2g"].g, l["ln2b"].g)
            datt = np.empty_like(b["att"])
            dtrain.tp.row_linear_backward(tp, b["att"], l["projw"].w, dx, datt, l["projw"].g, l["projb"].g,
                                          accumulate=True)
            dqkv = np.ascontiguousarray(self.attention_backward(b["attn"], datt, seqs, length))
            dtrain.tp.column_linear_backward(tp, b["h1"], l["qkvw"].w, dqkv, dh, l["qkvw"].g, l["qkvb"].g,
                                             accumulate=True)
            dx = dx + layernorm_backward(b["x"], b["s1"], l["ln1g"].w, dh, l["ln1g"].g, l["ln1b"].g)
        if not self.first:
            return dx
        self.pos.g[:length] += dx.reshape(seqs, length, H).sum(axis=0)
        dtrain.tp.embedding_backward(tp, saved["ids"], np.ascontiguousarray(dx), self.tok.g, accumulate=True)
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, default in (("dp", 1), ("tp", 1), ("pp", 1), ("chunks", None), ("microbatches", 4), ("steps", 200),
                          ("batch", 16), ("seq", 64), ("hidden", 128), ("heads", 4), ("layers", 4), ("warmup", 20),
                          ("log-every", 10), ("seed", 1)):
        ap.add_argument("--" + name, type=int, default=default)
    for name, default in (("lr", 3e-3), ("min-lr-ratio", 0.1), ("clip", 1.0), ("weight-decay", 0.0)):
        ap.add_argument("--" + name, type=float, default=default)
    ap.add_argument("--schedule", default="1f1b", choices=("gpipe", "1f1b", "interleaved"))
    ap.add_argument("--data", default="/usr/share/games/fortunes")
    a = ap.parse_args()
    chunks = a.chunks or (2 if a.schedule == "interleaved" else 1)
    with dtrain.Comm() as world:
        if a.dp * a.tp * a.pp != world.size:
            print(f"train_gpt.py: --dp {a.dp} x --tp {a.tp} x --pp {a.pp} is not the world's {world.size} ranks")
            return 2
        train, vocab = load_corpus(a.data, a.seq)
        mesh = dtrain.Mesh(world, tp=a.tp, dp=a.dp, pp=a.pp)
        tp, pp, dp, model = mesh.comm("tp"), mesh.comm("pp"), mesh.comm("dp"), mesh.comm("tp", "pp")
        tp_rank, pp_rank, dp_rank = mesh.coord("tp"), mesh.coord("pp"), mesh.coord("dp")
        stages = [Stage(a, vocab, c * a.pp + pp_rank, a.pp * chunks, tp, tp_rank) for c in range(chunks)]
        params = [p for s in stages for p in s.params]
        ddp = dtrain.DDP(dp, [p.g for p in params]) if a.dp > 1 else None
        mb_seqs = a.batch // (a.dp * a.microbatches)
        state = {"step": 0, "loss": 0.0, "saved": {}}

        def windows(mb):
            starts = [window_start(a.seed, state["step"], dp_rank * (a.batch // a.dp) + mb * mb_seqs + i,
                                   len(train), a.seq) for i in range(mb_seqs)]
            ids = np.concatenate([train[s:s + a.seq] for s in starts]).astype(np.int32)
            targets = np.concatenate([train[s + 1:s + a.seq + 1] for s in starts]).astype(np.int32)
            return ids, targets

        def forward(chunk, mb, inp, out):
            ids, targets = windows(mb)
            x = None if inp is None else inp.reshape(-1, a.hidden).copy()
            y, saved, loss = stages[chunk].forward(ids, targets, x, mb_seqs, a.seq)
            state["saved"][chunk, mb] = saved
            state["loss"] += loss
            if out is not None:
                out[:] = y.reshape(-1)

        def backward(chunk, mb, grad_out, grad_in):
            dx = None if grad_out is None else grad_out.reshape(-1, a.hidden).copy()
            weight = 1.0 / (a.microbatches * mb_seqs * a.seq)
            gi = stages[chunk].backward(state["saved"].pop((chunk, mb)), dx, mb_seqs, a.seq, weight)
            if grad_in is not None:
                grad_in[:] = gi.reshape(-1)

        kind = "interleaved_1f1b" if a.schedule == "interleaved" else a.schedule
        schedule = dtrain.PipelineSchedule(kind, a.pp, a.microbatches, chunks if chunks > 1 else None)
        pipe = dtrain.Pipeline(pp, schedule, mb_seqs * a.seq * a.hidden, "float32", forward, backward)
        adam_t = 0
        for step in range(a.steps):
            state["step"], state["loss"] = step, 0.0
            for p in params:
                p.g[...] = 0
            pipe.step()
            if ddp is not None:
                for i in reversed(range(len(params))):
                    ddp.mark_ready(i)
                ddp.wait()
            sq = np.array([sum(float((p.g.astype(np.float64) ** 2).sum()) for p in params if p.counted)])
            model.allreduce(sq)
            norm = math.sqrt(sq[0])
            if a.clip > 0 and norm > a.clip:
                for p in params:
                    p.g *= F32(a.clip / (norm + 1e-6))
            if step < a.warmup:
                lr = a.lr * (step + 1) / a.warmup
            else:
                progress = min(1.0, (step - a.warmup) / max(1, a.steps - a.warmup - 1))
                lr = a.lr * (a.min_lr_ratio + (1 - a.min_lr_ratio) * 0.5 * (1 + math.cos(math.pi * progress)))
            lr = F32(lr)
            adam_t += 1
            b1, b2 = F32(0.9), F32(0.99)
            c1, c2 = F32(1) - b1 ** F32(adam_t), F32(1) - b2 ** F32(adam_t)
            for p in params:
                p.m[...] = b1 * p.m + (F32(1) - b1) * p.g
                p.v[...] = b2 * p.v + (F32(1) - b2) * p.g * p.g
                p.w[...] = p.w * (F32(1) - lr * F32(a.weight_decay)) - (lr / c1) * p.m / (np.sqrt(p.v) / np.sqrt(c2) + F32(1e-8))
            holder = stages[-1].last and tp_rank == 0
            loss = np.array([state["loss"] / (a.microbatches * mb_seqs * a.seq) if holder else 0.0])
            world.allreduce(loss)
            if world.rank == 0 and ((step + 1) % a.log_every == 0 or step == 0 or step + 1 == a.steps):
                print(f"step {step + 1:5d}/{a.steps}  loss {loss[0] / a.dp:.7f}  lr {lr:.2e}  grad-norm {norm:.4f}",
                      flush=True)
        for handle in [pipe, schedule] + ([ddp] if ddp else []) + [tp, pp, dp, model, mesh]:
            handle.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
