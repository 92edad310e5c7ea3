#!/usr/bin/env bash
# For the GPU node: emulated 2-node clusters on ONE GPU whose inter-node traffic goes through pathproof's emu net
# plugin, with NCCL 2.28 + the emulator patch driven by native/nccl-emulator/allreduce.c.
#
#   native/nccl-net-emu/gpu-check.sh NCCL [OUT]
#   native/nccl-net-emu/gpu-check.sh --dry-run [OUT]     (no GPU, no NCCL: the plugin's build and selftest, every
#                                                         case's node files, each node's NIC list probed against its
#                                                         topology file by the plugin itself)
#
# NCCL: an emulator build (a folder with libnccl.so.2, nccl.h and BUILD-INFO from scripts/build-nccl-emulator.sh), an
#       NCCL 2.28.x source tree, or a tarball of one (then it is built first, ~30-60 s on 16 cores).
# OUT:  where net-emu-check.tar.gz goes (default: $OUT, else ./net-emu-check-out). Everything the run made is in that
#       one tar: SUMMARY.txt, per case the topology and NIC files of each node, every rank's NCCL log and output, the
#       topology and graph NCCL dumped, and the build's BUILD-INFO.
#
# Cases (each node: its own NCCL_HOSTID, NCCL_TOPO_FILE and NIC list; each NIC under the PCIe switch of a GPU):
#   hgx-2x8-8nic-gdr     2 x 8 H200 (NVSwitch), 8 x 400 Gb/s NICs per node claiming GPUDirect, one per GPU switch
#   hgx-2x4-4nic-gdr     2 x 4 H200, 4 x 400 Gb/s NICs per node claiming GPUDirect
#   hgx-2x8-8nic-nogdr   as the first, the NICs not claiming GPUDirect (host staging by NCCL itself)
#   hgx-2x8-2nic-gdr     2 x 8 H200, 2 x 400 Gb/s NICs per node (under GPU 0's and GPU 4's switch): the other GPUs
#                        are a CPU away from a NIC, where NCCL may route through a NIC-local GPU (PXN)
# Checked (FAIL): a copy from a second context lands beside a thread blocked in a copy (staging-probe.cu, what the
# plugin's GPUDirect staging rests on); every rank's sum is right for every size; NCCL loaded the plugin (v11) and
# assigned it on every rank; nNodes 2; connections go via NET/emu; where GPUDirect is claimed NCCL uses it (/GDRDMA)
# and the plugin staged device bytes through host memory, where it is not NCCL does not; no NET/EMU warning.
# Reported, not judged (NCCL's own decisions): NICs used per node, coll channels, PXN routes, rings, trees,
# algorithm/protocol per size.
# Timings are not physical: every rank takes turns on one GPU and the "network" is loopback TCP.
# Every NCCL process runs with NCCL_NVLS_ENABLE=0 NCCL_MNNVL_ENABLE=0.
#
# Environment: ARCH (the real GPU's, default sm_90), JOBS (make -j), CUDA_HOME (else nvcc's),
# CASE_TIMEOUT (seconds per case, default 80).
set -uo pipefail

usage() { echo "usage: $0 NCCL_LIB_DIR|NCCL_SRC|NCCL_TARBALL|--dry-run [OUT]" >&2; exit 2; }
[ $# -ge 1 ] || usage
dry=; [ "$1" = --dry-run ] && dry=1
here=$(cd "$(dirname "$0")/../.." && pwd)
outdir=${2:-${OUT:-$PWD/net-emu-check-out}}
mkdir -p "$outdir"; outdir=$(cd "$outdir" && pwd)
work=$(mktemp -d -t net-emu-check.XXXXXX)
res="$work/net-emu-check"; mkdir -p "$res"
summary="$res/SUMMARY.txt"
arch=${ARCH:-sm_90}
case_timeout=${CASE_TIMEOUT:-80}
fails=0
say() { echo "$*" | tee -a "$summary" >&2; }
fail() { say "  FAIL $*"; fails=$((fails + 1)); }
ok() { say "  ok   $*"; }
info() { say "  info $*"; }
finish() {
  tar -czf "$outdir/net-emu-check.tar.gz" -C "$work" net-emu-check
  echo "gpu-check: $outdir/net-emu-check.tar.gz ($fails failed checks)" >&2
  rm -rf "$work"
}
trap finish EXIT

command -v nvidia-smi >/dev/null && nvidia-smi -L | head -n 1 | tee -a "$summary" >&2 || say "no nvidia-smi (no GPU?)"
cuda_home=${CUDA_HOME:-}
if [ -z "$cuda_home" ]; then
  for c in "$(dirname "$(dirname "$(readlink -f "$(command -v nvcc 2>/dev/null)" || true)")")" /usr/local/cuda; do
    [ -f "$c/include/cuda_runtime.h" ] && { cuda_home=$c; break; }
  done
fi
[ -n "$cuda_home" ] || { say "no CUDA toolkit found (set CUDA_HOME)"; exit 2; }
cudalib=$cuda_home/lib64; [ -d "$cudalib" ] || cudalib=$cuda_home/lib
t0=$(date +%s)

# 1. the emulator NCCL
given=$1
if [ -n "$dry" ]; then
  say "dry run: no NCCL, no GPU"
elif [ -f "$given/libnccl.so.2" ] && [ -f "$given/BUILD-INFO" ]; then
  lib=$(cd "$given" && pwd)
else
  src=
  if [ -d "$given" ]; then
    src=$(cd "$given" && pwd)
  elif [ -f "$given" ]; then
    mkdir -p "$work/src" && tar -xf "$given" -C "$work/src" || { say "cannot unpack $given"; exit 2; }
    mk=$(find "$work/src" -maxdepth 3 -path '*/makefiles/version.mk' | sort | head -n 1)
    src=${mk:+$(dirname "$(dirname "$mk")")}
  fi
  [ -n "$src" ] && [ -f "$src/makefiles/version.mk" ] || { say "no NCCL build or source in $given"; exit 2; }
  lib="$work/lib"
  "$here/scripts/build-nccl-emulator.sh" "$src" "$lib" --arch "$arch" ${JOBS:+--jobs "$JOBS"} 2>&1 \
    | tee -a "$res/build.log" >&2
  [ -f "$lib/libnccl.so.2" ] || { say "the emulator build failed (build.log)"; exit 1; }
fi
[ -n "$dry" ] || cp "$lib/BUILD-INFO" "$res/BUILD-INFO"
[ -n "$dry" ] || say "NCCL: $(grep '^nccl_version=' "$lib/BUILD-INFO") $(grep '^patch=' "$lib/BUILD-INFO")"

# 2. the plugin (with its GPU-less selftest) and the C driver
plugin=$("$here/native/nccl-net-emu/build.sh" "$work/plugin" --selftest 2>>"$res/plugin-build.log") \
  || { say "plugin build or selftest failed:"; cat "$res/plugin-build.log" >&2; exit 1; }
grep -h "selftest" "$res/plugin-build.log" | tee -a "$summary" >&2
drv="$work/allreduce"
[ -n "$dry" ] || gcc -O2 "$here/native/nccl-emulator/allreduce.c" -I "$lib" -I "$cuda_home/include" -L "$lib" \
  -L "$cudalib" -Wl,-rpath,"$cudalib" -l:libnccl.so.2 -lcudart -o "$drv" \
  || { say "allreduce.c did not compile"; exit 1; }
say "build: $(( $(date +%s) - t0 )) s"

# 3. what the plugin's staging rests on (net_emu_cuda.c): while a thread waits in a blocking copy into pageable
# memory behind a kernel, a copy from a second context of the device reaches a cuMem buffer. On a driver where it does
# not, a DDP job with GPUDirect claimed stops in its first collective that crosses the nodes.
if [ -z "$dry" ]; then
  if "$cuda_home/bin/nvcc" -O2 -arch="$arch" "$here/native/nccl-net-emu/staging-probe.cu" -lcuda \
      -o "$work/staging-probe" 2>> "$res/plugin-build.log"; then
    "$work/staging-probe" 4 legacy-memcpy,stream-sync ce,ctx2-vmm > "$res/staging-probe.txt" 2>&1
    sed 's/^/  info staging-probe: /' "$res/staging-probe.txt" | tee -a "$summary" >&2
    grep -Eq '^legacy-memcpy +ctx2-vmm +ok' "$res/staging-probe.txt" \
      && ok "a copy from the plugin's own context lands while the main thread waits in a blocking copy" \
      || fail "a copy from a second context does not land beside a blocking copy (staging-probe.txt)"
  else
    info "staging-probe.cu did not compile (plugin-build.log): not checked"
  fi
fi

# Bus numbers of an HGX H100/H200 board: GPU g, the PCIe switch above it, the NIC beside it, its root port.
gpu_bus=(18 2a 3a 5d 9a ab ba db)
sw_bus=(15 27 37 5a 97 a8 b7 d8)
nic_bus=(17 29 39 5c 99 aa b9 da)
root_bus=(14 26 36 59 96 a7 b6 d7)

# node_files DIR NODE GPUS NICS GDR SPEED: DIR/nodeN.xml (NCCL_TOPO_FILE) and DIR/nics-nodeN.txt (the plugin's list)
node_files() {
  local dir=$1 node=$2 gpus=$3 nics=$4 gdr=$5 speed=$6 g k c path
  local xml="$dir/node$node.xml" list="$dir/nics-node$node.txt"
  local link='link_speed="32.0 GT/s PCIe" link_width="16"'
  local nvl='<nvlink target="0000:ff:00.0" count="18" tclass="0x068000"/>'
  local cpu='arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143"'
  echo "# node$node: $nics emulated NICs (pathproof emu net plugin)" > "$list"
  {
    echo '<system version="1">'
    for c in 0 1; do
      echo "  <cpu numaid=\"$c\" $cpu>"
      for ((g = c * gpus / 2; g < (c + 1) * gpus / 2; g++)); do
        echo "    <pci busid=\"0000:${sw_bus[g]}:00.0\" class=\"0x060400\" $link>"
        echo "      <pci busid=\"0000:${gpu_bus[g]}:00.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x2335\"" \
          "$link>"
        echo "        <gpu dev=\"$g\" sm=\"90\" gdr=\"1\">$nvl</gpu>"
        echo "      </pci>"
        # NIC k sits beside GPU k*gpus/nics
        for ((k = 0; k < nics; k++)); do
          [ $((k * gpus / nics)) -eq "$g" ] || continue
          echo "      <pci busid=\"0000:${nic_bus[g]}:00.0\" class=\"0x020700\" vendor=\"0x15b3\" device=\"0x1021\"" \
            "$link>"
          echo "        <nic><net name=\"mlx5_$k\"/></nic>"
          echo "      </pci>"
          path="/sys/devices/pci0000:${root_bus[g]}/0000:${root_bus[g]}:01.0/0000:${sw_bus[g]}:00.0"
          path="$path/0000:${nic_bus[g]}:00.0"
          echo "name=mlx5_$k pci=$path speed=$speed gdr=$gdr" >> "$list"
        done
        echo "    </pci>"
      done
      echo "  </cpu>"
    done
    echo '</system>'
  } > "$xml"
}

# run_case NAME GPUS NICS GDR SIZES...: 2 nodes x GPUS ranks
run_case() {
  local name=$1 gpus=$2 nics=$3 gdr=$4; shift 4
  local sizes=("$@") dir="$res/$name" nodes=2 n l r pids=() rcs=() t=$(date +%s)
  local nranks=$((nodes * gpus))
  mkdir -p "$dir"
  for ((n = 0; n < nodes; n++)); do node_files "$dir" "$n" "$gpus" "$nics" "$gdr" 400000; done
  say "== $name: $nodes nodes x $gpus GPUs, $nics NICs per node, GPUDirect claimed: $gdr, sizes ${sizes[*]}"
  if [ -n "$dry" ]; then
    for ((n = 0; n < nodes; n++)); do
      python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$dir/node$n.xml" \
        && ok "node$n.xml is well-formed XML" || fail "node$n.xml is not well-formed"
      if PATHPROOF_NET_EMU_NICS_FILE="$dir/nics-node$n.txt" NCCL_TOPO_FILE="$dir/node$n.xml" NCCL_HOSTID="node$n" \
          "$(dirname "$plugin")/selftest" --probe "$plugin" > "$dir/probe-node$n.txt" 2>&1; then
        ok "node$n: the plugin takes its $(grep -c '^dev ' "$dir/probe-node$n.txt") NICs, each in the topology file \
under $(grep -o 'under pci [0-9a-f:.]*' "$dir/probe-node$n.txt" | sed 's/under pci //' | tr '\n' ' ')"
      else
        fail "node$n: the plugin refuses or warns (probe-node$n.txt)"; cat "$dir/probe-node$n.txt" >&2
      fi
    done
    return
  fi
  for ((n = 0; n < nodes; n++)); do
    for ((l = 0; l < gpus; l++)); do
      r=$((n * gpus + l))
      env NCCL_HOSTID="node$n" NCCL_EMULATE_BUSID="0000:${gpu_bus[l]}:00.0" NCCL_TOPO_FILE="$dir/node$n.xml" \
        PATHPROOF_NET_EMU_NICS_FILE="$dir/nics-node$n.txt" NCCL_NET_PLUGIN="$plugin" NCCL_NET=emu \
        NCCL_IB_DISABLE=1 NCCL_SOCKET_IFNAME=lo NCCL_NVLS_ENABLE=0 NCCL_MNNVL_ENABLE=0 \
        NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH,TUNING,NET,COLL NCCL_DEBUG_FILE="$dir/nccl-rank$r.log" \
        NCCL_TOPO_DUMP_FILE="$dir/nccl-topo-node$n.xml" NCCL_TOPO_DUMP_FILE_RANK=$((n * gpus)) \
        NCCL_GRAPH_DUMP_FILE="$dir/nccl-graph.xml" LD_LIBRARY_PATH="$lib:${LD_LIBRARY_PATH:-}" \
        timeout "$case_timeout" "$drv" "$r" "$nranks" "$dir/id" "${sizes[@]}" > "$dir/rank$r.out" 2>&1 &
      pids+=($!)
    done
  done
  for r in "${!pids[@]}"; do wait "${pids[$r]}"; rcs+=($?); done
  say "  ($(( $(date +%s) - t )) s; rank exit codes: ${rcs[*]})"
  check_case "$dir" "$nranks" "$gpus" "$nics" "$gdr" "${#sizes[@]}"
}

# lines PATTERN N FILE...: the first N distinct NCCL INFO texts matching PATTERN, joined by '|'
lines() {
  local pattern=$1 n=$2; shift 2
  grep -h "$pattern" "$@" 2>/dev/null | sed 's/.*NCCL INFO //' | sort -u | head -n "$n" | tr '\n' '|'
}

check_case() {
  local dir=$1 nranks=$2 gpus=$3 nics=$4 gdr=$5 nsizes=$6 n r logs=()
  for ((r = 0; r < nranks; r++)); do logs+=("$dir/nccl-rank$r.log"); done
  local correct; correct=$(cat "$dir"/rank*.out | grep -c ": correct" || true)
  [ "$correct" -eq $((nranks * nsizes)) ] && ok "sums correct: $correct of $((nranks * nsizes)) (rank x size)" \
    || { fail "sums correct: $correct of $((nranks * nsizes)) (rank x size); rank0.out:"
         head -n 3 "$dir/rank0.out" | tee -a "$summary" >&2; }
  local loaded assigned nn
  loaded=$(grep -l "Loaded net plugin emu (v11)" "${logs[@]}" 2>/dev/null | wc -l)
  assigned=$(grep -l "Assigned NET plugin emu to comm" "${logs[@]}" 2>/dev/null | wc -l)
  [ "$loaded" -eq "$nranks" ] && [ "$assigned" -eq "$nranks" ] \
    && ok "plugin loaded (v11) and assigned on $loaded ranks" \
    || fail "plugin loaded on $loaded, assigned on $assigned of $nranks ranks"
  nn=$(grep -l "nNodes 2 " "${logs[@]}" 2>/dev/null | wc -l)
  [ "$nn" -eq "$nranks" ] && ok "nNodes 2 on every rank" || fail "nNodes 2 on $nn of $nranks ranks"
  local via gdrc pxn
  via=$(grep -h "via NET/emu/" "${logs[@]}" 2>/dev/null | wc -l)
  gdrc=$(grep -h "via NET/emu/.*GDRDMA" "${logs[@]}" 2>/dev/null | wc -l)
  pxn=$(grep -hE "via NET/emu/[0-9]+\([0-9]+\)" "${logs[@]}" 2>/dev/null | wc -l)
  [ "$via" -gt 0 ] && ok "$via connections via NET/emu" || fail "no connection via NET/emu"
  if [ "$gdr" = 1 ]; then
    [ "$gdrc" -gt 0 ] && ok "$gdrc of $via connections /GDRDMA" || fail "GPUDirect claimed, no /GDRDMA connection"
  else
    [ "$gdrc" -eq 0 ] && ok "no /GDRDMA connection (GPUDirect not claimed)" || fail "$gdrc /GDRDMA connections"
  fi
  local staged warns
  staged=$(grep -ho "[0-9]* staged through host" "${logs[@]}" 2>/dev/null | awk '{s += $1} END {print s + 0}')
  if [ "$gdr" = 1 ] && [ "$gdrc" -gt 0 ]; then
    [ "$staged" -gt 0 ] && ok "plugin staged $staged device bytes through host (real CUDA driver)" \
      || fail "GDRDMA connections but no device bytes staged by the plugin"
  else
    info "plugin staged $staged device bytes through host"
  fi
  warns=$(grep -h "NET/EMU" "${logs[@]}" 2>/dev/null | grep -c "WARN" || true)
  if [ "$warns" -eq 0 ]; then
    ok "no NET/EMU warning"
  else
    fail "$warns NET/EMU warnings:"
    grep -h "NET/EMU" "${logs[@]}" | grep WARN | sort | uniq -c | head -n 5 | tee -a "$summary" >&2
  fi
  for ((n = 0; n < 2; n++)); do
    info "node$n NICs used (NET/emu/<dev>): $(cat "${logs[@]:$((n * gpus)):$gpus}" 2>/dev/null \
      | grep -o "via NET/emu/[0-9]*" | sed 's|via NET/emu/||' | sort -un | tr '\n' ' ')"
  done
  info "PXN routes (via NET/emu/<dev>(<proxy rank>)): $pxn; 'PXN' lines: $(lines "PXN" 3 "${logs[@]}")"
  info "rank 0: $(lines "coll channels" 1 "$dir/nccl-rank0.log")"
  info "rank 0: $(lines "GPU Direct RDMA" 2 "$dir/nccl-rank0.log")"
  info "rank 0 trees: $(lines "NCCL INFO Trees" 1 "$dir/nccl-rank0.log")"
  info "rank 0: $(lines "Ring 00 :" 1 "$dir/nccl-rank0.log") graph: $(lines "Pattern" 2 "$dir/nccl-rank0.log")"
  grep -h "AllReduce: [0-9]* Bytes -> Algo" "$dir/nccl-rank0.log" 2>/dev/null | sed 's/.*NCCL INFO //' | head -n 8 \
    | while read -r line; do info "rank 0: $line"; done
  grep -h "NET/EMU : NIC 0 \|NET/EMU : node " "$dir/nccl-rank0.log" 2>/dev/null | sed 's/.*NCCL INFO //' | head -n 2 \
    | while read -r line; do info "rank 0 plugin: $line"; done
}

run_case hgx-2x8-8nic-gdr 8 8 1 4096 65536 1048576 16777216 67108864
# When the first case got no sum at all (plugin not loaded, NCCL refused), the others would only spend GPU time failing
# the same way.
if [ -n "$dry" ] || grep -q ": correct" "$res"/hgx-2x8-8nic-gdr/rank*.out 2>/dev/null; then
  run_case hgx-2x4-4nic-gdr 4 4 1 4096 1048576 67108864
  run_case hgx-2x8-8nic-nogdr 8 8 0 4096 1048576 67108864
  run_case hgx-2x8-2nic-gdr 8 2 1 4096 1048576 67108864
else
  fail "the first case produced no correct sum: the other cases were not run"
fi
say "== total $(( $(date +%s) - t0 )) s, $fails failed checks (timings in the logs are not physical)"
[ "$fails" -eq 0 ]
