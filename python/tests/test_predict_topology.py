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


def fake_nvidia_smi(tmp_path, monkeypatch):
    """An nvidia-smi on PATH that answers `topo -p2p r` with a matrix whose pair is denied, and `topo -m` with nothing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\n[ \"$2\" = \"-p2p\" ] || exit 1\n"
                   "printf '        GPU0    GPU1\\n GPU0   X       CNS\\n GPU1   CNS     X\\n'\n")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))


def test_the_hosts_peer_access_goes_with_every_candidate_but_an_emulated_machine(monkeypatch, tmp_path):
    fake_nvidia_smi(tmp_path, monkeypatch)
    monkeypatch.setenv("PATHPROOF_TOPOLOGY", "h200-sxm-x4-nvswitch")
    monkeypatch.delenv("PATHPROOF_TOPOLOGY_NODES", raising=False)
    monkeypatch.delenv("PATHPROOF_EMULATE_BUSIDS", raising=False)
    got = list(_predict.topology_candidates(str(tmp_path), True, "h", 1, None))
    p2p = str(tmp_path / "nvidia-smi-p2p.txt")
    assert got == [(["--topology", "h200-sxm-x4-nvswitch", "--peer-access", p2p], "given to pathproof run")]
    assert "CNS" in (tmp_path / "nvidia-smi-p2p.txt").read_text()
    monkeypatch.setenv("PATHPROOF_EMULATE_BUSIDS", "0000:07:00.0,0000:0f:00.0")
    got = list(_predict.topology_candidates(str(tmp_path), True, "h", 1, None))
    assert got == [(["--topology", "h200-sxm-x4-nvswitch"], "given to pathproof run")]
