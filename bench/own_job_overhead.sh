#!/usr/bin/env bash
# The cost of pathproof's instrumentation on a user's own job: the same command run plain (A) and under
# `pathproof run --out DIR --` (B), alternating A B A B … so that both see the same machine, N pairs. Each run's time
# per step is the script's own ("done: N steps, X ms/step", as examples/*/train.py print it, after their first steps).
#   bench/own_job_overhead.sh PATHPROOF N OUTDIR -- COMMAND ARGS…
# Prints one line per run and the median of the per-pair ratios B/A with its range.
set -u
pp=$1; n=$2; out=$3; shift 3
[ "$1" = "--" ] && shift
mkdir -p "$out"
ratios=()
for i in $(seq 1 "$n"); do
  "$@" > "$out/plain-$i.log" 2>&1 || { echo "plain run $i failed: $out/plain-$i.log"; exit 1; }
  a=$(sed -n 's/^done: .*, \([0-9.]*\) ms\/step.*/\1/p' "$out/plain-$i.log")
  "$pp" run --out "$out/run-$i" -- "$@" > "$out/instrumented-$i.log" 2>&1 || { echo "instrumented run $i failed: $out/instrumented-$i.log"; exit 1; }
  b=$(sed -n 's/^done: .*, \([0-9.]*\) ms\/step.*/\1/p' "$out/instrumented-$i.log")
  r=$(python3 -c "print('%.4f' % ($b / $a))")
  ratios+=("$r")
  echo "pair $i: plain $a ms/step, instrumented $b ms/step, ratio $r (load $(cut -d' ' -f1 /proc/loadavg))"
done
python3 - "${ratios[@]}" <<'PY'
import statistics, sys
r = sorted(float(x) for x in sys.argv[1:])
print("median ratio %.4f (range %.4f..%.4f, %d pairs)" % (statistics.median(r), r[0], r[-1], len(r)))
PY
