package io.pathproof.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/** Joins what each file said into one {@link Evidence}, and draws the cross-file findings. */
final class Assembly {
    private static final int MAX_KERNEL_FINDINGS = 10;

    private Assembly() {}

    static Evidence evidence(String runDir, List<FileFacts> files, List<HarnessFacts> harness, List<Problem> early) {
        return evidence(runDir, files, harness, early, null);
    }

    static Evidence evidence(
            String runDir,
            List<FileFacts> files,
            List<HarnessFacts> harness,
            List<Problem> early,
            Evidence.Integrity integrity) {
        List<Problem> problems = new ArrayList<>(early);
        List<Evidence.Finding> findings = new ArrayList<>();
        PerFile per = new PerFile();
        for (FileFacts ff : files) {
            per.add(ff, problems, findings);
        }
        Evidence.Nccl nccl = NcclJoin.nccl(files, findings);
        crossRankKernels(per.kernels, findings);
        Harness run = new Harness(runDir);
        for (HarnessFacts h : harness) {
            run.add(h, problems);
        }
        Evidence.Ddp ddp = ddpLog(ddpLoggingDumps(run.ddp, files, problems), files);
        Evidence.Emulation emulation = emulation(run, per);
        Evidence.NcclProfiler profiler = NcclProfilerReader.assemble(files, run.manifest, nccl.version());
        NcclProfilerReader.disagreements(nccl, profiler, findings);
        NcclProfilerReader.crossRank(profiler, findings);
        return new Evidence(
                runDir,
                per.reads,
                nccl,
                per.kernels,
                per.ranges,
                ddp,
                run.steps,
                run.replicas,
                run.peer,
                per.flight,
                run.manifest,
                merge(findings),
                problems,
                per.distributed,
                per.copies,
                per.dumps,
                emulation,
                profiler,
                per.clocks,
                integrity);
    }

    /** What the files said, each format's facts joined in file order. */
    private static final class PerFile {
        final List<Evidence.FileRead> reads = new ArrayList<>();
        final List<Evidence.Kernel> kernels = new ArrayList<>();
        final List<Evidence.Range> ranges = new ArrayList<>();
        final List<Evidence.FlightRecord> flight = new ArrayList<>();
        final List<Evidence.FlightDump> dumps = new ArrayList<>();
        final List<Evidence.Distributed> distributed = new ArrayList<>();
        final List<Evidence.Copy> copies = new ArrayList<>();
        final List<Evidence.TraceClock> clocks = new ArrayList<>();
        long emulationLines;
        Source emulationFirst;

        void add(FileFacts ff, List<Problem> problems, List<Evidence.Finding> findings) {
            Facts f = ff.facts();
            reads.add(new Evidence.FileRead(ff.file(), ff.kind(), ff.rank(), ff.bytes(), ff.factCount()));
            problems.addAll(ff.problems());
            findings.addAll(f.findings());
            kernels.addAll(f.kernels());
            if (f instanceof Facts.Trace t) {
                ranges.addAll(t.ranges());
                distributed.addAll(t.distributed());
                copies.addAll(t.copies());
                if (t.baseNs() != null) {
                    clocks.add(new Evidence.TraceClock(ff.rank(), t.baseNs(), t.baseSource()));
                }
                missingNcclKernels(ff, t, findings);
            } else if (f instanceof Facts.Flight fl) {
                flight.addAll(fl.records());
                dumps.addAll(fl.dumps());
            } else if (f instanceof Facts.Log log) {
                if (log.emulationLines() > 0 && emulationFirst == null) {
                    emulationFirst = log.emulationFirst();
                }
                emulationLines += log.emulationLines();
            }
        }
    }

    /** What the run harness's own files said, of every run directory read (the first one's manifest). */
    private static final class Harness {
        private final String runDir;
        Evidence.Ddp ddp;
        final List<Evidence.Step> steps = new ArrayList<>();
        Evidence.Replicas replicas;
        final List<Evidence.PeerAccess> peer = new ArrayList<>();
        JsonNode manifest;
        Source manifestSource;

        Harness(String runDir) {
            this.runDir = runDir;
        }

        void add(HarnessFacts h, List<Problem> problems) {
            if (h.ddp() != null) {
                if (ddp == null) {
                    ddp = new Evidence.Ddp(new ArrayList<>(), new LinkedHashMap<>(), List.of());
                }
                if (h.ddp().buckets() != null) {
                    ddp.buckets().addAll(h.ddp().buckets());
                }
                if (h.ddp().logging() != null) {
                    h.ddp().logging().forEach(ddp.logging()::putIfAbsent);
                }
            }
            if (h.steps() != null) {
                steps.addAll(h.steps());
            }
            if (replicas == null) {
                replicas = h.replicas();
            }
            if (h.peerAccess() != null) {
                peer.addAll(h.peerAccess());
            }
            if (manifest == null) {
                manifest = h.manifest();
                manifestSource = runDir == null
                        ? null
                        : Source.file(
                                java.nio.file.Path.of(runDir, "manifest.json").toString());
            }
            if (h.problems() != null) {
                problems.addAll(h.problems());
            }
        }
    }

    /** The manifest's emulation object and the emulator's log lines; null when the run was not emulated. */
    private static Evidence.Emulation emulation(Harness run, PerFile per) {
        JsonNode m = run.manifest;
        JsonNode emulated = m != null && m.path("emulation").isObject() ? m.get("emulation") : null;
        return emulated == null && per.emulationLines == 0
                ? null
                : new Evidence.Emulation(
                        emulated, emulated == null ? null : run.manifestSource, per.emulationLines, per.emulationFirst);
    }

    /**
     * The dumps of {@code _get_ddp_logging_data()} read by their content join the DDP logging the run's own files gave,
     * one per rank (the data's rank), in rank order. A second dump of a rank is not used, and said so: which one is
     * right is not the reader's to guess.
     */
    private static Evidence.Ddp ddpLoggingDumps(Evidence.Ddp ddp, List<FileFacts> files, List<Problem> problems) {
        Map<Integer, JsonNode> dumps = new TreeMap<>();
        for (FileFacts ff : files) {
            if (!(ff.facts() instanceof Facts.DdpLogging d) || d.data() == null) {
                continue;
            }
            String rank = Integer.toString(ff.rank());
            if (dumps.containsKey(ff.rank()) || ddp != null && ddp.logging().containsKey(rank)) {
                problems.add(new Problem(
                        ff.file(),
                        0,
                        "rank " + rank + "'s DDP logging was read from another file already:"
                                + " this dump is not used"));
            } else {
                dumps.put(ff.rank(), d.data());
            }
        }
        if (dumps.isEmpty()) {
            return ddp;
        }
        Map<Integer, JsonNode> all = new TreeMap<>(dumps);
        if (ddp != null) {
            ddp.logging().forEach((r, n) -> all.put(Integer.valueOf(r), n));
        }
        Map<String, JsonNode> logging = new LinkedHashMap<>();
        all.forEach((r, n) -> logging.put(Integer.toString(r), n));
        return new Evidence.Ddp(ddp == null ? new ArrayList<>() : ddp.buckets(), logging, List.of());
    }

    /** The messages of DDP's debug log of every file, in file order, join the DDP evidence. */
    private static Evidence.Ddp ddpLog(Evidence.Ddp ddp, List<FileFacts> files) {
        List<Evidence.DdpLogMessage> log = new ArrayList<>();
        for (FileFacts ff : files) {
            if (ff.facts() instanceof Facts.Log l) {
                log.addAll(l.ddpLog());
            }
        }
        if (log.isEmpty()) {
            return ddp;
        }
        return ddp == null
                ? new Evidence.Ddp(new ArrayList<>(), new LinkedHashMap<>(), List.copyOf(log))
                : new Evidence.Ddp(ddp.buckets(), ddp.logging(), List.copyOf(log));
    }

    private static final int SOURCES_PER_FINDING = 5;

    /**
     * The same finding (kind and message) drawn in many files — e.g. a version mismatch in each of 64 rank logs — is
     * listed once, with its count and its first few sources.
     */
    static List<Evidence.Finding> merge(List<Evidence.Finding> findings) {
        Map<String, Evidence.Finding> byKey = new LinkedHashMap<>();
        for (Evidence.Finding f : findings) {
            String key = f.kind() + "\u0000" + f.message();
            Evidence.Finding old = byKey.get(key);
            if (old == null) {
                byKey.put(key, f);
            } else {
                Set<Source> srcs = new LinkedHashSet<>(old.sources());
                for (Source s : f.sources()) {
                    if (srcs.size() < SOURCES_PER_FINDING) {
                        srcs.add(s);
                    }
                }
                byKey.put(
                        key,
                        new Evidence.Finding(old.kind(), old.message(), List.copyOf(srcs), old.count() + f.count()));
            }
        }
        return new ArrayList<>(byKey.values());
    }

    /**
     * HTA issue #360: collectives recorded (nccl:* ranges, record_param_comms) but no NCCL kernel means the kernel
     * activity was lost, unless the communicator has one rank, where NCCL launches no kernel at all (the AllReduce of
     * one rank is a copy; seen in the H200 1-rank capture).
     */
    private static void missingNcclKernels(FileFacts ff, Facts.Trace t, List<Evidence.Finding> findings) {
        if (t.collectives() == 0
                || t.kernels().stream().anyMatch(Evidence.Kernel::nccl)
                || (t.backend() != null && !t.backend().contains("nccl"))) {
            return;
        }
        List<Source> at =
                List.of(t.firstCollectiveMarker() != null ? t.firstCollectiveMarker() : Source.file(ff.file()));
        if (t.worldSize() != null && t.worldSize() == 1) {
            findings.add(Evidence.Finding.once(
                    "no-nccl-kernel-single-rank",
                    t.collectives() + " collective(s) but no NCCL kernel: expected, the communicator has 1 rank and"
                            + " NCCL launches no kernel (the data moves by a copy), so this trace cannot show channels or"
                            + " threads",
                    at));
        } else {
            findings.add(Evidence.Finding.once(
                    "missing-nccl-kernels",
                    "LOUD: " + t.collectives() + " collective(s) recorded but ZERO NCCL kernels (ncclKernel_*/"
                            + "ncclDevKernel_*) in this trace: GPU kernel activity was not captured (HTA #360); nothing about"
                            + " channels, threads or kernel time can be proven from it",
                    at));
        }
    }

    /**
     * The n-th NCCL kernel of each rank should have the same name, grid and block on every rank: grid.x is the channel
     * count, so a difference is ranks disagreeing on channels.
     */
    private static void crossRankKernels(List<Evidence.Kernel> kernels, List<Evidence.Finding> findings) {
        Map<Integer, List<Evidence.Kernel>> byRank = new TreeMap<>();
        for (Evidence.Kernel k : kernels) {
            if (k.nccl() && k.rank() != null && k.grid() != null) {
                byRank.computeIfAbsent(k.rank(), r -> new ArrayList<>()).add(k);
            }
        }
        if (byRank.size() < 2) {
            return;
        }
        byRank.values()
                .forEach(l -> l.sort(Comparator.comparing(
                        Evidence.Kernel::startNs, Comparator.nullsLast(Comparator.naturalOrder()))));
        List<List<Evidence.Kernel>> lists = new ArrayList<>(byRank.values());
        List<Evidence.Kernel> base = lists.get(0);
        int reported = 0;
        for (int i = 0; i < base.size() && reported < MAX_KERNEL_FINDINGS; i++) {
            Evidence.Kernel a = base.get(i);
            for (int j = 1; j < lists.size() && reported < MAX_KERNEL_FINDINGS; j++) {
                List<Evidence.Kernel> l = lists.get(j);
                if (i >= l.size()) {
                    continue;
                }
                Evidence.Kernel b = l.get(i);
                if (Objects.equals(a.name(), b.name())
                        && (!java.util.Arrays.equals(a.grid(), b.grid())
                                || !java.util.Arrays.equals(a.block(), b.block()))) {
                    findings.add(Evidence.Finding.once(
                            "cross-rank-disagreement",
                            "NCCL kernel #" + i + " " + shortName(a.name()) + ": rank " + a.rank() + " grid "
                                    + java.util.Arrays.toString(a.grid()) + " block "
                                    + java.util.Arrays.toString(a.block())
                                    + " but rank " + b.rank() + " grid " + java.util.Arrays.toString(b.grid())
                                    + " block "
                                    + java.util.Arrays.toString(b.block()) + " (NVIDIA/nccl #1136)",
                            List.of(a.source(), b.source())));
                    reported++;
                }
            }
        }
    }

    static String shortName(String name) {
        int p = name.indexOf('(');
        return p > 0 ? name.substring(0, p) : name;
    }
}
