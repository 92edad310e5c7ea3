package io.pathproof.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Generates a realistic evidence mix for the benchmarks and the memory test: NCCL 2.28-style debug logs of a DDP job
 * (one file per rank, init lines then COLL-heavy iterations with TUNING on rank 0) and Kineto traces (kernels with
 * grid/block, NCCL kernels with collective args, memcpys, nccl:all_reduce ranges). Deterministic for a given seed.
 *
 * <p>Run: {@code java -cp target/test-classes io.pathproof.bench.IngestCorpus DIR RANKS MB_PER_RANK KINETO_MB}.
 */
public final class IngestCorpus {
    private IngestCorpus() {}

    public static void main(String[] args) throws IOException {
        Path dir = Path.of(args[0]);
        int ranks = Integer.parseInt(args[1]);
        long mbPerRank = Long.parseLong(args[2]);
        long kinetoMb = Long.parseLong(args[3]);
        Files.createDirectories(dir);
        for (int r = 0; r < ranks; r++) {
            writeNcclLog(dir.resolve("nccl-rank" + r + ".log"), r, ranks, mbPerRank << 20);
        }
        if (kinetoMb > 0) {
            writeKineto(dir.resolve("trace-rank0.json"), 0, ranks, kinetoMb << 20);
        }
    }

    /** Bucket sizes of a 25 MB-cap DDP model, reduced every iteration. */
    static final long[] BUCKETS = {26_214_400L, 26_214_400L, 26_210_304L, 13_107_200L, 1_048_576L};

    public static void writeNcclLog(Path file, int rank, int nRanks, long targetBytes) throws IOException {
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
            writeNcclLog(w, rank, nRanks, targetBytes);
        }
    }

    public static void writeNcclLog(Writer w, int rank, int nRanks, long targetBytes) throws IOException {
        String host = "node" + (rank / 8);
        int pid = 4000 + rank;
        int dev = rank % 8;
        String p = host + ":" + pid + ":" + pid + " [" + dev + "] NCCL INFO ";
        String comm = String.format(Locale.ROOT, "0x%x", 0x55d0a0000000L + rank * 0x1000L);
        long written = 0;
        StringBuilder sb = new StringBuilder();
        if (rank == 0) {
            sb.append(p).append("NCCL version 2.28.9+cuda13.0\n");
        }
        sb.append(p).append("NCCL_MAX_NCHANNELS set by environment to 24.\n");
        sb.append(p)
                .append("ncclCommInitRankConfig comm ")
                .append(comm)
                .append(" rank ")
                .append(rank)
                .append(" nranks ")
                .append(nRanks)
                .append(" cudaDev ")
                .append(dev)
                .append(" nvmlDev ")
                .append(dev)
                .append(" busId ")
                .append(Integer.toHexString(0x18000 + dev * 0x10000))
                .append(" commId 0x5ae77eb5ea4ec1ee - Init START\n");
        sb.append(p)
                .append("Pattern 4, crossNic 0, nChannels 12, bw 30.000000/30.000000, type NVL/PIX, sameChannels 1\n");
        sb.append(p)
                .append("comm ")
                .append(comm)
                .append(" rank ")
                .append(rank)
                .append(" nRanks ")
                .append(nRanks)
                .append(" nNodes ")
                .append((nRanks + 7) / 8)
                .append(" localRanks 8 localRank ")
                .append(dev)
                .append(" MNNVL 0\n");
        if (rank == 0) {
            for (int c = 0; c < 24; c++) {
                sb.append(p).append(String.format(Locale.ROOT, "Channel %02d/24 :", c));
                for (int r = 0; r < nRanks; r++) {
                    sb.append(' ').append(r);
                }
                sb.append('\n');
            }
        }
        for (int c = 0; c < 24; c++) {
            sb.append(p)
                    .append(String.format(
                            Locale.ROOT,
                            "Channel %02d/0 : %d[%d] -> %d[%d] via P2P/CUMEM\n",
                            c,
                            rank,
                            dev,
                            (rank + 1) % nRanks,
                            (dev + 1) % 8));
        }
        sb.append(p).append("Connected all rings, use ring PXN 0 GDR 1\n");
        sb.append(p).append("threadThresholds 8/8/64 | ").append(8 * nRanks).append("/8/64 | 512 | 512\n");
        sb.append(p)
                .append(
                        "24 coll channels, 24 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer\n");
        sb.append(p)
                .append("ncclCommInitRankConfig comm ")
                .append(comm)
                .append(" rank ")
                .append(rank)
                .append(" nranks ")
                .append(nRanks)
                .append(" cudaDev ")
                .append(dev)
                .append(" nvmlDev ")
                .append(dev)
                .append(" busId ")
                .append(Integer.toHexString(0x18000 + dev * 0x10000))
                .append(" commId 0x5ae77eb5ea4ec1ee - Init COMPLETE\n");
        sb.append(p)
                .append("Init timings - ncclCommInitRankConfig: rank ")
                .append(rank)
                .append(" nranks ")
                .append(nRanks)
                .append(
                        " total 0.49 (kernels 0.45, alloc 0.00, bootstrap 0.02, allgathers 0.00, topo 0.00, graphs 0.00,"
                                + " connections 0.01, rest 0.00)\n");
        w.write(sb.toString());
        written += sb.length();
        String collPrefix = host + ":" + pid + ":" + (pid + 30) + " [" + dev + "] NCCL INFO AllReduce: opCount ";
        long op = 0;
        while (written < targetBytes) {
            for (long bucket : BUCKETS) {
                sb.setLength(0);
                sb.append(collPrefix)
                        .append(Long.toHexString(op++))
                        .append(" sendbuff 0x7fe01c000000 recvbuff 0x7fe01c000000 count ")
                        .append(bucket / 4)
                        .append(" datatype 7 op 0 root 0 comm ")
                        .append(comm)
                        .append(" [nranks=")
                        .append(nRanks)
                        .append("] stream 0x4a335f00\n");
                if (rank == 0) {
                    sb.append(host)
                            .append(':')
                            .append(pid)
                            .append(':')
                            .append(pid + 30)
                            .append(" [")
                            .append(dev)
                            .append("] NCCL INFO AllReduce: ")
                            .append(bucket)
                            .append(" Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..23}\n");
                }
                w.write(sb.toString());
                written += sb.length();
            }
        }
    }

    /**
     * A Kineto trace of about {@code targetBytes}: per iteration compute kernels with the CPU ops, runtime calls and
     * flow events around them (the category mix of the real H200 trace), then per bucket record_param_comms, the
     * nccl:all_reduce range, a memcpy and the NCCL kernel.
     */
    public static void writeKineto(Path file, int rank, int worldSize, long targetBytes) throws IOException {
        try (BufferedWriter w = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
            w.write("{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA H200\"}],"
                    + " \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + rank + ", \"world_size\": "
                    + worldSize
                    + ", \"nccl_version\": \"2.28.9\"}, \"displayTimeUnit\": \"ms\", \"baseTimeNanoseconds\": 1790857026000000000,"
                    + " \"traceEvents\": [\n");
            long written = 0;
            long ts = 5354382072077453L; // ns
            int corr = 1;
            boolean first = true;
            StringBuilder sb = new StringBuilder();
            while (written < targetBytes) {
                // Per compute kernel, the category mix of the real H200 trace (per kernel: ~4 cpu_op, ~7 cuda_runtime,
                // ~9
                // ac2g flow events).
                for (int k = 0; k < 6; k++) {
                    sb.setLength(0);
                    if (!first) {
                        sb.append(",\n");
                    }
                    first = false;
                    for (int c = 0; c < 4; c++) {
                        sb.append(c == 0 ? "" : ",\n")
                                .append(
                                        "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mul\", \"pid\": 442, \"tid\": 474, \"ts\": ")
                                .append(us(ts + c * 100))
                                .append(", \"dur\": 12.254, \"args\": {\"External id\": ")
                                .append(corr)
                                .append(", \"Record function id\": 0, \"Ev Idx\": ")
                                .append(corr)
                                .append("}}");
                    }
                    for (int c = 0; c < 7; c++) {
                        sb.append(
                                        ",\n{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 442,"
                                                + " \"tid\": 474, \"ts\": ")
                                .append(us(ts + 500 + c * 50))
                                .append(", \"dur\": 39.894, \"args\":" + " {\"External id\": ")
                                .append(corr)
                                .append(", \"cbid\": 211, \"correlation\": ")
                                .append(corr)
                                .append("}}");
                    }
                    for (int c = 0; c < 4; c++) {
                        sb.append(",\n{\"ph\": \"s\", \"id\": ")
                                .append(corr)
                                .append(", \"pid\": 442, \"tid\": 474, \"ts\": ")
                                .append(us(ts + 500))
                                .append(", \"cat\": \"ac2g\", \"name\": \"ac2g\"}")
                                .append(",\n{\"ph\": \"f\", \"id\": ")
                                .append(corr)
                                .append(", \"pid\": 0, \"tid\": 7, \"ts\": ")
                                .append(us(ts + 1500))
                                .append(", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}");
                    }
                    sb.append(
                                    ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void at::native::vectorized_elementwise_kernel<4,"
                                            + " at::native::BUnaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >,"
                                            + " std::array<char*, 2ul> >(int, at::native::BUnaryFunctor<float, float, float,"
                                            + " at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul>)\", \"pid\": 0, \"tid\": 7,"
                                            + " \"ts\": ")
                            .append(us(ts + 1500))
                            .append(", \"dur\": 31.871, \"args\": {\"External id\": ")
                            .append(corr)
                            .append(", \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": ")
                            .append(corr)
                            .append(
                                    ", \"registers per thread\": 32, \"shared memory\": 0, \"blocks per SM\": 124.121216,"
                                            + " \"warps per SM\": 496.484848, \"grid\": [16384, 1, 1], \"block\": [128, 1, 1],"
                                            + " \"est. achieved occupancy %\": 100}}");
                    ts += 40_000;
                    corr++;
                    w.write(sb.toString());
                    written += sb.length();
                }
                for (long bucket : BUCKETS) {
                    sb.setLength(0);
                    sb.append(",\n{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 442,"
                                    + " \"tid\": 474, \"ts\": ")
                            .append(us(ts))
                            .append(", \"dur\": 20.5, \"args\": {\"External id\": ")
                            .append(corr)
                            .append(", \"Collective name\": \"allreduce\", \"dtype\": \"Float\", \"In msg nelems\": ")
                            .append(bucket / 4)
                            .append(", \"Out msg nelems\": ")
                            .append(bucket / 4)
                            .append(", \"Group size\": ")
                            .append(worldSize)
                            .append("}}");
                    sb.append(
                                    ",\n{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"nccl:all_reduce\", \"pid\": 442,"
                                            + " \"tid\": 474, \"ts\": ")
                            .append(us(ts))
                            .append(", \"dur\": 99.327, \"args\": {\"External id\": ")
                            .append(corr)
                            .append(", \"Record function id\": 0, \"Ev Idx\": 16}}");
                    for (int c = 0; c < 2; c++) {
                        sb.append(
                                        ",\n{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernelExC\", \"pid\": 442,"
                                                + " \"tid\": 474, \"ts\": ")
                                .append(us(ts + 100 + c * 50))
                                .append(", \"dur\": 9.1, \"args\":" + " {\"External id\": ")
                                .append(corr)
                                .append(", \"cbid\": 430, \"correlation\": ")
                                .append(corr)
                                .append("}}");
                        sb.append(",\n{\"ph\": \"")
                                .append(c == 0 ? 's' : 'f')
                                .append("\", \"id\": ")
                                .append(corr)
                                .append(", \"pid\": 442, \"tid\": 474, \"ts\": ")
                                .append(us(ts + 100))
                                .append(", \"cat\": \"ac2g\", \"name\": \"ac2g\"}");
                    }
                    sb.append(
                                    ",\n{\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy DtoD (Device -> Device)\", \"pid\": 0,"
                                            + " \"tid\": 7, \"ts\": ")
                            .append(us(ts + 300))
                            .append(", \"dur\": 33.247, \"args\": {\"External id\": ")
                            .append(corr)
                            .append(", \"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": ")
                            .append(corr)
                            .append(", \"bytes\": ")
                            .append(bucket)
                            .append(", \"memory bandwidth (GB/s)\": 2018.4938189911873}}");
                    sb.append(
                                    ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL("
                                            + "ncclDevKernelArgsStorage<4096ul>)\", \"pid\": 0, \"tid\": 20, \"ts\": ")
                            .append(us(ts + 2000))
                            .append(", \"dur\": 382.223, \"args\": {\"External id\": ")
                            .append(corr)
                            .append(", \"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": 20, \"correlation\": ")
                            .append(corr)
                            .append(
                                    ", \"registers per thread\": 96, \"shared memory\": 4096, \"blocks per SM\": 0.181818,"
                                            + " \"warps per SM\": 3.090909, \"grid\": [24, 1, 1], \"block\": [544, 1, 1],"
                                            + " \"est. achieved occupancy %\": 3, \"Collective name\": \"allreduce\", \"In msg nelems\": ")
                            .append(bucket / 4)
                            .append(", \"Out msg nelems\": ")
                            .append(bucket / 4)
                            .append(", \"Group size\": ")
                            .append(worldSize)
                            .append(", \"dtype\": \"Float\"}}");
                    ts += 400_000;
                    corr++;
                    w.write(sb.toString());
                    written += sb.length();
                }
            }
            w.write("\n], \"traceName\": \"trace.json\"}\n");
        }
    }

    private static String us(long ns) {
        return (ns / 1000) + "." + String.format(Locale.ROOT, "%03d", ns % 1000);
    }

    /** A lazily generated NCCL log of {@code targetBytes} (no file, no memory): for the constant-memory test. */
    public static InputStream ncclLogStream(int rank, int nRanks, long targetBytes) {
        return new InputStream() {
            private final StringBuilder pending = new StringBuilder();
            private byte[] chunk = new byte[0];
            private int pos;
            private long produced;
            private long op;
            private boolean header;

            @Override
            public int read() {
                byte[] one = new byte[1];
                int n = read(one, 0, 1);
                return n < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (pos >= chunk.length && !refill()) {
                    return -1;
                }
                int n = Math.min(len, chunk.length - pos);
                System.arraycopy(chunk, pos, b, off, n);
                pos += n;
                return n;
            }

            private boolean refill() {
                if (produced >= targetBytes) {
                    return false;
                }
                pending.setLength(0);
                try {
                    java.io.StringWriter sw = new java.io.StringWriter();
                    if (!header) {
                        writeNcclLog(sw, rank, nRanks, 0);
                        header = true;
                    }
                    pending.append(sw);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
                String comm = String.format(Locale.ROOT, "0x%x", 0x55d0a0000000L + rank * 0x1000L);
                for (int i = 0; i < 2000; i++) {
                    long bucket = BUCKETS[(int) (op % BUCKETS.length)];
                    pending.append("node0:4000:4030 [0] NCCL INFO AllReduce: opCount ")
                            .append(Long.toHexString(op++))
                            .append(" sendbuff 0x7fe01c000000 recvbuff 0x7fe01c000000 count ")
                            .append(bucket / 4)
                            .append(" datatype 7 op 0 root 0 comm ")
                            .append(comm)
                            .append(" [nranks=")
                            .append(nRanks)
                            .append("] stream 0x4a335f00\n");
                }
                chunk = pending.toString().getBytes(StandardCharsets.US_ASCII);
                pos = 0;
                produced += chunk.length;
                return true;
            }
        };
    }
}
