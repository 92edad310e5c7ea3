package io.pathproof.accept;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.Json;
import io.pathproof.ddp.Bucket;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.FileKind;
import io.pathproof.evidence.Source;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.nccl.CommunicatorPrediction;
import io.pathproof.predict.Prediction;
import io.pathproof.scenario.DType;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * Builds Evidence the way the readers would from a real run directory, following the facts the seed and the H200
 * fixture record: the seed's 4×V100 NCCL 2.22.3 run (one 64 MiB bucket, Ring/Simple, 12 channels, gridX 12 × blockX
 * 544, P2P/IPC, kernel symbol …_RING_LL) and variants of it. Every fact carries a Source like the readers give.
 * Shared by the accept and diagnose tests.
 */
public final class SyntheticRuns {
    private SyntheticRuns() {}

    public static final long MIB64 = 67_108_864L;

    /** What one run looked like. Mutable on purpose: a test changes one field to make a variant. */
    public static final class Spec {
        public String runDir = "runs/baseline";
        public String backend = "nccl";
        public String ncclVersion = "2.22.3";
        public String torchVersion = "2.5.0a0+872d972e41.nv24.08";
        public int ranks = 4;
        /** The manifest's worldSize when it should differ from {@code ranks} (null: not written). */
        public Integer worldSize = null;

        public List<Long> buckets = new ArrayList<>(List.of(MIB64));
        public List<List<String>> bucketParams = new ArrayList<>(List.of(List.of("weight")));
        public long bucketCapBytes = MIB64;
        public int collChannels = 12;
        public int gridX = 12;
        public int blockX = 544;
        public int algoId = 1;
        public int protoId = 2;
        /** 2.22 prints "time %f"; 2.24+ prints channel{Lo..Hi} and no time. */
        public boolean modernTuning = false;

        public BigDecimal tunerTimeUs = new BigDecimal("867.660767");
        public String transport = "P2P/IPC";
        public boolean gdrFlagOnConnections = false;
        public String kernelName = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
        public double kernelUs = 1900;
        public double computeMs = 0.40;
        public double commMs = 1.93;
        public double cv = 0.02;
        public long seed = 1;
        public int warmup = 5;
        public int iterations = 48;
        public int profiledIterations = 3;
        public Integer corruptRank = null;
        /** A rank whose gradients DDP should have averaged in the last iteration differ (parameters equal): null none. */
        public Integer unaveragedGradientRank = null;
        /** The parameter samples [first, last, mean] every rank ends with (a corrupted rank ends elsewhere). */
        public List<Double> finalSamples = List.of(0.0123, -0.0456, 0.0001);

        public Map<String, String> env = new TreeMap<>(Map.of(
                "NCCL_DEBUG",
                "INFO",
                "NCCL_DEBUG_SUBSYS",
                "INIT,ENV,TUNING,COLL,GRAPH,P2P",
                "NCCL_DEBUG_FILE",
                "runs/baseline/nccl.%h.%p.log"));
        public Map<String, Object> inject = new TreeMap<>();
        public String start = "2099-01-01T00:00:00Z";
        public boolean withNcclLog = true;
        public boolean withKernels = true;
        public boolean withHooks = true;
        public boolean withReplicas = true;
        public boolean withTuning = true;
        public boolean withColl = true;
        public boolean withConnections = true;
        /** DDP's find_unused_parameters, as its logging data records it. */
        public boolean findUnused = false;
        /** Made under the NCCL emulator: the manifest's top-level emulation record. */
        public boolean emulated = false;
        /** The ring orders the INIT lines print, channel by channel (none by default). */
        public List<String> rings = new ArrayList<>();
        /** The channel of each of {@link #rings}; null: 0, 1, … */
        public List<Integer> ringChannels = null;
        /** Rank 0 printed the seed's tuning table ({@link #SEED_TABLE}) at init. */
        public boolean withTuningTable = true;

        public Spec copy() {
            Spec s = new Spec();
            s.runDir = runDir;
            s.backend = backend;
            s.ncclVersion = ncclVersion;
            s.torchVersion = torchVersion;
            s.ranks = ranks;
            s.buckets = new ArrayList<>(buckets);
            s.bucketParams = new ArrayList<>(bucketParams);
            s.bucketCapBytes = bucketCapBytes;
            s.collChannels = collChannels;
            s.gridX = gridX;
            s.blockX = blockX;
            s.algoId = algoId;
            s.protoId = protoId;
            s.modernTuning = modernTuning;
            s.tunerTimeUs = tunerTimeUs;
            s.transport = transport;
            s.gdrFlagOnConnections = gdrFlagOnConnections;
            s.kernelName = kernelName;
            s.kernelUs = kernelUs;
            s.computeMs = computeMs;
            s.commMs = commMs;
            s.cv = cv;
            s.seed = seed;
            s.warmup = warmup;
            s.iterations = iterations;
            s.profiledIterations = profiledIterations;
            s.corruptRank = corruptRank;
            s.unaveragedGradientRank = unaveragedGradientRank;
            s.env = new TreeMap<>(env);
            s.inject = new TreeMap<>(inject);
            s.start = start;
            s.withNcclLog = withNcclLog;
            s.withKernels = withKernels;
            s.withHooks = withHooks;
            s.withReplicas = withReplicas;
            s.withTuning = withTuning;
            s.withColl = withColl;
            s.withConnections = withConnections;
            s.findUnused = findUnused;
            s.emulated = emulated;
            s.rings = new ArrayList<>(rings);
            s.ringChannels = ringChannels;
            s.withTuningTable = withTuningTable;
            return s;
        }
    }

    private static final String[] ALGOS = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"
    };
    private static final String[] PROTOS = {"LL", "LL128", "SIMPLE"};

    public static Evidence build(Spec s) {
        String log = s.runDir + "/nccl.rank0.log";
        String trace = s.runDir + "/trace.rank0.json";
        String hooks = s.runDir + "/buckets.jsonl";
        List<Evidence.FileRead> files = new ArrayList<>();
        Evidence.Nccl nccl = null;
        if (s.withNcclLog && !"gloo".equals(s.backend)) {
            files.add(new Evidence.FileRead(log, FileKind.NCCL_LOG, 0, 100000, 100));
            List<Evidence.Connection> conns = new ArrayList<>();
            long line = 100;
            if (s.withConnections && s.ranks > 1) {
                for (int ch = 0; ch < s.collChannels; ch++) {
                    for (int r = 0; r < s.ranks; r++) {
                        conns.add(new Evidence.Connection(
                                ch,
                                r,
                                (r + 1) % s.ranks,
                                s.transport,
                                false,
                                s.gdrFlagOnConnections,
                                Source.line(log, line++),
                                false,
                                null));
                    }
                }
            }
            List<Integer> ranks = new ArrayList<>();
            for (int r = 0; r < s.ranks; r++) {
                ranks.add(r);
            }
            Evidence.Communicator comm = new Evidence.Communicator(
                    "0x2dd5488a50c520c3",
                    ranks,
                    s.ranks,
                    1,
                    s.ranks,
                    s.collChannels,
                    16,
                    4,
                    0,
                    null,
                    List.copyOf(s.rings),
                    s.ringChannels,
                    List.of(),
                    List.of(),
                    "8/8/64 | 32/8/64 | 512 | 512",
                    List.of(s.transport),
                    conns,
                    true,
                    false,
                    List.of(),
                    Source.line(log, 40),
                    List.of(),
                    List.of(),
                    s.withTuningTable && s.ranks > 1 ? printedSeedTable(log) : null);
            List<Evidence.Tuning> tuning = new ArrayList<>();
            List<Evidence.Coll> colls = new ArrayList<>();
            long l2 = 1000;
            for (int it = 0; it < s.warmup + s.iterations; it++) {
                for (long b : s.buckets) {
                    if (s.withTuning) {
                        tuning.add(
                                s.modernTuning
                                        ? new Evidence.Tuning(
                                                0,
                                                "AllReduce",
                                                b,
                                                ALGOS[s.algoId],
                                                null,
                                                PROTOS[s.protoId],
                                                null,
                                                null,
                                                0,
                                                s.gridX - 1,
                                                Source.line(log, l2++),
                                                null,
                                                1)
                                        : new Evidence.Tuning(
                                                0,
                                                null,
                                                b,
                                                null,
                                                s.algoId,
                                                null,
                                                s.protoId,
                                                s.tunerTimeUs,
                                                null,
                                                null,
                                                Source.line(log, l2++),
                                                null,
                                                1));
                    }
                    if (s.withColl) {
                        for (int r = 0; r < s.ranks; r++) {
                            colls.add(new Evidence.Coll(
                                    r,
                                    "AllReduce",
                                    Long.toHexString(it),
                                    b / 4,
                                    7,
                                    0,
                                    s.ranks,
                                    Source.line(log, l2++),
                                    null,
                                    1));
                        }
                    }
                }
            }
            Map<String, String> overrides = new TreeMap<>();
            Map<String, Source> envSources = new TreeMap<>();
            long l3 = 10;
            for (Map.Entry<String, String> e : s.env.entrySet()) {
                if (e.getKey().startsWith("NCCL_") && !e.getKey().startsWith("NCCL_DEBUG")) {
                    overrides.put(e.getKey(), e.getValue());
                    envSources.put(e.getKey(), Source.line(log, l3++));
                }
            }
            nccl = new Evidence.Nccl(
                    s.ncclVersion, Source.line(log, 3), List.of(comm), tuning, colls, overrides, envSources, List.of());
        }
        List<Evidence.Kernel> kernels = new ArrayList<>();
        List<Evidence.Range> ranges = new ArrayList<>();
        SplittableRandom rnd = new SplittableRandom(s.seed);
        if (s.withKernels) {
            files.add(new Evidence.FileRead(trace, FileKind.KINETO, 0, 100000, 100));
            long ev = 0;
            for (int r = 0; r < s.ranks; r++) {
                long t = 1_000_000_000L;
                for (int it = 0; it < s.profiledIterations; it++) {
                    kernels.add(new Evidence.Kernel(
                            r,
                            "void at::native::vectorized_elementwise_kernel",
                            new int[] {1024, 1, 1},
                            new int[] {128, 1, 1},
                            BigDecimal.valueOf(Math.round(s.computeMs * 1000 * 10) / 10.0),
                            t,
                            null,
                            r,
                            7,
                            false,
                            Map.of(),
                            Source.event(trace, ev++),
                            null,
                            null));
                    t += (long) (s.computeMs * 1e6);
                    for (long b : s.buckets) {
                        ranges.add(new Evidence.Range(
                                r, "nccl:all_reduce", "user_annotation", t, 20_000L, Source.event(trace, ev++)));
                        double us = s.kernelUs * (b / (double) s.buckets.get(0)) * Math.exp(0.01 * gauss(rnd));
                        Map<String, String> coll = new LinkedHashMap<>();
                        coll.put("Collective name", "allreduce");
                        coll.put("In msg nelems", Long.toString(b / 4));
                        coll.put("dtype", "Float");
                        kernels.add(new Evidence.Kernel(
                                r,
                                s.kernelName,
                                new int[] {s.gridX, 1, 1},
                                new int[] {s.blockX, 1, 1},
                                BigDecimal.valueOf(Math.round(us * 1000) / 1000.0),
                                t + 10_000,
                                null,
                                r,
                                27,
                                true,
                                coll,
                                Source.event(trace, ev++),
                                null,
                                null));
                        t += (long) (us * 1000);
                    }
                }
            }
        }
        List<Evidence.BucketRecord> recs = new ArrayList<>();
        List<Evidence.Step> steps = new ArrayList<>();
        long hl = 1;
        double[] stepNoise = new double[s.warmup + s.iterations];
        for (int it = 0; it < stepNoise.length; it++) {
            stepNoise[it] = Math.exp(s.cv * gauss(rnd) - s.cv * s.cv / 2);
        }
        for (int r = 0; r < s.ranks; r++) {
            long t = 5_000_000_000L;
            for (int it = 0; it < s.warmup + s.iterations; it++) {
                double comp = s.computeMs * stepNoise[it];
                double comm = s.commMs * stepNoise[it];
                long ready = t + (long) (comp * 1e6);
                long perBucket = (long) (comm * 1e6 / s.buckets.size());
                for (int b = 0; b < s.buckets.size(); b++) {
                    long readyB = ready + b * perBucket;
                    if (s.withHooks) {
                        recs.add(new Evidence.BucketRecord(
                                r,
                                it,
                                b,
                                s.buckets.get(b),
                                b == s.buckets.size() - 1,
                                s.bucketParams.get(Math.min(b, s.bucketParams.size() - 1)),
                                readyB,
                                readyB + perBucket,
                                "gloo".equals(s.backend) ? null : readyB + perBucket + 5_000,
                                Source.line(hooks, hl++)));
                    }
                }
                double ms = comp + comm;
                steps.add(new Evidence.Step(
                        r,
                        it,
                        ms,
                        it >= s.warmup,
                        Source.line(s.runDir + "/steps.jsonl", it * s.ranks + r + 1),
                        null,
                        null));
                t += (long) (ms * 1e6) + 100_000;
            }
        }
        Evidence.Ddp ddp = null;
        if (s.withHooks) {
            Map<String, JsonNode> logging = new TreeMap<>();
            for (int r = 0; r < s.ranks; r++) {
                ObjectNode o = Json.mapper().createObjectNode();
                StringBuilder sizes = new StringBuilder();
                long total = 0;
                for (long b : s.buckets) {
                    sizes.append(sizes.length() == 0 ? "" : ", ").append(b);
                    total += b;
                }
                o.put("backend_name", s.backend);
                o.put("world_size", s.ranks);
                o.put("bucket_sizes", sizes.toString());
                o.put("rebuilt_bucket_sizes", sizes.toString());
                o.put("bucket_cap_bytes", s.bucketCapBytes);
                o.put("find_unused_parameters", s.findUnused ? 1 : 0);
                o.put("gradient_as_bucket_view", 0);
                o.put("total_parameter_size_bytes", total);
                o.put("iteration", 10);
                o.put("forward_compute_time", 123456 + r);
                logging.put(Integer.toString(r), o);
            }
            ddp = new Evidence.Ddp(recs, logging, List.of());
        }
        Evidence.Replicas replicas = null;
        if (s.withReplicas) {
            List<Evidence.Digest> ds = new ArrayList<>();
            for (int r = 0; r < s.ranks; r++) {
                boolean bad = s.corruptRank != null && s.corruptRank == r;
                Evidence.Gradients g = s.unaveragedGradientRank == null
                        ? null
                        : new Evidence.Gradients(
                                (s.unaveragedGradientRank == r ? "c" : "d").repeat(64),
                                s.warmup + s.iterations - 1,
                                true,
                                4);
                ds.add(new Evidence.Digest(
                        r,
                        bad ? "9f1c2e7a0b" + "0".repeat(54) : "3b7e51c2d4" + "a".repeat(54),
                        bad ? List.of(0.51, -0.2, 17.5) : s.finalSamples,
                        g));
            }
            replicas = new Evidence.Replicas(s.corruptRank == null, ds, Source.file(s.runDir + "/replicas.json"));
        }
        ObjectNode manifest = Json.mapper().createObjectNode();
        manifest.put("schema", "pathproof.run/1");
        manifest.put("backend", s.backend);
        manifest.put("start", s.start);
        manifest.put("nproc", s.ranks);
        if (s.worldSize != null) {
            manifest.put("worldSize", s.worldSize);
        }
        ObjectNode versions = manifest.putObject("versions");
        versions.put("torch", s.torchVersion);
        if (!"gloo".equals(s.backend)) {
            versions.put("nccl", s.ncclVersion);
        }
        versions.put("python", "3.11.2");
        ObjectNode env = manifest.putObject("env");
        s.env.forEach(env::put);
        ObjectNode wl = manifest.putObject("workload");
        wl.put("name", "one-64mib-fp32");
        wl.put("findUnusedParameters", false);
        manifest.put("hostname", s.runDir.hashCode() % 2 == 0 ? "node-a" : "node-b");
        manifest.put("end", "2099-01-01T00:01:00Z");
        // Shaped like the run harness's manifest (issue 4): what the launcher was asked, where the prediction was, the
        // fault knobs under "inject" ({env, knobs}), the Python it found, and the host facts.
        manifest.put("tool", "pathproof 0.1.0");
        manifest.putArray("commandLine").add("run").add("--out").add(s.runDir);
        manifest.put("iters", s.iterations);
        manifest.put("warmup", s.warmup);
        manifest.put("workloadName", "one-64mib-fp32");
        manifest.put("workloadSource", s.runDir + "/workload.json");
        ObjectNode pred = manifest.putObject("prediction");
        pred.putNull("file");
        pred.putNull("sealSha256");
        ObjectNode py = manifest.putObject("python");
        py.put("executable", "python3");
        py.put("version", "3.11.2");
        py.put("torch", s.torchVersion);
        if (s.emulated) {
            manifest.putObject("emulation")
                    .put("emulated", true)
                    .put("note", "emulated: NCCL decisions real, timings not physical");
        }
        if (!s.inject.isEmpty()) {
            ObjectNode inj = manifest.putObject("inject");
            ObjectNode ie = inj.putObject("env");
            ObjectNode ik = inj.putObject("knobs");
            s.inject.forEach((k, v) -> {
                if (k.startsWith("NCCL_") || k.startsWith("TORCH_")) {
                    ie.put(k, String.valueOf(v));
                } else {
                    ik.put(k, String.valueOf(v));
                }
                ((com.fasterxml.jackson.databind.node.ArrayNode) manifest.get("commandLine"))
                        .add("--inject")
                        .add(k + "=" + v);
            });
        }
        return Evidence.builder()
                .runDir(s.runDir)
                .files(files)
                .nccl(nccl)
                .kernels(kernels)
                .ranges(ranges)
                .ddp(ddp)
                .steps(steps)
                .replicas(replicas)
                .manifest(manifest)
                .build();
    }

    private static double gauss(SplittableRandom r) {
        double u1 = r.nextDouble();
        double u2 = r.nextDouble();
        return Math.sqrt(-2 * Math.log(Math.max(u1, 1e-300))) * Math.cos(2 * Math.PI * u2);
    }

    /**
     * The seed's prediction as made for the versions the run {@code s} records (torch's release, its NCCL), as a real
     * prediction names them in its inputs: a run and the prediction it was made for.
     */
    public static Prediction seedPredictionFor(Spec s) {
        Prediction p = seedPrediction();
        ObjectNode inputs = ((ObjectNode) p.inputs()).deepCopy();
        ObjectNode versions = inputs.putObject("versions");
        versions.putObject("torch").put("text", s.torchVersion.replaceFirst("^(\\d+\\.\\d+\\.\\d+).*$", "$1"));
        if (s.ncclVersion != null) {
            versions.putObject("nccl").put("text", s.ncclVersion);
        }
        return new Prediction(
                p.schema(),
                inputs,
                p.backend(),
                p.buckets(),
                p.communicator(),
                p.collectives(),
                p.assumptions(),
                p.seal());
    }

    /** The run {@code e} records the seal of {@code sealed} in its manifest, as {@code run --prediction} writes it. */
    public static Evidence madeFor(Prediction sealed, Evidence e) {
        ((ObjectNode) e.manifest().get("prediction"))
                .put("sealSha256", sealed.seal().sha256());
        return e;
    }

    /**
     * The AllReduce row and Max NThreads of the table NCCL 2.22.3 printed on the seed's 4 × V100 machine
     * (samples/emulation-sweep/nccl-2.22.3/v100-cc70-nccl2.22.3/nccl-rank0.log): algorithm, protocol, latency,
     * bandwidth, Max NThreads.
     */
    static final String[][] SEED_TABLE = {
        {"Tree", "LL", "10.4", "14.5", "512"},
        {"Tree", "LL128", "21.5", "42.9", "640"},
        {"Tree", "Simple", "168.0", "55.2", "512"},
        {"Ring", "LL", "10.2", "26.0", "512"},
        {"Ring", "LL128", "25.4", "73.6", "640"},
        {"Ring", "Simple", "28.8", "80.0", "512"},
        {"CollNetDirect", "LL", "2.4", "0.0", "0"},
        {"CollNetDirect", "LL128", "2.4", "0.0", "0"},
        {"CollNetDirect", "Simple", "40.8", "0.0", "640"},
        {"CollNetChain", "LL", "0.0", "0.0", "0"},
        {"CollNetChain", "LL128", "0.0", "0.0", "0"},
        {"CollNetChain", "Simple", "46.8", "0.0", "640"},
        {"NVLS", "LL", "0.0", "0.0", "0"},
        {"NVLS", "LL128", "0.0", "0.0", "0"},
        {"NVLS", "Simple", "0.0", "0.0", "640"},
        {"NVLSTree", "LL", "0.0", "0.0", "0"},
        {"NVLSTree", "LL128", "0.0", "0.0", "0"},
        {"NVLSTree", "Simple", "0.0", "0.0", "640"}
    };

    /** {@link #SEED_TABLE} as the prediction holds it. */
    static List<CommunicatorPrediction.TuningCell> seedTable() {
        List<CommunicatorPrediction.TuningCell> out = new ArrayList<>();
        for (String[] c : SEED_TABLE) {
            out.add(new CommunicatorPrediction.TuningCell(
                    "AllReduce", c[0], c[1], new BigDecimal(c[2]), new BigDecimal(c[3]), Integer.parseInt(c[4])));
        }
        return out;
    }

    /** {@link #SEED_TABLE} as rank 0's log printed it: Max NThreads on line 50, the AllReduce rows on 55 and 63. */
    static Evidence.TuningTable printedSeedTable(String log) {
        List<Evidence.TuningCell> cells = new ArrayList<>();
        List<Evidence.TuningThreads> threads = new ArrayList<>();
        for (int i = 0; i < SEED_TABLE.length; i++) {
            String[] c = SEED_TABLE[i];
            cells.add(new Evidence.TuningCell(
                    "AllReduce",
                    c[0],
                    c[1],
                    new BigDecimal(c[2]),
                    new BigDecimal(c[3]),
                    Source.line(log, i < 9 ? 55 : 63)));
            threads.add(
                    new Evidence.TuningThreads(c[0], c[1], Integer.parseInt(c[4]), Source.line(log, i < 9 ? 50 : 58)));
        }
        return new Evidence.TuningTable(0, cells, threads);
    }

    /** The seed's prediction (unsealed): 64 MiB fp32 on 4×V100, NCCL 2.22.3. */
    public static Prediction seedPrediction() {
        Bucket b = new Bucket(0, MIB64, List.of("weight"), true, DType.FLOAT32, MIB64);
        CommunicatorPrediction comm = new CommunicatorPrediction(
                4,
                1,
                12,
                16,
                4,
                0,
                null,
                null,
                "P2P",
                List.of(),
                null,
                null,
                null,
                List.of(),
                null,
                null,
                List.of(),
                java.util.Map.of(),
                seedTable());
        CollectivePrediction c = new CollectivePrediction(
                0,
                MIB64,
                "RING",
                1,
                "SIMPLE",
                2,
                new BigDecimal("867.660767"),
                12,
                12,
                544,
                3,
                3,
                1.5,
                100_663_296L,
                "P2P",
                new BigDecimal("1048.576"),
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
                null,
                false,
                List.of(),
                null);
        ObjectNode inputs = Json.mapper().createObjectNode();
        inputs.put("ranks", 4);
        return new Prediction(
                Prediction.SCHEMA,
                inputs,
                "nccl",
                new Prediction.Buckets(List.of(b), List.of(b), 1, MIB64, 1),
                comm,
                List.of(c),
                List.of("gradient-ready order: one parameter"),
                null);
    }
}
