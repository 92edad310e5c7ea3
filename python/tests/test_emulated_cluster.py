"""An emulated cluster's ranks, all started by one launcher on one GPU: each local rank takes its node's host id,
topology file and busId from PATHPROOF_EMULATE_NODES before NCCL starts (no torch needed)."""

import json
import os
import subprocess
import sys

from pathproof_torch import _boot

NODES = json.dumps({"ranksPerNode": 2, "nodes": [
    {"hostId": "n-0", "topoFile": "/r/emulated-topo-node0.xml", "busIds": ["0000:00:06.0", "0000:2a:00.0"]},
    {"hostId": "n-1", "topoFile": "/r/emulated-topo-node1.xml", "busIds": ["0000:00:06.0", "0000:2a:00.0"]}]})


def test_local_ranks_go_node_by_node():
    assert _boot.emulated_node(0, NODES) == {"NCCL_HOSTID": "n-0", "NCCL_TOPO_FILE": "/r/emulated-topo-node0.xml",
                                             "NCCL_EMULATE_BUSID": "0000:00:06.0", "PATHPROOF_EMULATED_NODE": "0"}
    assert _boot.emulated_node(3, NODES) == {"NCCL_HOSTID": "n-1", "NCCL_TOPO_FILE": "/r/emulated-topo-node1.xml",
                                             "NCCL_EMULATE_BUSID": "0000:2a:00.0", "PATHPROOF_EMULATED_NODE": "1"}
    assert _boot.emulated_node(4, NODES) is None
    with_plugin = json.loads(NODES)
    with_plugin["nodes"][1]["nicsFile"] = "/r/emulated-nics-node1.txt"
    assert _boot.emulated_node(2, json.dumps(with_plugin))["PATHPROOF_NET_EMU_NICS_FILE"] == "/r/emulated-nics-node1.txt"
    assert "PATHPROOF_NET_EMU_NICS_FILE" not in _boot.emulated_node(0, json.dumps(with_plugin))


def _boot_in_child(local, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PATHPROOF_", "NCCL_"))}
    env.update({"PATHPROOF_EMULATE_BUSIDS": "0000:00:06.0,0000:2a:00.0,0000:00:06.0,0000:2a:00.0",
                "PATHPROOF_EMULATE_NODES": NODES, "PATHPROOF_CUDA_DEVICE": "0", "LOCAL_RANK": str(local),
                "PYTHONPATH": os.path.dirname(os.path.dirname(_boot.__file__))})
    code = ("import json, os\nfrom pathproof_torch import _boot\n_boot.emulate_device()\n"
            "print(json.dumps({k: os.environ.get(k) for k in ('NCCL_HOSTID', 'NCCL_TOPO_FILE', 'NCCL_EMULATE_BUSID',"
            " 'LOCAL_RANK', 'PATHPROOF_LOCAL_RANK')}))\n")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=str(tmp_path))


def test_a_rank_takes_its_node_and_sees_device_zero(tmp_path):
    p = _boot_in_child(2, tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"NCCL_HOSTID": "n-1", "NCCL_TOPO_FILE": "/r/emulated-topo-node1.xml",
                                    "NCCL_EMULATE_BUSID": "0000:00:06.0", "LOCAL_RANK": "0",
                                    "PATHPROOF_LOCAL_RANK": "2"}


def test_a_rank_beyond_the_cluster_stops_with_why(tmp_path):
    p = _boot_in_child(4, tmp_path)
    assert p.returncode == 3
    assert "local rank 4 has no place in the emulated cluster" in p.stderr


def test_the_sweep_driver_starts_every_rank_of_every_node_as_pathproof_describes_them(tmp_path):
    """native/nccl-emulator/sweep.py --pathproof-emulated under the environment `pathproof run --emulate ... --nodes N`
    gives a command: each rank of the plain C program (here a shell stand-in) on its node, with its log file."""
    sweep = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "native", "nccl-emulator", "sweep.py")
    prog = tmp_path / "allreduce"
    prog.write_text("#!/bin/sh\necho \"$1 $2 $NCCL_HOSTID $NCCL_TOPO_FILE $NCCL_EMULATE_BUSID $NCCL_DEBUG_FILE\"\n")
    prog.chmod(0o755)
    lib = tmp_path / "libnccl.so.2"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PATHPROOF_", "NCCL_", "LD_PRELOAD"))}
    env.update({"PATHPROOF_EMULATE_NODES": NODES, "PATHPROOF_OUT": str(tmp_path), "LD_PRELOAD": str(lib)})
    p = subprocess.run([sys.executable, sweep, "--pathproof-emulated", "--program", str(prog), "--sizes", "4096",
                        "--timeout", "30"], env=env, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "4 ranks on 2 emulated nodes" in p.stdout
    # the last line: the dynamic loader complains first about the stand-in library it cannot preload
    lines = [(tmp_path / ("stdout-rank%d.txt" % r)).read_text().splitlines()[-1].split() for r in range(4)]
    assert lines[3] == ["3", "4", "n-1", "/r/emulated-topo-node1.xml", "0000:2a:00.0",
                        str(tmp_path / "nccl-rank3.log")]
    assert [x[2] for x in lines] == ["n-0", "n-0", "n-1", "n-1"]
