#!/bin/sh
# Issue 20 §5: the per-rank NCCL logs of a 1 024-rank job (bench/cluster_corpus.py: 64 copies of a real emulated
# 2 x 8 H200 run, rank ids remapped), read side by side, REPS times each: bench/nccl_regex_parser.py, `pathproof ingest
# --format json` (JVM start included, -Xmx HEAP, 2 cores) and `pathproof accept` of a prediction for that cluster.
# Prints wall and CPU seconds and max RSS of each, and the load average before every run: on a shared machine the
# CPU seconds are the figure to compare.
#   bench/cluster_compare.sh [DIR] [RANKS] [REPS] [HEAP] [ITERATIONS]
set -e
cd "$(dirname "$0")/.."
dir=${1:-target/cluster-corpus}
ranks=${2:-1024}
reps=${3:-3}
heap=${4:-256m}
iters=${5:-0}
src=samples/emulated-clusters-net-emu/hgx-2x8-8nic-gdr
./mvnw -q -B -o compile
./mvnw -q -B -o dependency:build-classpath -Dmdep.outputFile=cp.txt > /dev/null
cp="target/classes:$(cat cp.txt)"
corpus="$dir/r$ranks-i$iters"
[ -f "$corpus/nccl-rank$((ranks - 1)).log" ] || python3 bench/cluster_corpus.py "$src" "$corpus" --ranks "$ranks" \
  --iterations "$iters"
pred="$dir/prediction-$ranks.json"
[ -f "$pred" ] || java -cp "$cp" io.pathproof.cli.Main predict --topology "$src/nccl-topo-node0.xml" \
  --nodes $((ranks / 8)) --nccl 2.28.9 --torch 2.11.0 --workload one-64mib-fp32 --env NCCL_NVLS_ENABLE=0 -o "$pred" \
  > /dev/null
echo "$(ls "$corpus"/nccl-rank*.log | wc -l) files, $(cat "$corpus"/nccl-rank*.log | wc -c) bytes,"\
  "$(cat "$corpus"/nccl-rank*.log | wc -l) lines"
cat "$corpus"/nccl-rank*.log > /dev/null
t() { /usr/bin/time -f "  %e s wall, %U s user, %S s sys, %M KiB max RSS" "$@"; }
i=0
while [ "$i" -lt "$reps" ]; do
  i=$((i + 1))
  echo "run $i: python3 bench/nccl_regex_parser.py (load $(cut -d' ' -f1-3 /proc/loadavg))"
  t python3 bench/nccl_regex_parser.py "$corpus"/nccl-rank*.log > /dev/null
  echo "run $i: pathproof ingest --format json (-Xmx$heap, 2 cores) (load $(cut -d' ' -f1-3 /proc/loadavg))"
  t java -Xmx"$heap" -XX:ActiveProcessorCount=2 -cp "$cp" io.pathproof.cli.Main ingest --format json "$corpus" \
    > "$dir/ingest.json"
  echo "run $i: pathproof accept (-Xmx$heap, 2 cores) (load $(cut -d' ' -f1-3 /proc/loadavg))"
  t java -Xmx"$heap" -XX:ActiveProcessorCount=2 -cp "$cp" io.pathproof.cli.Main accept --prediction "$pred" \
    --run "$corpus" --format json > "$dir/accept.json" || true
done
python3 -c "import json,sys; r=[x for x in json.load(open(sys.argv[1]))['rows'] if x['id']=='evidence-consistency'][0];\
print('evidence-consistency', r['verdict'], r['observed'])" "$dir/accept.json"
echo "load after: $(cat /proc/loadavg)"
