#!/usr/bin/env bash
# The cost of pathproof's instrumentation on a user's own job: the same command run plain (A) and under
# `pathproof run --out DIR --` (B), alternating A B B A A B … (each pair's order flips, so that a machine drifting
# steadily in one direction favours neither), N pairs. Each run's time
# per step is the script's own ("done: N steps, X ms/step over steps …, median step Y ms", as examples/*/train.py print
# it after their first steps): X, the mean, carries every one-time cost (the sampled iterations, the profiler window);
# Y, the median step, is issue 13's measure (a typical step).
#   bench/own_job_overhead.sh PATHPROOF N OUTDIR -- COMMAND ARGS…
# Prints one line per pair and the median of the per-pair ratios B/A of both figures, with their range.
set -u
pp=$1; n=$2; out=$3; shift 3
[ "$1" = "--" ] && shift
mkdir -p "$out"
means=(); medians=()
field() { sed -n "s/^.*done: .*, \([0-9.]*\) ms\/step over .*, median step \([0-9.]*\) ms.*/\\$2/p" "$1"; }
for i in $(seq 1 "$n"); do
  plain() { "$@" > "$out/plain-$i.log" 2>&1 || { echo "plain run $i failed: $out/plain-$i.log"; exit 1; }; }
  instrumented() {
    "$pp" run --out "$out/run-$i" -- "$@" > "$out/instrumented-$i.log" 2>&1 \
      || { echo "instrumented run $i failed: $out/instrumented-$i.log"; exit 1; }
  }
  if [ $((i % 2)) -eq 1 ]; then plain "$@"; instrumented "$@"; else instrumented "$@"; plain "$@"; fi
  a=$(field "$out/plain-$i.log" 1); b=$(field "$out/instrumented-$i.log" 1)
  am=$(field "$out/plain-$i.log" 2); bm=$(field "$out/instrumented-$i.log" 2)
  means+=("$(python3 -c "print('%.4f' % ($b / $a))")"); medians+=("$(python3 -c "print('%.4f' % ($bm / $am))")")
  echo "pair $i: mean $a → $b ms/step (${means[-1]}), median step $am → $bm ms (${medians[-1]}) (load $(cut -d' ' -f1 /proc/loadavg))"
done
python3 - "${means[*]}" "${medians[*]}" <<'PY'
import statistics, sys
for name, xs in (("mean step (all costs)", sys.argv[1]), ("median step (issue 13's measure)", sys.argv[2])):
    r = sorted(float(x) for x in xs.split())
    print("%s: median ratio %.4f (range %.4f..%.4f, %d pairs)" % (name, statistics.median(r), r[0], r[-1], len(r)))
PY
