#!/bin/sh
# The measurements of docs/PERFORMANCE.md on a quiet machine, pinned with taskset: 1 core and 2 cores.
#   bench/pinned.sh JAVA CLASSPATH [WORKDIR]
set -e
J=$1
CP=$2
D=${3:-/tmp/pathproof-pinned}
rm -rf "$D"
$J -cp "$CP" io.pathproof.bench.IngestCorpus "$D" 8 64 0
$J -cp "$CP" io.pathproof.bench.IngestCorpus "$D/k" 1 0 128
cat "$D"/*.log "$D"/k/*.json > /dev/null
echo "== nccl logs, 1 core";  taskset -c 0 $J -Xmx256m -XX:ActiveProcessorCount=1 -cp "$CP" io.pathproof.bench.IngestThroughput 1 3 5 "$D"/nccl-rank*.log
echo "== nccl logs, 2 cores"; taskset -c 0,1 $J -Xmx256m -XX:ActiveProcessorCount=2 -cp "$CP" io.pathproof.bench.IngestThroughput 2 3 5 "$D"/nccl-rank*.log
echo "== kineto, 1 core";     taskset -c 0 $J -Xmx1g -XX:ActiveProcessorCount=1 -cp "$CP" io.pathproof.bench.IngestThroughput 1 3 5 "$D"/k/trace-rank0.json
echo "== grep -c, 1 core";    taskset -c 0 /usr/bin/time -f "%e s wall %U s user %S s sys" sh -c "grep -c 'NCCL INFO' $D/nccl-rank*.log | tail -n 1"
echo "== python regex parser, 1 core"; taskset -c 0 /usr/bin/time -f "%e s wall %U s user %S s sys" python3 bench/nccl_regex_parser.py "$D"/nccl-rank*.log
echo "== JMH, 2 cores"; taskset -c 0,1 $J -cp "$CP" org.openjdk.jmh.Main 'io.pathproof.bench.Ingest.*Bench' -f 1 -wi 2 -i 3 -w 5s -r 5s 2>&1 | grep -E "corpus|^Ingest|Benchmark "
du -cb "$D"/nccl-rank*.log | tail -n 1
