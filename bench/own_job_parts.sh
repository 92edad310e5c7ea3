#!/usr/bin/env bash
# What each part of pathproof's instrumentation costs a user's own job: the same command run as five variants,
# interleaved round by round so that all see the same machine.
#   plain   the command as given
#   env     the command with only the evidence variables pathproof sets for every rank (NCCL log, flight recorder,
#           collective timing) — no Python instrumentation
#   patches pathproof run with no comm hook (--hook-every 0), no NCCL profiler plugin, NCCL and torch quiet
#   hook    as patches, with the sampled recording comm hook (--hook-every 16)
#   noprof  as patches, without the torch.profiler window (--profile-iters 0)
#   full    pathproof run as a user runs it
#   fullnp  as full, without the torch.profiler window
#   bench/own_job_parts.sh PATHPROOF ROUNDS OUTDIR -- COMMAND ARGS…
# VARIANTS="plain full …" picks and orders the variants (default: all but fullnp).
# The command must print "done: …, X ms/step over …, median step Y ms" (examples/*/train.py do). Prints one line per
# run and, per variant, the median of its median steps and of its mean steps.
set -u
pp=$1; n=$2; out=$3; shift 3
[ "$1" = "--" ] && shift
mkdir -p "$out"
quiet=(NCCL_DEBUG=WARN TORCH_NCCL_TRACE_BUFFER_SIZE=0 TORCH_NCCL_ENABLE_TIMING=0)
evidence=(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING,COLL,GRAPH,P2P TORCH_NCCL_TRACE_BUFFER_SIZE=2000
  TORCH_NCCL_ENABLE_TIMING=1 NCCL_DEBUG_FILE="$out/env-nccl.%h.%p.log")
field() { sed -n "s/^.*done: .*, \([0-9.]*\) ms\/step over .*, median step \([0-9.]*\) ms.*/\\$2/p" "$1"; }
for i in $(seq 1 "$n"); do
  for v in ${VARIANTS:-plain env patches hook noprof full}; do
    log="$out/$v-$i.log"
    case $v in
      plain) "$@" > "$log" 2>&1 ;;
      env) env "${evidence[@]}" "$@" > "$log" 2>&1 ;;
      patches) env "${quiet[@]}" "$pp" run --hook-every 0 --profiler-plugin none --out "$out/run-$v-$i" -- "$@" > "$log" 2>&1 ;;
      hook) env "${quiet[@]}" "$pp" run --hook-every 16 --profiler-plugin none --out "$out/run-$v-$i" -- "$@" > "$log" 2>&1 ;;
      noprof) env "${quiet[@]}" "$pp" run --hook-every 0 --profile-iters 0 --profiler-plugin none --out "$out/run-$v-$i" \
        -- "$@" > "$log" 2>&1 ;;
      fullnp) "$pp" run --profile-iters 0 --out "$out/run-$v-$i" -- "$@" > "$log" 2>&1 ;;
      full) "$pp" run --out "$out/run-$v-$i" -- "$@" > "$log" 2>&1 ;;
    esac
    echo "$v $i rc=$? mean $(field "$log" 1) median $(field "$log" 2) ms (load $(cut -d' ' -f1 /proc/loadavg))"
  done
done | tee "$out/runs.txt"
python3 - "$out/runs.txt" <<'PY'
import statistics, sys, collections
by = collections.defaultdict(lambda: ([], []))
for line in open(sys.argv[1]):
    p = line.split()
    try:
        by[p[0]][0].append(float(p[4])); by[p[0]][1].append(float(p[6]))
    except (IndexError, ValueError):
        pass
base = statistics.median(by["plain"][1]) if by["plain"][1] else None
for v, (means, medians) in by.items():
    m = statistics.median(medians)
    print("%-8s median step %.3f ms (x%.3f of plain), mean step %.3f ms, %d runs"
          % (v, m, m / base if base else float("nan"), statistics.median(means), len(medians)))
PY
