#!/usr/bin/env bash
# The user's-own-job chain on a node with ONE GPU, on the scripts of examples/: a real one-rank NCCL run, the same
# scripts on an emulated H200 × 4 (4 ranks on the one GPU, NCCL decisions real, timings not physical), a comm hook
# that compresses, prove on the emulated machine, and the instrumentation's cost on the real GPU.
#   scripts/own-job-gpu.sh PATHPROOF EMULATOR_LIB_DIR OUT [runs|prove|all]
# PATHPROOF is a pathproof launcher (scripts/bundle.sh makes one for nodes without Java). The parts fit one device
# call each (10 minutes): runs = the runs and their acceptance; prove = prove and the overhead.
set -u
pp=$1; lib=$2; out=$3; part=${4:-all}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 NCCL_MNNVL_ENABLE=0
emu=(--emulate h200-sxm-x4-nvswitch --nccl-lib "$lib")
step() { local s=$(date +%s); echo "== $*"; "$@"; echo "== rc=$? $(( $(date +%s) - s )) s"; }
tr() { echo torchrun --nproc_per_node "$1" --master_addr 127.0.0.1 --master_port $((29400 + RANDOM % 500)); }

if [ "$part" != prove ]; then
step "$pp" run --timeout 150 --out "$out/h200-lm-1rank" -- $(tr 1) examples/lm/train.py --steps 40
step "$pp" accept --run "$out/h200-lm-1rank"
step "$pp" run --timeout 150 "${emu[@]}" --out "$out/emu-convnet" -- $(tr 4) examples/convnet/train.py --steps 24
step "$pp" accept --run "$out/emu-convnet"
step "$pp" run --timeout 150 "${emu[@]}" --out "$out/emu-convnet-fp16" -- $(tr 4) examples/convnet/train.py --steps 24 --comm-hook fp16
step "$pp" accept --run "$out/emu-convnet-fp16"
fi
if [ "$part" != runs ]; then
step "$pp" prove --timeout 150 --emulate --nccl-lib "$lib" --topology h200-sxm-x4-nvswitch --seed 1 --out "$out/prove-emu-recsys" -- \
  $(tr 4) examples/recsys/train.py --steps 40
# The instrumentation's cost on the real GPU: plain and instrumented runs alternating, one rank, a step long enough
# to stand for training (batch 64 × 128 tokens).
step bench/own_job_overhead.sh "$pp" 3 "$out/overhead-lm" -- $(tr 1) examples/lm/train.py --steps 100 --batch 64 --seq-len 128
fi
