"""Writes the flight-recorder pickles of this folder from h200-1rank/flight-recorder.json (run from this folder).

torch writes its default dump (TORCH_NCCL_DEBUG_INFO_TEMP_FILE, nccl_trace_rank_<N>) with torch::jit::Pickler,
protocol 2, from FlightRecorder::dump_dict: the same keys as the JSON dump, but pg_status holds integers and each
entry's process_group is a tuple (name, desc). Python's pickle at protocol 2 uses the same opcodes for this data
(EMPTY_DICT/LIST, MARK, SETITEMS, APPENDS, BINUNICODE, BININT*, LONG1, BINFLOAT, TUPLE2, NEWTRUE/FALSE, BINPUT/BINGET);
nccl_trace_rank_0.p5 is the same dump re-saved by Python at protocol 5 (FRAME, SHORT_BINUNICODE, MEMOIZE).
"""
import json
import pickle

with open("../h200-1rank/flight-recorder.json") as f:
    dump = json.load(f)
dump["pg_status"] = {k: {n: int(v) for n, v in s.items()} for k, s in dump["pg_status"].items()}
for e in dump["entries"]:
    e["process_group"] = tuple(e["process_group"])
dump.pop("nccl_comm_state", None)
with open("nccl_trace_rank_0", "wb") as f:
    f.write(pickle.dumps(dump, protocol=2))
with open("nccl_trace_rank_0.p5", "wb") as f:
    f.write(pickle.dumps(dump, protocol=5))
