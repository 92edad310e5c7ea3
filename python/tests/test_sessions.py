"""A later DDP session of one command: which session a rank is in, and its NCCL files moved into its folder."""

import os

from pathproof_torch import _boot, _sessions


class Store:
    """The part of a c10d store the session choice uses (set by rank 0, waited for and read by the others)."""

    def __init__(self):
        self.kv = {}

    def set(self, k, v):
        self.kv[k] = v.encode()

    def wait(self, keys, timeout):
        missing = [k for k in keys if k not in self.kv]
        if missing:
            raise RuntimeError("timeout waiting for %s" % missing)

    def get(self, k):
        return self.kv[k]


def test_rank_zero_chooses_and_the_others_follow_even_without_files_of_their_own(tmp_path):
    (tmp_path / "rank0.json").write_text("{}")
    store = Store()
    assert _sessions.choose(str(tmp_path), 0, store) == 2
    # rank 1 of the first session died before writing anything: it still joins session 2
    assert _sessions.choose(str(tmp_path), 1, store) == 2


def test_without_a_store_each_rank_decides_from_its_own_files(tmp_path):
    (tmp_path / "rank0.json").write_text("{}")
    (tmp_path / "session-2").mkdir()
    (tmp_path / "session-2" / "rank0.json").write_text("{}")
    assert _sessions.choose(str(tmp_path), 0, None) == 3
    assert _sessions.choose(str(tmp_path), 1, None) == 1


def test_a_log_held_open_moves_into_the_session_and_gets_the_ranks_name_back(tmp_path):
    name = "nccl-rank3.%d.log" % os.getpid()
    target = tmp_path / "session-2"
    target.mkdir()
    with open(tmp_path / name, "w") as f:
        f.write("before\n")
        f.flush()
        moved = _sessions.move_open_files(str(tmp_path), str(target))
        f.write("after\n")  # NCCL goes on writing through its descriptor
    assert moved == ["nccl-rank3.log"]
    assert not (tmp_path / name).exists()
    assert (target / "nccl-rank3.log").read_text() == "before\nafter\n"


def test_the_environment_nccl_reads_later_points_into_the_session(tmp_path, monkeypatch):
    target = str(tmp_path / "session-2")
    monkeypatch.setenv("NCCL_DEBUG_FILE", str(tmp_path / "nccl-rank1.%p.log"))
    monkeypatch.setenv("NCCL_TOPO_DUMP_FILE", str(tmp_path / "nccl-topo.xml"))
    monkeypatch.setenv("PATHPROOF_NCCL_PROFILER_DIR", str(tmp_path))
    _sessions.redirect_env(str(tmp_path), target)
    assert os.environ["NCCL_DEBUG_FILE"] == os.path.join(target, "nccl-rank1.log")
    assert os.environ["NCCL_TOPO_DUMP_FILE"] == os.path.join(target, "nccl-topo.xml")
    assert os.environ["PATHPROOF_NCCL_PROFILER_DIR"] == target


def test_a_restarted_rank_does_not_truncate_the_earlier_sessions_log(tmp_path, monkeypatch):
    (tmp_path / "nccl-rank0.log").write_text("attempt 0\n")
    monkeypatch.setenv("RANK", "0")
    # pathproof's own earlier choice (the flag says so) is made again; both are put back after the test
    monkeypatch.setenv("NCCL_DEBUG_FILE", "chosen-by-the-launcher-process.log")
    monkeypatch.setenv("PATHPROOF_SET_NCCL_DEBUG_FILE", "1")
    _boot.set_rank_env(str(tmp_path))
    assert os.environ["NCCL_DEBUG_FILE"] == str(tmp_path / "nccl-rank0.%p.log")
