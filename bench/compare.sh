#!/bin/sh
# Compares pathproof's NCCL-log reader with `grep -c 'NCCL INFO'` and bench/nccl_regex_parser.py on the same
# generated corpus (8 ranks, MB_PER_RANK MiB each). Prints wall and CPU seconds of each.
#   bench/compare.sh [DIR] [MB_PER_RANK]
set -e
cd "$(dirname "$0")/.."
dir=${1:-${TMPDIR:-/tmp}/pathproof-corpus}
mb=${2:-32}
./mvnw -q -B -o test-compile
./mvnw -q -B -o dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=cp.txt
cp="target/test-classes:target/classes:$(cat cp.txt)"
rm -rf "$dir" && mkdir -p "$dir"
java -cp "$cp" io.pathproof.bench.IngestCorpus "$dir" 8 "$mb" 0
du -cb "$dir"/nccl-rank*.log | tail -n 1
t() { /usr/bin/time -f "  %e s wall, %U s user, %S s sys, %M KiB max RSS" "$@"; }
echo "grep -c 'NCCL INFO' (files read once first, to warm the page cache)"
cat "$dir"/nccl-rank*.log > /dev/null
t sh -c "grep -c 'NCCL INFO' $dir/nccl-rank*.log | tail -n 1"
echo "python3 bench/nccl_regex_parser.py"
t python3 bench/nccl_regex_parser.py "$dir"/nccl-rank*.log
echo "pathproof ingest (JVM start included; 2 threads)"
t java -Xmx256m -XX:ActiveProcessorCount=2 -cp "$cp" io.pathproof.cli.Main ingest --format json "$dir"/nccl-rank*.log > /dev/null
