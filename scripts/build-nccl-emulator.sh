#!/usr/bin/env bash
# Builds the NCCL emulator library: NCCL from the user's source checkout with pathproof's small patch
# (native/nccl-emulator/), so N rank processes on ONE GPU each report a fake PCI busId and NCCL believes it sits on
# the N-GPU machine that NCCL_TOPO_FILE describes. NCCL's own code is never copied into this repository: the patch is
# applied to a scratch copy of NCCL_SRC (a git checkout of a tag, e.g. v2.28.9-1).
#
#   scripts/build-nccl-emulator.sh NCCL_SRC OUT [--arch sm_90] [--funcs PATTERN] [--jobs N]
#
# OUT gets libnccl.so.2 (stripped), nccl.h, BUILD-INFO (NCCL version, patch SHA-256, arch, funcs) and the build log.
# --funcs is NCCL's ONLY_FUNCS (src/device/generate.py): the default covers what DDP and torch call — AllReduce Sum
# for f32/f16/bf16 (gradients, torch's barrier) and u32 (DDP's used-parameter map, find_unused_parameters),
# Broadcast (DDP's module-state sync), AllGather (parameter-shape check, all_gather_object) and SendRecv.
set -euo pipefail

usage() { echo "usage: $0 NCCL_SRC OUT [--arch sm_90] [--funcs PATTERN] [--jobs N]" >&2; exit 2; }
[ $# -ge 2 ] || usage
src=$(cd "$1" && pwd) || { echo "build-nccl-emulator: no NCCL source at $1" >&2; exit 2; }
mkdir -p "$2"; out=$(cd "$2" && pwd)
shift 2
arch=sm_90
funcs='AllReduce Sum (f32|f16|bf16|u32) (RING|TREE) *|Broadcast RING *|AllGather RING *|SendRecv'
jobs=$(nproc)
while [ $# -gt 0 ]; do
  case "$1" in
    --arch) arch=$2; shift 2 ;;
    --funcs) funcs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    *) usage ;;
  esac
done
here=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$src/makefiles/version.mk" ] || { echo "build-nccl-emulator: $src is not an NCCL source tree (no makefiles/version.mk)" >&2; exit 2; }
# CUDA_HOME is the toolkit whose include/ holds cuda_runtime.h: the one behind nvcc on PATH (which may be a link or
# a wrapper outside the toolkit), else /usr/local/cuda.
cuda_home=${CUDA_HOME:-}
if [ -z "$cuda_home" ]; then
  for c in "$(dirname "$(dirname "$(readlink -f "$(command -v nvcc 2>/dev/null || echo /nonexistent/bin/nvcc)")")")" /usr/local/cuda; do
    [ -f "$c/include/cuda_runtime.h" ] && { cuda_home=$c; break; }
  done
fi
[ -n "$cuda_home" ] && [ -x "$cuda_home/bin/nvcc" ] || { echo "build-nccl-emulator: no CUDA toolkit found (set CUDA_HOME)" >&2; exit 2; }

ver=$(awk -F' *:= *' '/^NCCL_MAJOR/{a=$2}/^NCCL_MINOR/{b=$2}/^NCCL_PATCH/{c=$2}END{print a"."b"."c}' "$src/makefiles/version.mk")
# The patches per NCCL minor line are data (native/nccl-emulator/PATCHES): the lines they touch moved between releases.
minor=${ver%.*}
table="$here/native/nccl-emulator/PATCHES"
row=$(awk -v m="$minor" '$1 == m { print $2, $3 }' "$table")
[ -n "$row" ] || { echo "build-nccl-emulator: no emulator patch for NCCL $ver (have: $(awk '!/^#/ && NF { printf "%s ", $1 }' "$table"))" >&2; exit 3; }
patch="$here/native/nccl-emulator/${row%% *}"
compat_name=${row##* }
[ -f "$patch" ] || { echo "build-nccl-emulator: $patch is missing" >&2; exit 3; }
sha=$(sha256sum "$patch" | cut -c1-64)

work="$out/.build-src"
rm -rf "$work"; mkdir -p "$work"
# A scratch copy: the user's checkout is never modified.
(cd "$src" && tar --exclude=./build --exclude=./.git -cf - .) | (cd "$work" && tar -xf -)
(cd "$work" && patch -p1 --quiet --forward < "$patch") || { echo "build-nccl-emulator: the patch does not apply to NCCL $ver" >&2; exit 3; }
# An older NCCL line does not compile against CUDA >= 13 headers; its cuda13-compat patch (ours) bridges that.
compat_sha=none
nvcc_major=$("$cuda_home/bin/nvcc" --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
if [ "$compat_name" != "-" ] && [ "$nvcc_major" -ge 13 ]; then
  compat="$here/native/nccl-emulator/$compat_name"
  (cd "$work" && patch -p1 --quiet --forward < "$compat") || { echo "build-nccl-emulator: $compat_name does not apply to NCCL $ver" >&2; exit 3; }
  compat_sha=$(sha256sum "$compat" | cut -c1-64)
fi

num=${arch#sm_}
log="$out/build.log"
echo "build-nccl-emulator: NCCL $ver, $arch, ONLY_FUNCS='$funcs', $jobs jobs (log: $log)" >&2
start=$(date +%s)
if ! make -C "$work" -j"$jobs" src.build CUDA_HOME="$cuda_home" BUILDDIR="$work/build" \
    NVCC_GENCODE="-gencode=arch=compute_$num,code=$arch" ONLY_FUNCS="$funcs" >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  echo "build-nccl-emulator: make failed (whole log: $log)" >&2
  exit 1
fi
lib=$(ls "$work"/build/lib/libnccl.so.*.*.* | head -n 1)
cp "$lib" "$out/libnccl.so.2"
strip --strip-unneeded "$out/libnccl.so.2"
cp "$work/build/include/nccl.h" "$out/nccl.h"
{
  echo "nccl_version=$ver"
  echo "patch=$(basename "$patch")"
  echo "patch_sha256=$sha"
  echo "cuda13_compat_sha256=$compat_sha"
  echo "arch=$arch"
  echo "only_funcs=$funcs"
  echo "cuda=$("$cuda_home/bin/nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
  echo "build_seconds=$(( $(date +%s) - start ))"
} > "$out/BUILD-INFO"
rm -rf "$work"
echo "build-nccl-emulator: $out/libnccl.so.2 ($(du -h "$out/libnccl.so.2" | cut -f1)) in $(( $(date +%s) - start )) s" >&2
