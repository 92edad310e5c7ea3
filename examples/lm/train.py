#!/usr/bin/env python3
"""A small causal language model trained with DistributedDataParallel.

Token embedding, a learned positional embedding (an nn.Parameter on the top
module), a stack of nn.TransformerEncoder layers under a causal mask, a final
LayerNorm and an output head whose weight is tied to the token embedding.
AdamW. The data are synthetic token sequences that follow a simple learnable
rule, so the loss goes down.

Launch with torchrun, e.g.:

    torchrun --nproc_per_node 4 examples/lm/train.py --steps 20
"""

import argparse
import math
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel as DDP


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20, help="optimizer steps (default 20)")
    p.add_argument("--batch", type=int, default=4, help="sequences per rank per step (default 4)")
    p.add_argument("--seq-len", type=int, default=32, help="tokens per sequence (default 32)")
    p.add_argument("--vocab", type=int, default=2048, help="vocabulary size (default 2048)")
    p.add_argument("--d-model", type=int, default=128, help="model width (default 128)")
    p.add_argument("--heads", type=int, default=4, help="attention heads (default 4)")
    p.add_argument("--layers", type=int, default=2, help="transformer layers (default 2)")
    p.add_argument("--lr", type=float, default=3e-3, help="AdamW learning rate (default 3e-3)")
    p.add_argument("--log-every", type=int, default=5, help="print from rank 0 every N steps (default 5)")
    p.add_argument("--seed", type=int, default=1234, help="base seed (default 1234)")
    return p.parse_args()


class TinyLM(nn.Module):
    def __init__(self, vocab, d_model, heads, layers, max_len):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab, d_model)
        nn.init.normal_(self.tok_emb.weight, std=0.02)  # also the head's weight: keep logits small
        # Learned positional embedding held directly by the top module.
        self.pos_emb = nn.Parameter(torch.zeros(1, max_len, d_model))
        nn.init.normal_(self.pos_emb, std=0.02)
        layer = nn.TransformerEncoderLayer(
            d_model=d_model,
            nhead=heads,
            dim_feedforward=4 * d_model,
            dropout=0.1,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.blocks = nn.TransformerEncoder(layer, num_layers=layers)
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.head.weight = self.tok_emb.weight  # weight tying
        mask = torch.triu(torch.full((max_len, max_len), float("-inf")), diagonal=1)
        self.register_buffer("causal_mask", mask, persistent=False)

    def forward(self, idx):
        t = idx.size(1)
        x = self.tok_emb(idx) + self.pos_emb[:, :t]
        x = self.blocks(x, mask=self.causal_mask[:t, :t])
        return self.head(self.ln_f(x))


def make_batch(gen, batch, seq_len, vocab, device):
    """Sequences where each token is (3 * previous + 7) mod vocab, with 10% random tokens."""
    start = torch.randint(0, vocab, (batch, 1), generator=gen)
    seq = torch.empty(batch, seq_len + 1, dtype=torch.long)
    seq[:, 0:1] = start
    for i in range(1, seq_len + 1):
        seq[:, i] = (3 * seq[:, i - 1] + 7) % vocab
    noise = torch.rand(batch, seq_len + 1, generator=gen) < 0.1
    seq[noise] = torch.randint(0, vocab, (int(noise.sum()),), generator=gen)
    seq = seq.to(device, non_blocking=True)
    return seq[:, :-1], seq[:, 1:]


def main():
    args = parse_args()
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))

    if torch.cuda.is_available():
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        backend = "nccl"
    else:
        device = torch.device("cpu")
        backend = "gloo"
    dist.init_process_group(backend=backend, init_method="env://")

    torch.manual_seed(args.seed)  # identical model init on every rank
    model = TinyLM(args.vocab, args.d_model, args.heads, args.layers, args.seq_len).to(device)
    ddp_model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None)
    opt = torch.optim.AdamW(ddp_model.parameters(), lr=args.lr, weight_decay=0.01)

    n_params = sum(p.numel() for p in model.parameters())
    n_tensors = sum(1 for _ in model.parameters())
    if rank == 0:
        print(
            f"lm: backend={backend} world_size={world_size} params={n_params} tensors={n_tensors} "
            f"steps={args.steps} batch={args.batch} seq_len={args.seq_len}",
            flush=True,
        )

    gen = torch.Generator().manual_seed(args.seed + 1000 + rank)  # per-rank data
    ddp_model.train()
    t0 = time.time()
    settle = min(5, args.steps // 4)  # the first steps build buckets and warm caches: not timed
    t_settled = t0
    step_ms = []  # per step after the first ones, for the median
    t_prev = t0
    for step in range(1, args.steps + 1):
        x, y = make_batch(gen, args.batch, args.seq_len, args.vocab, device)
        logits = ddp_model(x)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if not math.isfinite(loss.item()):
            raise RuntimeError(f"rank {rank}: loss is not finite at step {step}: {loss.item()}")
        if rank == 0 and (step % args.log_every == 0 or step == 1 or step == args.steps):
            print(f"step {step:5d}  loss {loss.item():.4f}  {time.time() - t0:.1f}s", flush=True)
        now = time.time()
        if step > settle:
            step_ms.append((now - t_prev) * 1e3)
        t_prev = now
        if step == settle:
            t_settled = now

    if rank == 0 and args.steps > settle:
        per_step = (time.time() - t_settled) / (args.steps - settle) * 1e3
        median = sorted(step_ms)[len(step_ms) // 2]
        print(f"done: {args.steps} steps, {per_step:.3f} ms/step over steps {settle + 1}..{args.steps}, median step"
              f" {median:.3f} ms", flush=True)
    dist.barrier()
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
