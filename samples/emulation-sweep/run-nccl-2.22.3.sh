#!/usr/bin/env bash
# What made nccl-2.22.3/: the seed's NCCL 2.22.3 (built with scripts/build-nccl-emulator.sh, emulator + CUDA 13 compat
# patches, into .emu/nccl-2.22.3) run by a plain C program (native/nccl-emulator/allreduce.c; torch 2.11 does not load
# 2.22.3) on one H200, over the emulated 4 x V100-SXM2 NV2 machine (compute capability reported as 70) and H200 x4/x8.
export NCCL_NVLS_ENABLE=0 NCCL_MNNVL_ENABLE=0
C=/usr/local/cuda; for v in 2.22.3:.emu/nccl-2.22.3 2.28.9:.emu/lib-2.28.9; do n=${v%%:*}; d=${v#*:}; gcc -O2 native/nccl-emulator/allreduce.c -I $d -I $C/include -L $d -L $C/lib64 -l:libnccl.so.2 -lcudart -o /tmp/allreduce-$n || echo "gcc $n failed"; done
S=samples/emulation-sweep/topologies; o=/tmp/seed; mkdir -p $o
sw() { name=$1; shift; timeout 120 python3 native/nccl-emulator/sweep.py --out $o/$name --timeout 100 "$@"; echo "$name rc=$?"; }
sw v100-cc70-nccl2.22.3 --lib .emu/nccl-2.22.3/libnccl.so.2 --program /tmp/allreduce-2.22.3 --topo $S/v100-sxm2-nv2-x4.xml --sizes 1048576,67108864 --env NCCL_EMULATE_COMPCAP=70
sw v100-cc70-nccl2.22.3-channels-1 --lib .emu/nccl-2.22.3/libnccl.so.2 --program /tmp/allreduce-2.22.3 --topo $S/v100-sxm2-nv2-x4.xml --sizes 67108864 --env NCCL_EMULATE_COMPCAP=70 --env NCCL_MIN_NCHANNELS=1 --env NCCL_MAX_NCHANNELS=1
sw v100-cc90-nccl2.22.3 --lib .emu/nccl-2.22.3/libnccl.so.2 --program /tmp/allreduce-2.22.3 --topo $S/v100-sxm2-nv2-x4.xml --sizes 67108864
sw h200-x4-nccl2.22.3 --lib .emu/nccl-2.22.3/libnccl.so.2 --program /tmp/allreduce-2.22.3 --topo $S/h200-nvswitch-x4.xml --sizes 4096,1048576,67108864
sw h200-x8-nccl2.22.3 --lib .emu/nccl-2.22.3/libnccl.so.2 --program /tmp/allreduce-2.22.3 --topo $S/h200-nvswitch-x8.xml --sizes 4096,1048576,67108864
grep -h "AllReduce: 67108864\|EMULATOR: comp\|NCCL version" $o/v100-cc70-nccl2.22.3/nccl-rank0.log $o/v100-cc70-nccl2.22.3-channels-1/nccl-rank0.log | head; cat $o/*/stdout-rank0.txt | head
cd /tmp && tar czf $OUT/seed.tgz seed
