#!/usr/bin/env bash
# What made this folder: on ONE H200 (torch 2.11.0, CUDA 13), NCCL 2.28.9 + pathproof's emulator patch
# (scripts/build-nccl-emulator.sh) asked what it decides on each machine in topologies/, AllReduce Sum f32 4 KiB … 1 GiB,
# and on the 4 × H200 NVSwitch machine with the environment overrides the method's variants use.
#   samples/emulation-sweep/run.sh LIB_DIR OUT_DIR [PROGRAM]
# PROGRAM: a compiled native/nccl-emulator/allreduce.c to drive NCCL instead of torch (for an NCCL torch does not load;
# scripts/version-agreement.sh passes it for every version).
# Timings in what it prints are not physical (the rank processes take turns on one GPU); the decisions are NCCL's.
set -u
lib=$1/libnccl.so.2; out=$2; here=$(cd "$(dirname "$0")" && pwd)
program=(); [ $# -ge 3 ] && program=(--program "$3")
mkdir -p "$out"
cases=()
sweep() { name=$1; shift; echo "== $name $*"; s=$(date +%s.%N)
  cases+=("$(python3 -c 'import json,sys; a=sys.argv[2:]; env=dict(a[i+1].split("=",1) for i in range(len(a)) if a[i]=="--env"); print(json.dumps({"case":sys.argv[1],"topology":a[a.index("--topo")+1].rsplit("/",1)[-1],"env":env}))' "$name" "$@")")
  timeout 200 python3 "$here/../../native/nccl-emulator/sweep.py" --lib "$lib" --out "$out/$name" ${program[@]+"${program[@]}"} "$@" --timeout 180
  echo "== $name rc=$? $(python3 -c "import time;print(round(time.time()-$s,1))") s"
  (IFS=,; echo "[${cases[*]}]") > "$out/cases.json"; }
x4="$here/topologies/h200-nvswitch-x4.xml"; few=1048576,67108864
sweep h200-nvswitch-x4 --topo "$x4"
sweep x4-channels-1 --topo "$x4" --sizes $few --env NCCL_MIN_NCHANNELS=1 --env NCCL_MAX_NCHANNELS=1
sweep x4-proto-ll128 --topo "$x4" --sizes $few --env NCCL_PROTO=LL128
sweep x4-algo-tree --topo "$x4" --sizes $few --env NCCL_ALGO=Tree
sweep x4-p2p-disable --topo "$x4" --sizes $few --env NCCL_P2P_DISABLE=1
sweep x4-nthreads-256 --topo "$x4" --sizes $few --env NCCL_NTHREADS=256
for t in h200-nvswitch-x8 h200-nvswitch-x2 h800-like-nvswitch-8link-x8 h200-partial-mesh-ring-x4 h200-pcie-switch-x4 \
         h200-pcie-2socket-x8; do
  sweep "$t" --topo "$here/topologies/$t.xml"
done
# The seed's machine (4 × V100-SXM2, NV2 between every pair) on an H200: the topology says sm 70, the patch reports
# compute capability 70; the kernels are still the H200's (sm_90) — see docs/emulation.md for what that decides.
sweep v100-nv2-x4-cc70 --topo "$here/topologies/v100-sxm2-nv2-x4.xml" --sizes 4096,1048576,67108864 --env NCCL_EMULATE_COMPCAP=70
