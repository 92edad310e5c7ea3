"""pathproof: instruments this Python process when it is part of a job `pathproof run -- COMMAND` wraps.

Copied as sitecustomize.py into the directory pathproof puts first on PYTHONPATH. Python imports only the first
sitecustomize it finds, so this one runs the one it shadows (Debian's, a virtualenv's, the user's) first. It never
fails the process: a problem of the instrumentation is one line on stderr, and the job runs uninstrumented.
"""
import os
import sys


def _chain():
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        if not entry or os.path.abspath(entry) == here:
            continue
        other = os.path.join(entry, "sitecustomize.py")
        if os.path.isfile(other):
            import importlib.util
            spec = importlib.util.spec_from_file_location("_pathproof_shadowed_sitecustomize", other)
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except Exception as e:  # noqa: BLE001 - the user's own sitecustomize failing is theirs to see
                print("pathproof: %s failed: %r" % (other, e), file=sys.stderr)
            return


_chain()
try:
    from pathproof_torch import _boot
    _boot.boot()
except Exception as e:  # noqa: BLE001 - never stop the user's job
    print("pathproof: instrumentation not installed: %r" % (e,), file=sys.stderr)
