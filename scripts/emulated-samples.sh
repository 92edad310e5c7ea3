#!/usr/bin/env bash
# Makes samples/emulated-h200-x4 and -x8 on a node with ONE GPU: sealed predictions, the DDP baseline through
# `run --emulate` (real torch, real DDP, NCCL 2.28.9 + the emulator patch), and the variants the method diagnoses.
#   scripts/emulated-samples.sh PATHPROOF EMULATOR_LIB_DIR PROFILER_PLUGIN OUT
# PATHPROOF is a pathproof launcher (scripts/bundle.sh makes one for nodes without Java). accept and diagnose need no
# GPU: they run wherever the run directories are brought.
set -u
pp=$1; lib=$2; plugin=$3; out=$4
export NCCL_NVLS_ENABLE=0 NCCL_MNNVL_ENABLE=0
common=(--backend nccl --nccl-lib "$lib" --profiler-plugin "$plugin" --timeout 240)
step() { local s=$(date +%s); echo "== $*"; "$@" > "$out/log-$(date +%s%N).txt" 2>&1; echo "== rc=$? $(( $(date +%s) - s )) s"; }
for n in 4 8; do
  d=$out/emulated-h200-x$n; mkdir -p "$d"
  step "$pp" predict --scenario h200-x$n -o "$d/prediction.json"
  step "$pp" run "${common[@]}" --emulate h200-sxm-x$n-nvswitch --nproc $n --workload one-64mib-fp32 --warmup 3 \
    --iters 24 --prediction "$d/prediction.json" --out "$d/run"
  # The seed's injection: one channel. Variants run as many iterations as their baseline, so replicas compare.
  step "$pp" run "${common[@]}" --emulate h200-sxm-x$n-nvswitch --nproc $n --workload one-64mib-fp32 --warmup 3 \
    --iters 24 --inject NCCL_MIN_NCHANNELS=1 --inject NCCL_MAX_NCHANNELS=1 --out "$d/variant-channels"
done
d=$out/emulated-h200-x4
# NCCL_ALGO=Tree for every collective makes NCCL 2.28.9 refuse DDP's AllGather ("no algorithm/protocol available for
# function AllGather ... NCCL_ALGO was set to Tree"): the per-collective form is the one a user can run.
for v in "proto NCCL_PROTO=LL128" "algo NCCL_ALGO=allreduce:tree" "p2p NCCL_P2P_DISABLE=1" "threads NCCL_NTHREADS=256"; do
  set -- $v
  step "$pp" run "${common[@]}" --emulate h200-sxm-x4-nvswitch --nproc 4 --workload one-64mib-fp32 --warmup 3 \
    --iters 24 --inject "$2" --out "$d/variant-$1"
done
# A bucket-cap change needs several parameters: the small model, baseline and variant.
step "$pp" run "${common[@]}" --emulate h200-sxm-x4-nvswitch --nproc 4 --workload small-4p-fp32 --warmup 3 --iters 12 \
  --out "$d/small-baseline"
step "$pp" run "${common[@]}" --emulate h200-sxm-x4-nvswitch --nproc 4 --workload small-4p-fp32 --warmup 3 --iters 12 \
  --inject bucket_cap_mb=1 --out "$d/variant-bucket-cap"
