# Records per-iteration DDP step times (ms) of a small gloo job: 2 ranks on CPU, one 16 MiB fp32 parameter,
# bucket_cap_mb=64, SGD; 10 warm-up + N measured iterations; perf_counter around forward+backward+step.
import os, sys, time, torch, torch.distributed as dist, torch.multiprocessing as mp
def work(rank, world, n, port, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"; os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0); torch.set_num_threads(1)
    m = torch.nn.Module(); m.w = torch.nn.Parameter(torch.randn(4 * 1024 * 1024) * 0.01)
    ddp = torch.nn.parallel.DistributedDataParallel(m, bucket_cap_mb=64)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    x = torch.randn(4 * 1024 * 1024, generator=torch.Generator().manual_seed(rank))
    rows = []
    for it in range(10 + n):
        t0 = time.perf_counter()
        opt.zero_grad(); loss = (ddp.module.w * x).sum(); loss.backward(); opt.step()
        dist.barrier()
        rows.append((it, (time.perf_counter() - t0) * 1e3))
    if rank == 0:
        with open(out, "w") as f:
            f.write("iteration,ms\n")
            for it, ms in rows[10:]:
                f.write(f"{it},{ms:.4f}\n")
    dist.destroy_process_group()
if __name__ == "__main__":
    n = int(sys.argv[1]); out = sys.argv[2]
    mp.spawn(work, args=(2, n, 29531, out), nprocs=2)
