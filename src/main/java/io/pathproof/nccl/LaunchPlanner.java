package io.pathproof.nccl;

import static io.pathproof.nccl.NcclVersionTable.*;

/**
 * The launch shape of one AllReduce: the tail of topoGetAlgoInfo (channel and thread loops) and the per-channel split
 * of scheduleCollTasksToPlan, which sets the channels actually used, hence gridDim.x = popcount(channelMask).
 * Line numbers cite enqueue.cc@v2.22.3-1 and, in brackets, enqueue.cc@v2.28.9-1.
 */
final class LaunchPlanner {
    private LaunchPlanner() {}

    /** What the planner settles on for one task. */
    record Shape(int nMaxChannels, int nWarps, int blockX, int channelLo, int channelHi) {
        int gridX() {
            return channelHi - channelLo + 1;
        }
    }

    /**
     * topoGetAlgoInfo tail (enqueue.cc:1617-1658 [1871-1912]) then scheduleCollTasksToPlan (enqueue.cc:583-760
     * [519-737]) for a plan holding this one AllReduce task.
     */
    static Shape plan(
            NcclVersionTable t,
            TuningModel tm,
            int commChannels,
            int algo,
            int proto,
            long nBytes,
            long count,
            int elemSize) {
        Threads k = threads(t, tm, commChannels, algo, proto, nBytes);
        int nMaxChannels = k.channels();
        int nWarps = k.threads() / WARP_SIZE;
        // finishPlan (enqueue.cc:158 [209]): threadPerBlock = max(nWarps*32 over tasks, NCCL_MIN_NTHREADS);
        // 2.21: max(nThreads, 3*WARP_SIZE) (enqueue.cc@v2.21.5-1:585).
        int blockX = Math.max(nWarps * WARP_SIZE, t.minBlockThreads());
        if (t.planner() == NcclVersionTable.Planner.CBD) {
            int used = cbdChannels(proto, k.threads(), k.channels(), count, elemSize);
            return new Shape(nMaxChannels, nWarps, blockX, 0, used - 1);
        }
        long[] span = cellChannels(t, commChannels, nMaxChannels, proto, count, elemSize);
        return new Shape(nMaxChannels, nWarps, blockX, (int) span[0], (int) span[1]);
    }

    /** The channels and threads per block topoGetAlgoInfo's tail settles on. */
    private record Threads(int channels, int threads) {}

    /** topoGetAlgoInfo tail (enqueue.cc:1617-1658 [1871-1912]): the channel and thread loops. */
    private static Threads threads(
            NcclVersionTable t, TuningModel tm, int commChannels, int algo, int proto, long nBytes) {
        int nc = commChannels;
        int nt = tm.maxThreads[algo][proto];
        long threshold = tm.threadThresholds[algo][proto];
        // Ring/Tree channel tuning, then halve the threads while the message is small.
        while (nBytes < (long) nc * nt * threshold) {
            if (nc >= 2) {
                nc--;
            } else {
                break;
            }
        }
        while (nBytes < (long) nc * nt * threshold) {
            if (nt % 128 == 0) {
                nt /= 2;
            } else {
                break;
            }
        }
        if (proto == SIMPLE) {
            if (algo == RING) {
                nt += WARP_SIZE; // Extra warp for sync
            }
            if (algo == TREE) {
                nt += 4 * WARP_SIZE;
            }
        }
        nt = nt / WARP_SIZE < 3 ? 3 * WARP_SIZE : nt;
        if (t.treeUsesAllThreads() && (algo == TREE || algo == PAT)) {
            nt = NCCL_MAX_NTHREADS; // enqueue.cc:1652 [1907] "Tree now uses all threads always" (not in 2.21)
        }
        return new Threads(nc, nt);
    }

    /**
     * scheduleCollTasksToPlan (enqueue.cc:583-760 [519-737]) for a single task of kind 0 (neither CollNet nor NVLS):
     * the first and last channel the task's cells land on.
     */
    private static long[] cellChannels(
            NcclVersionTable t, int commChannels, int nMaxChannels, int proto, long count, int elemSize) {
        long trafficPerByte = 2; // ncclFuncTrafficPerByte(AllReduce)
        long trafficBytes = count * elemSize * trafficPerByte;
        if (t.llTrafficTimesFour() && proto == LL) {
            trafficBytes *= 4; // ncclPrepareTasks [419]
        }
        long minTraffic = t.minTrafficPerChannel();
        long kindTraffic = t.fixedCellSize16() ? trafficBytes : Math.max(minTraffic, trafficBytes);
        int kindChannels = Math.min(nMaxChannels, commChannels);
        long trafficPerChannel = t.trafficPerChannelRoundedTo16()
                ? divUp(kindTraffic / kindChannels, 16) * 16
                : Math.max(minTraffic, kindTraffic / kindChannels);
        if (t.llTrafficTimesFour() && proto == LL) {
            trafficPerByte *= 4;
        }
        long cellSize = t.fixedCellSize16() ? 16 : divUp(divUp(minTraffic, trafficPerByte), 16) * 16;
        long elementsPerCell = cellSize / elemSize;
        long cells = divUp(count * elemSize, cellSize);
        long trafficPerCell = cellSize * trafficPerByte;
        long cellsPerChannel = Math.min(cells, divUp(trafficPerChannel, trafficPerCell));
        int channelId = 0;
        long currentTraffic = 0;
        long cellsLo;
        if (channelId + 1 == commChannels) {
            cellsLo = cells; // On last channel everything goes to "lo"
        } else if (t.cellsLoRoundsUp()) {
            cellsLo = Math.min(cells, divUp(trafficPerChannel - currentTraffic, trafficPerCell));
        } else {
            cellsLo = Math.min(cells, (trafficPerChannel - currentTraffic) / trafficPerCell);
        }
        long nMid = (cells - cellsLo) / cellsPerChannel;
        long cellsHi = (cells - cellsLo) % cellsPerChannel;
        long nChannels = (cellsLo != 0 ? 1 : 0) + nMid + (cellsHi != 0 ? 1 : 0);
        if (commChannels < channelId + nChannels) { // Overflowed available channels
            nMid = commChannels - channelId - 2;
            cellsPerChannel = (cells - cellsLo) / (nMid + 1);
            cellsHi = cellsPerChannel + (cells - cellsLo) % (nMid + 1);
        }
        if (cellsHi == 0 && nMid != 0) {
            cellsHi = cellsPerChannel;
            nMid -= 1;
        }
        if (cellsLo == 0) { // Least channel skipped. Make the next channel the new least.
            channelId += 1;
            if (nMid == 0) {
                cellsLo = cellsHi;
                cellsHi = 0;
            } else {
                cellsLo = cellsPerChannel;
                nMid -= 1;
            }
        }
        long countLo = cellsLo * elementsPerCell;
        long countHi = cellsHi * elementsPerCell;
        long excess = cells * elementsPerCell - count;
        if (countHi != 0) {
            countHi -= excess;
        } else {
            countLo -= excess;
        }
        nChannels = (countLo != 0 ? 1 : 0) + nMid + (cellsHi != 0 ? 1 : 0);
        return new long[] {channelId, channelId + nChannels - 1};
    }

    /**
     * The channels a lone AllReduce fills under 2.21's planner: usableChannels = the tuned nc (scheduleCollTasksToPlan,
     * enqueue.cc@v2.21.5-1:797-828), maxBytesPerChannel = divUp(divUp(bytes, usable), 16)·16 (:834), then each channel in
     * turn takes up to that many bytes rounded up to the protocol's alignment (addCBDCollToPlan :452-488;
     * computeCollAlignCount :214-223 with include/enqueue.h@v2.21.5-1:15-17) until nothing is left.
     */
    static int cbdChannels(int proto, int nThreads, int usable, long count, int elemSize) {
        long bytes = count * elemSize;
        long maxBytesPerChannel = divUp(divUp(bytes, usable), 16) * 16;
        long alignCount = proto == SIMPLE
                ? (WARP_SIZE * 8L * 16L) / elemSize // NCCL_SIMPLE_ALIGNMENT
                : proto == LL128
                        ? 480L / elemSize * (nThreads / WARP_SIZE) // NCCL_LL128_ALIGNMENT_PER_WARP
                        : 8L / elemSize * nThreads; // NCCL_LL_ALIGNMENT_PER_THREAD = sizeof(uint64_t)
        long remainingBytes = bytes;
        long remainingCount = count;
        int used = 0;
        for (int c = 0; c < usable && remainingBytes > 0; c++) {
            long enqBytes = Math.min(maxBytesPerChannel, remainingBytes);
            long workCount = Math.min(divUp(divUp(enqBytes, elemSize), alignCount) * alignCount, remainingCount);
            remainingBytes -= workCount * elemSize;
            remainingCount -= workCount;
            used++;
        }
        return Math.max(used, 1);
    }

    static long divUp(long x, long y) {
        return (x + y - 1) / y;
    }
}
