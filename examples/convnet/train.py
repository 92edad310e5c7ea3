#!/usr/bin/env python3
"""A small ResNet-style image classifier trained with DistributedDataParallel.

A conv stem and four stages of residual BasicBlocks with BatchNorm (whose
running statistics are buffers, which DDP broadcasts from rank 0 before each
forward), global average pooling and a linear classifier. SGD with momentum.
The data are synthetic 32x32 images: a fixed pattern per class plus noise, so
the loss goes down.

Launch with torchrun, e.g.:

    torchrun --nproc_per_node 4 examples/convnet/train.py
    torchrun --nproc_per_node 4 examples/convnet/train.py --comm-hook fp16 --bucket-cap-mb 1
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
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20, help="optimizer steps (default 20)")
    p.add_argument("--batch", type=int, default=16, help="images per rank per step (default 16)")
    p.add_argument("--image-size", type=int, default=32, help="image height and width (default 32)")
    p.add_argument("--classes", type=int, default=10, help="number of classes (default 10)")
    p.add_argument("--width", type=int, default=32, help="channels of the first stage (default 32)")
    p.add_argument("--lr", type=float, default=0.05, help="SGD learning rate (default 0.05)")
    p.add_argument("--momentum", type=float, default=0.9, help="SGD momentum (default 0.9)")
    p.add_argument("--comm-hook", choices=["none", "fp16"], default="none",
                   help="DDP communication hook: none (default) or fp16 (default_hooks.fp16_compress_hook)")
    p.add_argument("--bucket-cap-mb", type=float, default=None,
                   help="DDP bucket_cap_mb (default: not passed, i.e. torch's default)")
    p.add_argument("--log-every", type=int, default=5, help="print from rank 0 every N steps (default 5)")
    p.add_argument("--seed", type=int, default=1234, help="base seed (default 1234)")
    return p.parse_args()


class BasicBlock(nn.Module):
    def __init__(self, in_ch, out_ch, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(in_ch, out_ch, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(out_ch)
        self.conv2 = nn.Conv2d(out_ch, out_ch, 3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(out_ch)
        self.shortcut = nn.Sequential()
        if stride != 1 or in_ch != out_ch:
            self.shortcut = nn.Sequential(
                nn.Conv2d(in_ch, out_ch, 1, stride=stride, bias=False),
                nn.BatchNorm2d(out_ch),
            )

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class SmallResNet(nn.Module):
    def __init__(self, width, classes):
        super().__init__()
        widths = [width, 2 * width, 4 * width, 8 * width]
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 3, stride=1, padding=1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(inplace=True),
        )
        stages = []
        in_ch = width
        for i, w in enumerate(widths):
            stages.append(BasicBlock(in_ch, w, stride=1 if i == 0 else 2))
            in_ch = w
        self.stages = nn.Sequential(*stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(in_ch, classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(self.pool(x), 1))


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
    model = SmallResNet(args.width, args.classes).to(device)
    ddp_kwargs = {}
    if args.bucket_cap_mb is not None:
        ddp_kwargs["bucket_cap_mb"] = args.bucket_cap_mb
    ddp_model = DDP(model, device_ids=[local_rank] if device.type == "cuda" else None, **ddp_kwargs)
    if args.comm_hook == "fp16":
        ddp_model.register_comm_hook(state=None, hook=default_hooks.fp16_compress_hook)
    opt = torch.optim.SGD(ddp_model.parameters(), lr=args.lr, momentum=args.momentum, weight_decay=5e-4)

    n_params = sum(p.numel() for p in model.parameters())
    n_tensors = sum(1 for _ in model.parameters())
    n_buffers = sum(1 for _ in model.buffers())
    if rank == 0:
        print(
            f"convnet: backend={backend} world_size={world_size} params={n_params} tensors={n_tensors} "
            f"buffers={n_buffers} comm_hook={args.comm_hook} bucket_cap_mb={args.bucket_cap_mb} "
            f"steps={args.steps} batch={args.batch}",
            flush=True,
        )

    # One fixed pattern per class, the same on every rank; the samples differ per rank.
    proto_gen = torch.Generator().manual_seed(args.seed + 1)
    protos = torch.randn(args.classes, 3, args.image_size, args.image_size, generator=proto_gen)
    gen = torch.Generator().manual_seed(args.seed + 1000 + rank)

    ddp_model.train()
    t0 = time.time()
    settle = min(5, args.steps // 4)  # the first steps build buckets and warm caches: not timed
    t_settled = t0
    step_ms = []  # per step after the first ones, for the median
    t_prev = t0
    for step in range(1, args.steps + 1):
        labels = torch.randint(0, args.classes, (args.batch,), generator=gen)
        noise = torch.randn(args.batch, 3, args.image_size, args.image_size, generator=gen)
        images = (0.5 * protos[labels] + noise).to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)

        loss = F.cross_entropy(ddp_model(images), labels)
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
