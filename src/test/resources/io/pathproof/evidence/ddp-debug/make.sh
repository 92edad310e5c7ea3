#!/bin/sh
# Makes the committed captures of this folder with the torch on PATH's python3 (PY= to choose another): two gloo ranks
# of make_ddp_debug.py, started by hand (RANK, WORLD_SIZE) as a user's own launcher would, each rank's stderr in a file
# of its own, and once both ranks into one file. Usage: make.sh OUT_DIR TAG (e.g. torch-1.13).
set -eu
PY=${PY:-python3}
here=$(cd "$(dirname "$0")" && pwd)
out=$1
tag=$2
port=${PORT:-29617}
for level in DETAIL INFO; do
  d="$out/$tag-$(echo $level | tr A-Z a-z)"
  mkdir -p "$d"
  port=$((port + 1))
  for r in 0 1; do
    TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=$level MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=$r WORLD_SIZE=2 \
      "$PY" "$here/make_ddp_debug.py" "$d" > "$d/train-$r.out" 2> "$d/train-$r.log" &
  done
  wait
done
d="$out/$tag-detail-one-log"
mkdir -p "$d"
port=$((port + 1))
for r in 0 1; do
  TORCH_CPP_LOG_LEVEL=INFO TORCH_DISTRIBUTED_DEBUG=DETAIL MASTER_ADDR=127.0.0.1 MASTER_PORT=$port RANK=$r WORLD_SIZE=2 \
    "$PY" "$here/make_ddp_debug.py" "$d" >> "$d/train.log" 2>&1 &
done
wait
