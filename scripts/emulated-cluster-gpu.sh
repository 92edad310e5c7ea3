#!/usr/bin/env bash
# For the GPU node (one GPU): NCCL's own decisions on emulated CLUSTERS, every node's ranks on the one GPU, the nodes
# joined by NCCL's Socket transport over lo (one NIC 'lo' per node at the cluster's NIC speed, no GPUDirect), and
# one real DDP job on an emulated 2 x 8 H200 cluster, accepted. Everything it made ends in ONE file:
# OUT/emulated-cluster.tgz.
#
#   scripts/emulated-cluster-gpu.sh PATHPROOF NCCL_SRC OUT [sweep|ddp|plugin|network|slow|prove|all]
#
# PATHPROOF: a pathproof launcher (scripts/bundle.sh makes one for nodes without Java). NCCL_SRC: an NCCL source tree
# or tarball (.tar.xz/.tgz; the project's is .gpu/nccl.tar.xz, NCCL 2.28.9), built once into WORK/lib-VERSION with
# the emulator patch (scripts/build-nccl-emulator.sh) and kept there for later calls (WORK, default .emu/cluster, is
# ignored by git and survives between device calls). Then:
#   sweep: the plain C program native/nccl-emulator/allreduce.c (no torch) on each cluster shape below, AllReduce Sum
#          float32 4 KiB .. 1 GiB, driven through `pathproof run --emulate TOPOLOGY --nodes N` (sweep.py
#          --pathproof-emulated): each shape's folder is a pathproof run directory with each node's topology file,
#          the cluster the model is asked about (emulated-cluster.json) and every rank's NCCL log;
#   ddp:   `run --emulate h200-sxm-x8-nvswitch --nodes 2 -- torchrun --nproc_per_node 16 examples/recsys/train.py`
#          (16 ranks on one GPU: the model small, the steps few) and `accept --run` on it: the sample
#          samples/emulated-h200-2x8/ to be;
#   network (not in all): the 2 x 8 HGX shape through the plugin with each network fault prove may inject (NCCL
#          variables, and node 1's NICs slowed);
#   slow (not in all): Socket shapes whose nodes differ: one node's NIC slower than the others';
#   prove (not in all): prove on a user's job on that shape with a network fault (FAULT=K=V), diagnosed blind;
#   plugin (not in all): two 2 x 8 HGX H200 shapes (8 x 400 Gb/s NICs per node, GPUDirect claimed or not) through
#          pathproof's emu net plugin (--net-plugin, native/nccl-net-emu) instead of Socket over lo.
# Afterwards, anywhere with Java (no GPU): scripts/emulation-agreement.py --clusters DIR/sweep --markdown, DIR being
# where OUT/emulated-cluster.tgz was unpacked. Timings in every log are not physical; the decisions are NCCL's.
# Environment: JOBS (make -j, default nproc), ARCH (the real GPU's, default sm_90), CUDA_HOME (else nvcc's), WORK,
# SIZES (the AllReduce sizes of every shape, instead of 4 KiB .. 1 GiB), ONLY (a regex: the sweep's shapes to run).
set -u
[ $# -ge 3 ] || { echo "usage: $0 PATHPROOF NCCL_SRC OUT [sweep|ddp|plugin|network|slow|prove|all]" >&2; exit 2; }
pp=$1; given=$2; mkdir -p "$3"; out=$(cd "$3" && pwd); part=${4:-all}
here=$(cd "$(dirname "$0")/.." && pwd)
work=${WORK:-$here/.emu/cluster}; mkdir -p "$work"; work=$(cd "$work" && pwd)
jobs=${JOBS:-$(nproc)}
arch=${ARCH:-sm_90}
# Never NVLink SHARP or multi-node NVLink on the one shared GPU (the emulation sets them too; a direct call here must).
export NCCL_NVLS_ENABLE=0 NCCL_MNNVL_ENABLE=0
log=$work/log-$part.txt; : > "$log"
step() { local s=$(date +%s); echo "== $*" | tee -a "$log"; "$@" >> "$log" 2>&1; local rc=$?
  echo "== rc=$rc $(( $(date +%s) - s )) s" | tee -a "$log"; return $rc; }
t0=$(date +%s)
command -v nvidia-smi >/dev/null && nvidia-smi -L | head -n 1 | tee -a "$log"

# 1. The emulator library, once per patch (as scripts/version-agreement.sh keeps it).
if [ -d "$given" ]; then src=$(cd "$given" && pwd); else
  unpacked=$work/src; if [ ! -f "$unpacked/.done" ]; then rm -rf "$unpacked"; mkdir -p "$unpacked"
    tar -xf "$given" -C "$unpacked" && touch "$unpacked/.done"; fi
  mk=$(find "$unpacked" -maxdepth 3 -path '*/makefiles/version.mk' | sort | head -n 1)
  src=${mk:+$(dirname "$(dirname "$mk")")}
fi
[ -n "${src:-}" ] && [ -f "$src/makefiles/version.mk" ] \
  || { echo "emulated-cluster: no NCCL source in $given" >&2; exit 2; }
ver=$(awk -F' *:= *' '/^NCCL_MAJOR/{a=$2}/^NCCL_MINOR/{b=$2}/^NCCL_PATCH/{c=$2}END{print a"."b"."c}' \
  "$src/makefiles/version.mk")
lib=$work/lib-$ver
row=$(awk -v m="${ver%.*}" '$1 == m { print $2 }' "$here/native/nccl-emulator/PATCHES")
[ -n "$row" ] || { echo "emulated-cluster: no emulator patch for NCCL $ver" >&2; exit 3; }
want=$(sha256sum "$here/native/nccl-emulator/$row" | cut -c1-64)
if ! { [ -f "$lib/libnccl.so.2" ] && grep -q "^patch_sha256=$want$" "$lib/BUILD-INFO" 2>/dev/null; }; then
  step "$here/scripts/build-nccl-emulator.sh" "$src" "$lib" --arch "$arch" --jobs "$jobs" || exit 3
fi
cuda_home=${CUDA_HOME:-}
if [ -z "$cuda_home" ]; then
  nvcc=$(readlink -f "$(command -v nvcc 2>/dev/null || echo /nonexistent/bin/nvcc)")
  for c in "$(dirname "$(dirname "$nvcc")")" /usr/local/cuda; do
    [ -f "$c/include/cuda_runtime.h" ] && { cuda_home=$c; break; }
  done
fi
cudalib=$cuda_home/lib64; [ -d "$cudalib" ] || cudalib=$cuda_home/lib
if [ ! -x "$lib/allreduce" ] || [ "$here/native/nccl-emulator/allreduce.c" -nt "$lib/allreduce" ] \
    || [ "$lib/libnccl.so.2" -nt "$lib/allreduce" ]; then
  step gcc -O2 "$here/native/nccl-emulator/allreduce.c" -I "$lib" -I "$cuda_home/include" -L "$lib" -L "$cudalib" \
    -Wl,-rpath,"$cudalib" -l:libnccl.so.2 -lcudart -o "$lib/allreduce" || exit 3
fi
echo "library: NCCL $ver $(( $(date +%s) - t0 )) s" | tee -a "$log"

# 2. The cluster shapes Socket over lo can emulate: 2-8 nodes, 1-8 GPUs per node, NVSwitch and PCIe nodes, one NIC
#    per node at 10-400 Gb/s (h200-x1-vm keeps its own 10 Gb/s port: --nic-speed fills only a node without NIC).
#    Each shape: NAME TOPOLOGY NODES GPUS_PER_NODE NIC_MBPS SIZES. The shape of 32 ranks stops at 256 MiB: 32
#    processes each holding 1 GiB on the GPU and in host memory would not fit the node's minutes.
all=4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456,1073741824
upto256=4096,16384,65536,262144,1048576,4194304,16777216,67108864,268435456
# SIZES (optional) replaces both lists: several NCCL versions then fit one device call (the sizes where the
# algorithm, protocol or channel count may change, e.g. 4096,65536,1048576,16777216,268435456).
if [ -n "${SIZES:-}" ]; then all=$SIZES; upto256=$SIZES; fi
topos=$here/samples/emulation-sweep/topologies
shapes=(
  "h200-nvswitch-2x8-400g h200-sxm-x8-nvswitch 2 8 400000 $all"
  "h200-nvswitch-4x4-200g h200-sxm-x4-nvswitch 4 4 200000 $all"
  "h200-nvswitch-8x2-100g h200-sxm-x8-nvswitch 8 2 100000 $all"
  "h200-vm-8x1-10g h200-x1-vm 8 1 10000 $all"
  "h200-pcie-switch-2x4-25g $topos/h200-pcie-switch-x4.xml 2 4 25000 $all"
  "h200-pcie-2socket-2x8-100g $topos/h200-pcie-2socket-x8.xml 2 8 100000 $all"
  "h800-nvswitch-2x8-200g h800-sxm-x8-nvswitch 2 8 200000 $all"
  "h200-nvswitch-4x8-400g h200-sxm-x8-nvswitch 4 8 400000 $upto256"
)
# shape NAME TOPOLOGY NODES GPUS_PER_NODE SIZES [run's flags ...]: one shape through pathproof run into WORK/sweep/NAME
shape() {
  local name=$1 topo=$2 nodes=$3 per=$4 sizes=$5; shift 5
  step "$pp" run --timeout 150 --emulate "$topo" --nodes "$nodes" --nproc-per-node "$per" "$@" --nccl-lib "$lib" \
    --out "$work/sweep/$name" -- python3 "$here/native/nccl-emulator/sweep.py" --pathproof-emulated \
    --program "$lib/allreduce" --sizes "$sizes" --timeout 140
  # pathproof run says "no rank built a DDP model" (exit 3): the program is not torch. The sums are the check.
  echo "$name: $(cat "$work/sweep/$name"/stdout-rank*.txt 2>/dev/null | grep -c ': correct') sums correct," \
    "$(cat "$work/sweep/$name"/stdout-rank*.txt 2>/dev/null | grep -c 'WRONG') wrong," \
    "$(grep -h -m1 -o 'nNodes [0-9]*' "$work/sweep/$name/nccl-rank0.log" 2>/dev/null)," \
    "$(grep -h -m1 -o 'via NET/[A-Za-z]*' "$work/sweep/$name/nccl-rank0.log" 2>/dev/null)" | tee -a "$log"
  rm -f "$work/sweep/$name/nccl-id"
}
if [ "$part" = all ] || [ "$part" = sweep ]; then
  rm -rf "$work/sweep"; mkdir -p "$work/sweep"
  for s in "${shapes[@]}"; do
    set -- $s
    [ -z "${ONLY:-}" ] || [[ $1 =~ $ONLY ]] || continue
    shape "$1" "$2" "$3" "$4" "$6" --nic-speed "$5"
  done
  cp "$lib/BUILD-INFO" "$work/sweep/BUILD-INFO"
fi
# plugin (its own call): HGX nodes, one 400 Gb/s NIC beside each GPU, through pathproof's emu net plugin
# (native/nccl-net-emu, built here without NCCL) instead of Socket over lo; 4 KiB .. 64 MiB, as its own GPU check.
# Any NCCL the emulator patches: the plugin exports ncclNetPlugin_v8, _v10, _v11 and _v12, and each version takes the
# newest it knows (native/nccl-net-emu/README.md, "NCCL versions"); its layouts are checked against this NCCL's headers.
if [ "$part" = plugin ]; then
  mkdir -p "$work/sweep"
  step "$here/native/nccl-net-emu/build.sh" "$work/net-emu" --abi-check "$src" || exit 3
  # pathproof gives NCCL the plugin by file name, its folder on LD_LIBRARY_PATH (NCCL 2.27.3 takes no path there).
  for g in gdr nogdr; do
    rm -rf "$work/sweep/h200-hgx-2x8-8nic-$g"
    shape "h200-hgx-2x8-8nic-$g" "$topos/h200-hgx-x8-8nic-$g.json" 2 8 4096,65536,1048576,16777216,67108864 \
      --net-plugin "$work/net-emu"
    echo "h200-hgx-2x8-8nic-$g: NCCL $ver drives the plugin through" \
      "$(grep -h -m1 -o 'through ncclNetPlugin_v[0-9]*' "$work/sweep/h200-hgx-2x8-8nic-$g/nccl-rank0.log" 2>/dev/null \
        | sed 's/through //' || true)" | tee -a "$log"
  done
  cp "$lib/BUILD-INFO" "$work/sweep/BUILD-INFO"
fi

# network (its own call): the network faults prove may draw, as NCCL decides them, on the 2 x 8 HGX shape through
# the emu net plugin: the same cluster with each variable set (--inject), 4 KiB .. 64 MiB; then `prove` on a user's
# job there with one of them as its hidden fault (FAULT, default NCCL_CROSS_NIC=1), diagnosed blind.
if [ "$part" = network ] || [ "$part" = prove ]; then
  mkdir -p "$work/sweep"
  [ -f "$work/net-emu/libnccl-net-emu.so" ] || step "$here/native/nccl-net-emu/build.sh" "$work/net-emu" || exit 3
fi
if [ "$part" = network ]; then
  # NET_NODE: the node file (default h200-hgx-x8-8nic-gdr; h200-hgx-x8-8nic-nogdr for the same nodes without GPUDirect).
  net_node=${NET_NODE:-h200-hgx-x8-8nic-gdr}
  # node1-200g / node1-50g: node 1's eight NICs slowed (knob node_nic_mbps): each node searches its own graphs and
  # the ranks keep the minimum; perpeer-1: one p2p channel per net peer.
  for v in base: gdr-loc:NCCL_NET_GDR_LEVEL=LOC crossnic-0:NCCL_CROSS_NIC=0 crossnic-1:NCCL_CROSS_NIC=1 \
      pxn-off:NCCL_PXN_DISABLE=1 node1-200g:node_nic_mbps=1:200000 node1-100g:node_nic_mbps=1:100000 \
      node1-50g:node_nic_mbps=1:50000 \
      perpeer-1:NCCL_NCHANNELS_PER_NET_PEER=1; do
    [ -z "${ONLY:-}" ] || [[ ${v%%:*} =~ $ONLY ]] || continue
    name=h200-hgx-2x8-8nic-${net_node#h200-hgx-x8-8nic-}-${v%%:*}; inj=${v#*:}; rm -rf "$work/sweep/$name"
    shape "$name" "$topos/$net_node.json" 2 8 4096,1048576,67108864 --net-plugin "$work/net-emu" \
      ${inj:+--inject "$inj"}
  done
  cp "$lib/BUILD-INFO" "$work/sweep/BUILD-INFO"
fi
# slow (its own call): Socket-over-lo shapes whose nodes differ, one node's NIC slowed (knob node_nic_mbps), so that
# every node searches its own graphs before the ranks keep the minimum (init.cc@v2.28.9-1:1175-1192).
if [ "$part" = slow ]; then
  mkdir -p "$work/sweep"
  for s in "h200-nvswitch-2x8-400g-node1-100g h200-sxm-x8-nvswitch 2 8 400000 1:100000" \
      "h200-nvswitch-4x4-200g-node2-50g h200-sxm-x4-nvswitch 4 4 200000 2:50000" \
      "h200-pcie-2socket-2x8-100g-node1-25g $topos/h200-pcie-2socket-x8.xml 2 8 100000 1:25000" \
      "h200-nvswitch-3x8-400g-node0-100g h200-sxm-x8-nvswitch 3 8 400000 0:100000"; do
    set -- $s
    [ -z "${ONLY:-}" ] || [[ $1 =~ $ONLY ]] || continue
    rm -rf "$work/sweep/$1"
    shape "$1" "$2" "$3" "$4" "${SIZES:-4096,65536,1048576,16777216,268435456}" --nic-speed "$5" --inject "node_nic_mbps=$6"
  done
  cp "$lib/BUILD-INFO" "$work/sweep/BUILD-INFO"
fi
if [ "$part" = prove ]; then
  d=$work/prove-network; rm -rf "$d"
  # Relative paths: the sealed prediction names the topology file as given, and the sample must not name this node.
  rel() { case $1 in "$here"/*) echo "${1#"$here"/}" ;; *) echo "$1" ;; esac; }
  # PROVE_NODE: the node file; without GPUDirect by default (h200-hgx-x8-8nic-gdr claims it: FAULT
  # NCCL_NET_GDR_LEVEL=LOC is then the fault to draw; samples/emulated-hgx-2x8-prove-gdr).
  (cd "$here" && step "$pp" prove --emulate --topology "samples/emulation-sweep/topologies/${PROVE_NODE:-h200-hgx-x8-8nic-nogdr}.json" \
    --nodes 2 --net-plugin "$(rel "$work/net-emu")" --nccl-lib "$(rel "$lib")" --fault "${FAULT:-NCCL_CROSS_NIC=1}" \
    --timeout 200 --out "$(rel "$d")" -- torchrun --nproc_per_node 16 --master_addr 127.0.0.1 \
    --master_port $((29400 + RANDOM % 500)) examples/recsys/train.py --steps 12 --users 4096 --items 2048)
  echo "== prove rc=$?" | tee -a "$log"; tail -n 30 "$work/log-$part.txt" | grep -v '^==' | tail -n 12
fi

# 3. One real DDP job on 2 x 8 emulated H200s (the recommender: small embeddings, a few steps), and its acceptance.
if [ "$part" = all ] || [ "$part" = ddp ]; then
  d=$work/emulated-h200-2x8; rm -rf "$d"; mkdir -p "$d"
  step "$pp" run --timeout 300 --warmup 3 --profile-iters 2 --emulate h200-sxm-x8-nvswitch --nodes 2 \
    --nic-speed 400000 --nccl-lib "$lib" --out "$d/run" -- torchrun --nproc_per_node 16 --master_addr 127.0.0.1 \
    --master_port $((29400 + RANDOM % 500)) "$here/examples/recsys/train.py" --steps 16 --users 4096 --items 2048
  "$pp" accept --run "$d/run" > "$d/accept.txt" 2>&1; echo "== accept rc=$?" | tee -a "$log"
  "$pp" accept --run "$d/run" --format json > "$d/accept.json" 2>/dev/null
  tail -n 5 "$d/accept.txt" | tee -a "$log"
fi

echo "total $(( $(date +%s) - t0 )) s" | tee -a "$log"
# ONE file back: the sweep's run directories, the DDP run, the log. The library and NCCL's sources stay in WORK.
parts=($(cd "$work" && ls log-*.txt)); [ -d "$work/sweep" ] && parts+=(sweep); [ -d "$work/emulated-h200-2x8" ] && parts+=(emulated-h200-2x8)
[ -d "$work/prove-network" ] && parts+=(prove-network)
tar -czf "$out/emulated-cluster.tgz" --exclude=.pathproof -C "$work" "${parts[@]}"
ls -la "$out/emulated-cluster.tgz"
