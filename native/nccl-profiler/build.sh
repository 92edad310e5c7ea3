#!/bin/sh
# Builds pathproof's NCCL profiler plugin with the system C compiler.
#   native/nccl-profiler/build.sh HEADERS [OUT] [--selftest]
# HEADERS: the directory that holds NCCL's profiler API headers (profiler.h, profiler_v5.h, err.h, common.h, ...) of
#          the NCCL version in use — ext-profiler/example/nccl/ of NCCL's source at that tag — or the root of an NCCL
#          source checkout (the script then looks in ext-profiler/example/nccl/). NCCL's headers are never copied into
#          this repository; see README.md for how to get them.
# OUT:     where libnccl-profiler-pathproof.so goes (default: target/nccl-profiler/ under the repository root).
# --selftest: also build selftest.c and drive the library the way NCCL 2.28 does (checks the lines it writes).
# Needs no CUDA: the profiler API is plain C.
set -e
selftest=
for a in "$@"; do [ "$a" = --selftest ] && selftest=1; done
[ "${2:-}" = --selftest ] && set -- "$1"
[ "${3:-}" = --selftest ] && set -- "$1" "$2"
[ $# -ge 1 ] || { echo "usage: $0 NCCL_PROFILER_HEADERS_DIR [OUT_DIR]" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
hdr=$1
[ -f "$hdr/profiler.h" ] || hdr=$1/ext-profiler/example/nccl
[ -f "$hdr/profiler.h" ] || { echo "build.sh: no profiler.h in $1 (nor in $1/ext-profiler/example/nccl)" >&2; exit 2; }
[ -f "$hdr/profiler_v5.h" ] || { echo "build.sh: $hdr has no profiler_v5.h: this NCCL's profiler API is older than v5 (NCCL < 2.28); the plugin exports v5 only" >&2; exit 3; }
out=${2:-$here/../../target/nccl-profiler}
mkdir -p "$out"
cc=${CC:-cc}
$cc -std=c11 -O2 -fPIC -shared -fvisibility=hidden -Wall -Wextra -Werror -Wno-unused-parameter \
  -I"$hdr" -o "$out/libnccl-profiler-pathproof.so" "$here/pathproof_profiler.c" -lpthread
nm -D --defined-only "$out/libnccl-profiler-pathproof.so" | grep -q ' ncclProfiler_v5$' \
  || { echo "build.sh: the library does not export ncclProfiler_v5" >&2; exit 4; }
if [ -n "$selftest" ]; then
  $cc -std=c11 -O2 -Wall -Wextra -Werror -Wno-unused-parameter -I"$hdr" -o "$out/selftest" "$here/selftest.c" -ldl
  t=$(mktemp -d)
  "$out/selftest" "$out/libnccl-profiler-pathproof.so" "$t" >&2
  rm -rf "$t"
fi
echo "$(cd "$out" && pwd)/libnccl-profiler-pathproof.so"
