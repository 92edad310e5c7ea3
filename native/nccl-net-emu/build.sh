#!/bin/sh
# Builds pathproof's emu NCCL net plugin with the system C compiler.
#   native/nccl-net-emu/build.sh [OUT] [--selftest] [--abi-check NCCL_HEADERS]
# OUT:        where libnccl-net-emu.so goes (default: target/nccl-net-emu/ under the repository root).
# --selftest: also build selftest.c and fake_libcuda.c and run them: two processes move bytes through the plugin
#             (host buffers, grouped receives, device buffers staged through a stand-in driver); needs no GPU.
# --abi-check NCCL_HEADERS: compare the layout of net_emu_api.h with NCCL's own declarations, NCCL_HEADERS being
#             ext-net/example/nccl/ of NCCL's source at the tag in use (or the root of such a source tree).
# Needs cuda.h (types only; the driver is opened at run time with dlopen): CUDA_HOME, else the toolkit behind nvcc,
# else /usr/local/cuda. No NCCL header is needed: net_emu_api.h declares the ncclNet_v11 ABI.
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
  "$here/net_emu.c" "$here/net_emu_config.c" "$here/net_emu_cuda.c" -ldl -lpthread
nm -D --defined-only "$out/libnccl-net-emu.so" | grep -q ' ncclNetPlugin_v11$' \
  || { echo "build.sh: the library does not export ncclNetPlugin_v11" >&2; exit 4; }
if [ -n "$abi" ]; then
  hdr=$abi
  [ -f "$hdr/net_v11.h" ] || hdr=$abi/ext-net/example/nccl
  [ -f "$hdr/net_v11.h" ] || { echo "build.sh: no net_v11.h in $abi (nor in $abi/ext-net/example/nccl)" >&2; exit 3; }
  # shellcheck disable=SC2086
  $cc $flags -o "$out/abi-ours" "$here/abi_layout.c" && $cc -std=c11 -DNCCL_HEADER -I"$hdr" -o "$out/abi-nccl" \
    "$here/abi_layout.c"
  "$out/abi-ours" > "$out/abi-ours.txt"; "$out/abi-nccl" > "$out/abi-nccl.txt"
  diff "$out/abi-ours.txt" "$out/abi-nccl.txt" >&2 \
    || { echo "build.sh: net_emu_api.h differs from NCCL's ncclNet_v11 ($hdr)" >&2; exit 5; }
  echo "build.sh: ncclNet_v11 layout equals $hdr/net_v11.h" >&2
fi
if [ -n "$selftest" ]; then
  # shellcheck disable=SC2086
  $cc $flags -fPIC -shared -I"$cuda_home/include" -o "$out/fake-libcuda.so" "$here/fake_libcuda.c"
  # shellcheck disable=SC2086
  $cc $flags -o "$out/selftest" "$here/selftest.c" -ldl
  "$out/selftest" "$out/libnccl-net-emu.so" "$out/fake-libcuda.so" >&2
fi
echo "$(cd "$out" && pwd)/libnccl-net-emu.so"
