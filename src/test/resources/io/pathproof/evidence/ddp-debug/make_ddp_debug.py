# Makes the evidence people produce themselves: DDP's debug log (TORCH_DISTRIBUTED_DEBUG) and a plain dump of
# _get_ddp_logging_data() under a name of their own, for a small model of five layers (ten parameters, several buckets).
# Start one process per rank with RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set (or under torchrun); argv[1] is the
# folder the dump goes to. Python's logging at INFO shows distributed.py's own line ("Reducer buckets have been rebuilt").
import json, logging, os, sys
import torch, torch.distributed as dist, torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

logging.basicConfig(level=logging.INFO)
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 256), nn.ReLU(), nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                      nn.Linear(512, 128), nn.ReLU(), nn.Linear(128, 8))
ddp = DDP(model, bucket_cap_mb=0.25)
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
for _ in range(3):
    opt.zero_grad()
    ddp(torch.randn(4, 32)).sum().backward()
    opt.step()
ddp(torch.randn(4, 32))  # the next forward publishes what the last backward did
with open(os.path.join(sys.argv[1], "ddp-state-%d.json" % rank), "w") as f:
    json.dump(ddp._get_ddp_logging_data(), f, default=str, indent=1, sort_keys=True)
dist.destroy_process_group()
