#!/usr/bin/env bash
# For the GPU node: NCCL's own decisions on the emulated single-node machines of samples/emulation-sweep/, for each
# NCCL version given, so that docs/emulation.md's agreement table can be extended to that version.
#
#   scripts/version-agreement.sh OUT NCCL_SRC [NCCL_SRC ...]
#
# NCCL_SRC: an NCCL source tree or tarball (e.g. `git archive --prefix=nccl-2.21.5/ v2.21.5-1 | gzip > nccl-2.21.5.tgz`
# on a machine with NVIDIA/nccl; NCCL's code is never committed here). For each one, in turn:
#   1. build the emulator library (scripts/build-nccl-emulator.sh: the version's patches from
#      native/nccl-emulator/PATCHES) into OUT/lib-VERSION, unless OUT/lib-VERSION already holds a build of the same
#      patches (the device keeps ignored files between calls, so a second call goes straight to the sweep);
#   2. compile native/nccl-emulator/allreduce.c against it (every version is driven by this plain C program, not
#      torch: torch 2.11 does not load 2.22 and older, and one driver for all versions keeps them comparable);
#   3. run samples/emulation-sweep/run.sh with it into OUT/nccl-VERSION (the 13 cases of docs/emulation.md: 7 machines
#      x 10 sizes 4 KiB..1 GiB, the method's overrides, the V100 machine at compute capability 70).
# OUT/TIMES gets the seconds of each step. Then, anywhere with Java (no GPU needed):
#   scripts/emulation-agreement.py OUT/nccl-VERSION --markdown     # compares pathproof's model, per field
# Nothing is compared here and nothing is claimed: the decisions are NCCL's, timings in its logs are not physical.
#
# Environment: JOBS (make -j, default nproc), ARCH (the real GPU's, default sm_90), CUDA_HOME (else nvcc's).
set -euo pipefail

usage() { echo "usage: $0 OUT NCCL_SRC [NCCL_SRC ...]  (NCCL_SRC: a source tree or .tar/.tgz of one)" >&2; exit 2; }
[ $# -ge 2 ] || usage
mkdir -p "$1"; out=$(cd "$1" && pwd); shift
here=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-$(nproc)}
arch=${ARCH:-sm_90}
command -v nvidia-smi >/dev/null && nvidia-smi -L | head -n 1 >&2 || echo "version-agreement: no nvidia-smi (no GPU?)" >&2
# the toolkit whose include/ holds cuda_runtime.h, as scripts/build-nccl-emulator.sh finds it
cuda_home=${CUDA_HOME:-}
if [ -z "$cuda_home" ]; then
  for c in "$(dirname "$(dirname "$(readlink -f "$(command -v nvcc 2>/dev/null || echo /nonexistent/bin/nvcc)")")")" /usr/local/cuda; do
    [ -f "$c/include/cuda_runtime.h" ] && { cuda_home=$c; break; }
  done
fi
[ -n "$cuda_home" ] || { echo "version-agreement: no CUDA toolkit found (set CUDA_HOME)" >&2; exit 2; }
cudalib=$cuda_home/lib64; [ -d "$cudalib" ] || cudalib=$cuda_home/lib
times="$out/TIMES"
stamp() { date +%s; }

for given in "$@"; do
  t0=$(stamp)
  if [ -d "$given" ]; then
    src=$(cd "$given" && pwd)
  elif [ -f "$given" ]; then
    unpacked="$out/src/$(basename "$given" | sed 's/\.\(tar\.gz\|tgz\|tar\)$//')"
    if [ ! -d "$unpacked" ]; then
      mkdir -p "$unpacked.tmp" && tar -xf "$given" -C "$unpacked.tmp" && mv "$unpacked.tmp" "$unpacked"
    fi
    # the tree itself, or the one folder a tarball made with --prefix=DIR/ unpacks into
    mk=$(find "$unpacked" -maxdepth 3 -path '*/makefiles/version.mk' | sort | head -n 1)
    src=${mk:+$(dirname "$(dirname "$mk")")}
  else
    echo "version-agreement: $given is neither a directory nor a file" >&2; exit 2
  fi
  [ -n "${src:-}" ] && [ -f "$src/makefiles/version.mk" ] || { echo "version-agreement: no NCCL source in $given" >&2; exit 2; }
  ver=$(awk -F' *:= *' '/^NCCL_MAJOR/{a=$2}/^NCCL_MINOR/{b=$2}/^NCCL_PATCH/{c=$2}END{print a"."b"."c}' "$src/makefiles/version.mk")
  lib="$out/lib-$ver"
  echo "== NCCL $ver from $given" >&2

  # 1. the emulator library (skipped when this lib dir holds a build of the same patches)
  minor=${ver%.*}
  row=$(awk -v m="$minor" '$1 == m { print $2, $3 }' "$here/native/nccl-emulator/PATCHES")
  [ -n "$row" ] || { echo "version-agreement: no emulator patch for NCCL $ver (native/nccl-emulator/PATCHES)" >&2; exit 3; }
  want=$(sha256sum "$here/native/nccl-emulator/${row%% *}" | cut -c1-64)
  if [ -f "$lib/libnccl.so.2" ] && grep -q "^patch_sha256=$want$" "$lib/BUILD-INFO" 2>/dev/null \
      && grep -q "^arch=$arch$" "$lib/BUILD-INFO"; then
    echo "version-agreement: $lib already built ($(grep build_seconds "$lib/BUILD-INFO"))" >&2
    tb=0
  else
    b0=$(stamp)
    "$here/scripts/build-nccl-emulator.sh" "$src" "$lib" --arch "$arch" --jobs "$jobs"
    tb=$(( $(stamp) - b0 ))
  fi

  # 2. the C driver, against this library's nccl.h
  c0=$(stamp)
  gcc -O2 "$here/native/nccl-emulator/allreduce.c" -I "$lib" -I "$cuda_home/include" -L "$lib" \
    -L "$cudalib" -Wl,-rpath,"$cudalib" -l:libnccl.so.2 -lcudart -o "$lib/allreduce"
  tc=$(( $(stamp) - c0 ))

  # 3. the sweep
  s0=$(stamp)
  rm -rf "$out/nccl-$ver"
  bash "$here/samples/emulation-sweep/run.sh" "$lib" "$out/nccl-$ver" "$lib/allreduce" > "$out/sweep-$ver.log" 2>&1 || true
  ts=$(( $(stamp) - s0 ))
  cp "$lib/BUILD-INFO" "$out/nccl-$ver/BUILD-INFO"
  bad=$(grep -c "rc=[1-9]" "$out/sweep-$ver.log" || true)
  echo "nccl=$ver build_s=$tb compile_s=$tc sweep_s=$ts total_s=$(( $(stamp) - t0 )) cases_failed=$bad" | tee -a "$times" >&2
  grep -h "NCCL version" "$out/nccl-$ver"/*/nccl-rank0.log 2>/dev/null | sort -u | head -n 1 >&2 || true
done
echo "version-agreement: done; compare with: scripts/emulation-agreement.py $out/nccl-VERSION --markdown" >&2
