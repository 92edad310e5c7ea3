#!/usr/bin/env python3
"""A two-tower recommender trained with DistributedDataParallel.

The user tower embeds a bag of user feature ids (the user id and the user's
segment) with nn.EmbeddingBag and runs an MLP; the item tower does the same
for the item id and its category, and also reads a pretrained tag table that
is frozen (requires_grad=False, so DDP neither buckets nor reduces it). The
score is the dot product of the two towers' outputs; the loss is binary
cross-entropy on click labels. Adam.

The data are synthetic: a hidden affinity between user segments and item
categories decides the click probability, so the loss goes down.

Launch with torchrun, e.g.:

    torchrun --nproc_per_node 4 examples/recsys/train.py
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
    p.add_argument("--steps", type=int, default=100, help="optimizer steps (default 100)")
    p.add_argument("--batch", type=int, default=256, help="(user, item) pairs per rank per step (default 256)")
    p.add_argument("--users", type=int, default=16384, help="number of users (default 16384)")
    p.add_argument("--items", type=int, default=8192, help="number of items (default 8192)")
    p.add_argument("--segments", type=int, default=16, help="user segments (default 16)")
    p.add_argument("--categories", type=int, default=8, help="item categories (default 8)")
    p.add_argument("--tags", type=int, default=1024, help="rows of the frozen tag table (default 1024)")
    p.add_argument("--tags-per-item", type=int, default=4, help="tags in each item's bag (default 4)")
    p.add_argument("--dim", type=int, default=32, help="embedding width (default 32)")
    p.add_argument("--lr", type=float, default=1e-2, help="Adam learning rate (default 1e-2)")
    p.add_argument("--log-every", type=int, default=20, help="print from rank 0 every N steps (default 20)")
    p.add_argument("--seed", type=int, default=1234, help="base seed (default 1234)")
    return p.parse_args()


def mlp(in_dim, hidden, out_dim):
    return nn.Sequential(
        nn.Linear(in_dim, hidden),
        nn.ReLU(),
        nn.Linear(hidden, hidden),
        nn.ReLU(),
        nn.Linear(hidden, out_dim),
    )


class UserTower(nn.Module):
    def __init__(self, users, segments, dim):
        super().__init__()
        # One table for user ids and segment ids (segment k is row users + k).
        self.features = nn.EmbeddingBag(users + segments, dim, mode="sum")
        nn.init.normal_(self.features.weight, std=0.05)
        self.mlp = mlp(dim, 4 * dim, dim)

    def forward(self, bags):
        return self.mlp(self.features(bags))


class ItemTower(nn.Module):
    def __init__(self, items, categories, tags, dim, tag_dim):
        super().__init__()
        # One table for item ids and category ids (category k is row items + k).
        self.features = nn.EmbeddingBag(items + categories, dim, mode="sum")
        nn.init.normal_(self.features.weight, std=0.05)
        # A pretrained tag table, kept frozen.
        self.tags = nn.EmbeddingBag(tags, tag_dim, mode="mean")
        self.tags.weight.requires_grad_(False)
        self.mlp = mlp(dim + tag_dim, 4 * dim, dim)

    def forward(self, bags, tag_bags):
        return self.mlp(torch.cat([self.features(bags), self.tags(tag_bags)], dim=1))


class TwoTower(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.user_tower = UserTower(args.users, args.segments, args.dim)
        self.item_tower = ItemTower(args.items, args.categories, args.tags, args.dim, args.dim // 2)

    def forward(self, user_bags, item_bags, tag_bags):
        u = self.user_tower(user_bags)
        v = self.item_tower(item_bags, tag_bags)
        return (u * v).sum(dim=1)  # one logit per (user, item) pair


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
    model = TwoTower(args).to(device)
    ddp_model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None)
    opt = torch.optim.Adam([p for p in ddp_model.parameters() if p.requires_grad], lr=args.lr)

    n_params = sum(p.numel() for p in model.parameters())
    n_tensors = sum(1 for _ in model.parameters())
    n_trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    n_trainable_tensors = sum(1 for p in model.parameters() if p.requires_grad)
    if rank == 0:
        print(
            f"recsys: backend={backend} world_size={world_size} params={n_params} tensors={n_tensors} "
            f"trainable={n_trainable} trainable_tensors={n_trainable_tensors} "
            f"steps={args.steps} batch={args.batch}",
            flush=True,
        )

    # The hidden world, the same on every rank: who belongs where, and who likes what.
    world = torch.Generator().manual_seed(args.seed + 1)
    user_segment = torch.randint(0, args.segments, (args.users,), generator=world)
    item_category = torch.randint(0, args.categories, (args.items,), generator=world)
    item_tags = torch.randint(0, args.tags, (args.items, args.tags_per_item), generator=world)
    affinity = 3.0 * torch.randn(args.segments, args.categories, generator=world)
    gen = torch.Generator().manual_seed(args.seed + 1000 + rank)  # per-rank samples

    ddp_model.train()
    t0 = time.time()
    settle = min(5, args.steps // 4)  # the first steps build buckets and warm caches: not timed
    t_settled = t0
    step_ms = []  # per step after the first ones, for the median
    t_prev = t0
    for step in range(1, args.steps + 1):
        users = torch.randint(0, args.users, (args.batch,), generator=gen)
        items = torch.randint(0, args.items, (args.batch,), generator=gen)
        seg, cat = user_segment[users], item_category[items]
        clicks = torch.bernoulli(torch.sigmoid(affinity[seg, cat]), generator=gen)
        user_bags = torch.stack([users, args.users + seg], dim=1).to(device)
        item_bags = torch.stack([items, args.items + cat], dim=1).to(device)
        tag_bags = item_tags[items].to(device)
        clicks = clicks.to(device)

        logits = ddp_model(user_bags, item_bags, tag_bags)
        loss = F.binary_cross_entropy_with_logits(logits, clicks)
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
