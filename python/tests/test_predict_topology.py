"""Which topology the in-run prediction asks pathproof for (no torch, no Java: the argument lists only)."""

from pathproof_torch import _predict


def test_a_given_topology_carries_its_nodes(monkeypatch, tmp_path):
    monkeypatch.setenv("PATHPROOF_TOPOLOGY", "h200-sxm-x4-nvswitch")
    monkeypatch.setenv("PATHPROOF_TOPOLOGY_NODES", "2")
    got = list(_predict.topology_candidates(str(tmp_path), True, "h", 2, None))
    assert got == [(["--topology", "h200-sxm-x4-nvswitch", "--nodes", "2"], "given to pathproof run")]


def test_this_hosts_dump_stands_for_every_node_of_the_job(monkeypatch, tmp_path):
    monkeypatch.delenv("PATHPROOF_TOPOLOGY", raising=False)
    dump = tmp_path / "nccl-topo.xml"
    dump.write_text("<system version=\"1\"></system>\n")
    monkeypatch.setenv("NCCL_TOPO_DUMP_FILE", str(dump))
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi
    got = list(_predict.topology_candidates(str(tmp_path), True, "h", 4, None))
    assert got[0][0] == ["--topology", str(dump), "--nodes", "4"]
    one = list(_predict.topology_candidates(str(tmp_path), True, "h", 1, None))
    assert one[0][0] == ["--topology", str(dump)]
