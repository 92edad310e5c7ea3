#!/bin/sh
# Issue 12's benchmark on real logs: builds a ~200 MiB init-heavy corpus of real public NCCL logs (bench/real_corpus.py,
# a third COLL and a fifth TUNING lines) and times, side by side and REPS times each, `grep -c 'NCCL INFO'`,
# bench/nccl_regex_parser.py and `pathproof ingest --format json` end to end (JVM start included, -Xmx256m, 2 cores).
# Prints wall and CPU seconds of each and the machine load before and after; report the median of the REPS.
#   bench/real_compare.sh [DIR] [SIZE_MIB] [REPS]
set -e
cd "$(dirname "$0")/.."
dir=${1:-target/real-corpus}
size=${2:-200}
reps=${3:-3}
./mvnw -q -B -o test-compile
./mvnw -q -B -o dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=cp.txt
cp="target/test-classes:target/classes:$(cat cp.txt)"
mkdir -p "$dir"
[ -f "$dir/real-issue-mix.log" ] || python3 bench/real_corpus.py "$dir/real-issue-mix.log" "$size" --mix issue
f="$dir/real-issue-mix.log"
ls -l "$f"
cat "$f" > /dev/null
t() { /usr/bin/time -f "  %e s wall, %U s user, %S s sys, %M KiB max RSS" "$@"; }
echo "load before: $(cat /proc/loadavg)"
i=0
while [ "$i" -lt "$reps" ]; do
  i=$((i + 1))
  echo "run $i: grep -c 'NCCL INFO'"
  t sh -c "grep -c 'NCCL INFO' $f"
  echo "run $i: python3 bench/nccl_regex_parser.py"
  t python3 bench/nccl_regex_parser.py "$f" > /dev/null
  echo "run $i: pathproof ingest --format json (-Xmx256m, 2 cores)"
  t java -Xmx256m -XX:ActiveProcessorCount=2 -cp "$cp" io.pathproof.cli.Main ingest --format json "$f" > "$dir/out.json"
done
echo "load after: $(cat /proc/loadavg)"
