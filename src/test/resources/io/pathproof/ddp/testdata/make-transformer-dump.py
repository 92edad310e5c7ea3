# Makes a parameter dump of a small real model (the README's snippet) and DDP's own account of its buckets.
import json, os, sys, torch, torch.distributed as dist, torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=sys.argv[2] if len(sys.argv) > 2 else "29551")
dist.init_process_group("gloo", rank=0, world_size=1)
torch.manual_seed(0)
def make():
    m = nn.Sequential(nn.Embedding(1000, 256),
                      nn.TransformerEncoder(nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True), 3),
                      nn.Linear(256, 1000))
    m[0].weight.requires_grad = False
    return m
out = sys.argv[1]
with open(out + ".params.jsonl", "w") as f:
    for name, p in make().named_parameters():
        f.write(json.dumps({"name": name, "shape": list(p.shape), "dtype": str(p.dtype),
                            "requires_grad": p.requires_grad}) + "\n")
with open(out + ".ddp.txt", "w") as f:
    f.write("# torch %s, gloo, world size 1; 4 iterations, then one forward; _get_ddp_logging_data()\n" % torch.__version__)
    for name, kw in [("default", {}), ("bucket_cap_mb=1", dict(bucket_cap_mb=1)),
                     ("bucket_cap_mb=0.25", dict(bucket_cap_mb=0.25)),
                     ("find_unused_parameters=True", dict(find_unused_parameters=True)),
                     ("find_unused_parameters=True,bucket_cap_mb=0.25", dict(find_unused_parameters=True, bucket_cap_mb=0.25)),
                     ("static_graph=True,bucket_cap_mb=1", dict(static_graph=True, bucket_cap_mb=1))]:
        m = DDP(make(), **kw)
        x = torch.randint(0, 1000, (2, 5))
        for i in range(4):
            m(x).sum().backward()
        m(x)
        d = m._get_ddp_logging_data()
        f.write("logging %s %s\n" % (name, {k: d.get(k) for k in ("bucket_sizes", "rebuilt_bucket_sizes",
                "rebuilt_per_bucket_param_indices", "prev_iteration_grad_ready_order_indices", "bucket_cap_bytes")}))
