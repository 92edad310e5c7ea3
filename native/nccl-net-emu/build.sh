#!/bin/sh
# Builds pathproof's emu NCCL net plugin with the system C compiler.
#   native/nccl-net-emu/build.sh [OUT] [--selftest] [--abi-check NCCL_HEADERS]
# OUT:        where libnccl-net-emu.so goes (default: target/nccl-net-emu/ under the repository root).
# --selftest: also build selftest.c and fake_libcuda.c and run them: two processes move bytes through the plugin
#             (host buffers, grouped receives, device buffers staged through a stand-in driver), once through each
#             exported ncclNetPlugin_vN; needs no GPU.
# --abi-check NCCL_HEADERS: compare the layout of net_emu_api.h with NCCL's own declarations for every exported
#             version that NCCL declares, NCCL_HEADERS being the folder of NCCL's net.h and net_vN.h (ext-net/
#             example/nccl/ up to 2.28, plugins/net/example/nccl/ from 2.29) or the root of an NCCL source tree; and,
#             with a tree of 2.28 or later, compile the plugin's sources against NCCL's declarations (signatures).
# Needs cuda.h (types only; the driver is opened at run time with dlopen): CUDA_HOME, else the toolkit behind nvcc,
# else /usr/local/cuda. No NCCL header is needed: net_emu_api.h declares the ncclNet ABIs.
set -e
here=$(cd "$(dirname "$0")" && pwd)
out=
selftest=
abi=
while [ $# -gt 0 ]; do
  case "$1" in
    --selftest) selftest=1; shift ;;
    --abi-check) [ $# -ge 2 ] || { echo "build.sh: --abi-check needs a directory" >&2; exit 2; }; abi=$2; shift 2 ;;
    -*) echo "usage: $0 [OUT_DIR] [--selftest] [--abi-check NCCL_HEADERS]" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done
out=${out:-$here/../../target/nccl-net-emu}
cuda_home=${CUDA_HOME:-}
if [ -z "$cuda_home" ]; then
  nvcc_real=$(readlink -f "$(command -v nvcc 2>/dev/null)" || true)
  # nvcc may be a wrapper script outside the toolkit: follow the path it execs
  if [ -f "$nvcc_real" ] && grep -q '^exec ' "$nvcc_real" 2>/dev/null; then
    nvcc_real=$(sed -n 's/^exec \([^ ]*\).*/\1/p' "$nvcc_real")
  fi
  for c in "$(dirname "$(dirname "$nvcc_real")")" /usr/local/cuda; do
    [ -f "$c/include/cuda.h" ] && { cuda_home=$c; break; }
  done
fi
[ -n "$cuda_home" ] && [ -f "$cuda_home/include/cuda.h" ] \
  || { echo "build.sh: no cuda.h found (set CUDA_HOME)" >&2; exit 2; }
mkdir -p "$out"
cc=${CC:-cc}
flags="-std=c11 -O2 -Wall -Wextra -Werror"
# shellcheck disable=SC2086
$cc $flags -fPIC -shared -fvisibility=hidden -I"$cuda_home/include" -o "$out/libnccl-net-emu.so" \
  "$here/net_emu.c" "$here/net_emu_compat.c" "$here/net_emu_config.c" "$here/net_emu_cuda.c" -ldl -lpthread
# Every version some NCCL a PyTorch user has looks up first (README.md, "NCCL versions"), and nothing else.
versions="8 10 11 12"
want=$(for v in $versions; do echo "ncclNetPlugin_v$v"; done | sort)
have=$(nm -D --defined-only "$out/libnccl-net-emu.so" | awk '$2 ~ /^[A-Za-z]$/ && $2 != "A" { print $3 }' | sort)
[ "$have" = "$want" ] || { echo "build.sh: the library exports [$(echo $have)], not [$(echo $want)]" >&2; exit 4; }
if [ -n "$abi" ]; then
  hdr=
  for d in "$abi" "$abi/ext-net/example/nccl" "$abi/plugins/net/example/nccl"; do
    [ -f "$d/net.h" ] && [ -f "$d/net_v8.h" ] && { hdr=$d; break; }
  done
  [ -n "$hdr" ] || { echo "build.sh: no net.h and net_v8.h in $abi (nor under ext-net/example/nccl or" \
    "plugins/net/example/nccl)" >&2; exit 3; }
  defs=; checked=
  for v in $versions; do [ -f "$hdr/net_v$v.h" ] && { defs="$defs -DHAVE_V$v"; checked="$checked v$v"; }; done
  # shellcheck disable=SC2086
  $cc $flags $defs -I"$here" -o "$out/abi-ours" "$here/abi_layout.c" \
    && $cc -std=c11 -DNCCL_HEADER $defs -I"$hdr" -o "$out/abi-nccl" "$here/abi_layout.c" || exit 5
  "$out/abi-ours" > "$out/abi-ours.txt"; "$out/abi-nccl" > "$out/abi-nccl.txt"
  diff "$out/abi-ours.txt" "$out/abi-nccl.txt" >&2 \
    || { echo "build.sh: net_emu_api.h differs from NCCL's ncclNet ($hdr, versions$checked)" >&2; exit 5; }
  echo "build.sh: ncclNet layouts equal NCCL's in $hdr for$checked ($(wc -l < "$out/abi-ours.txt") sizes and" \
    "offsets)" >&2
  # Layouts cannot see a parameter's type (int or size_t): compile the plugin's own sources against NCCL's net.h in
  # place of net_emu_api.h, so that every function in a table must have NCCL's signature. Needs a tree declaring
  # every version the sources use: all four from 2.30; v11 alone (net_emu.c) at 2.28 and 2.29. Sources are copied:
  # a quoted #include looks in the source's own folder first.
  sig=$out/abi-signatures
  srcs=
  [ -f "$hdr/net_v11.h" ] && srcs="net_emu.c net_emu_config.c net_emu_cuda.c"
  [ -f "$hdr/net_v12.h" ] && srcs="$srcs net_emu_compat.c"
  if [ -n "$srcs" ]; then
    rm -rf "$sig"; mkdir -p "$sig"
    for f in $srcs net_emu.h; do cp "$here/$f" "$sig/"; done
    printf '%s\n' '/* build.sh --abi-check: NCCL'"'"'s own declarations instead of pathproof'"'"'s */' '#include "net.h"' \
      '#ifndef NCCL_NET_MAX_DEVS_PER_NIC_V10' '#define NCCL_NET_MAX_DEVS_PER_NIC_V10 4' '#endif' > "$sig/net_emu_api.h"
    for f in $srcs; do
      $cc -std=c11 -fsyntax-only -Werror=incompatible-pointer-types -Werror=int-conversion -Werror=implicit \
        -I"$sig" -I"$hdr" -I"$cuda_home/include" "$sig/$f" \
        || { echo "build.sh: $f does not compile against NCCL's declarations in $hdr" >&2; exit 5; }
    done
    echo "build.sh: the tables' function signatures equal NCCL's in $hdr ($(echo $srcs))" >&2
  else
    echo "build.sh: function signatures not compared here (no ncclNet_v11 in $hdr): --abi-check of a 2.30 tree" \
      "compares v8's and v10's, which it declares unchanged" >&2
  fi
fi
if [ -n "$selftest" ]; then
  # shellcheck disable=SC2086
  $cc $flags -fPIC -shared -I"$cuda_home/include" -o "$out/fake-libcuda.so" "$here/fake_libcuda.c"
  # shellcheck disable=SC2086
  $cc $flags -o "$out/selftest" "$here/selftest.c" -ldl
  "$out/selftest" "$out/libnccl-net-emu.so" "$out/fake-libcuda.so" >&2
fi
echo "$(cd "$out" && pwd)/libnccl-net-emu.so"
