"""Small file helpers shared by the instrumentation: atomic JSON, the vocabulary, the per-rank file names."""

import datetime
import json
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_VOCABULARY = None


def vocabulary():
    """vocabulary.json beside this file: what the Java side and this package agree on (knobs, defaults, env)."""
    global _VOCABULARY
    if _VOCABULARY is None:
        with open(os.path.join(_HERE, "vocabulary.json")) as f:
            _VOCABULARY = json.load(f)
    return _VOCABULARY


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def write_json(path, obj):
    """Through a temporary file and a rename: a reader never sees half a file, a dying rank never leaves one."""
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True, default=str)
        f.write("\n")
    os.replace(tmp, path)


def read_json(path, default=None):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def merge_manifest(run_dir, facts):
    """Rank 0's turn of manifest.json: its keys over the file the launcher wrote (schema pathproof.run.manifest/1)."""
    path = os.path.join(run_dir, "manifest.json")
    m = read_json(path, {}) or {}
    if not isinstance(m, dict):
        m = {}
    m.setdefault("schema", "pathproof.run.manifest/1")
    m.update({k: v for k, v in facts.items() if v is not None})
    write_json(path, m)


class JsonLines:
    """One JSON object per line, flushed per call: a rank that dies leaves every line it finished."""

    def __init__(self, path):
        self.path = path
        self.f = None

    def write(self, obj):
        if self.f is None:
            self.f = open(self.path, "a")
        self.f.write(json.dumps(obj, sort_keys=True) + "\n")
        self.f.flush()

    def close(self):
        if self.f is not None:
            self.f.close()
            self.f = None
