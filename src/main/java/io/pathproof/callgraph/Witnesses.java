package io.pathproof.callgraph;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Source;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * The facts that show one stage happened, by name (the {@code witness} column of the call-graph model). Each returns
 * where it was read, a few citations at most; an empty list means the run holds no such fact.
 */
final class Witnesses {
    private Witnesses() {}

    private static final int MAX = 3;

    /** "a|b": the first alternative that has facts; "a+b": all parts must have facts (their citations joined). */
    static List<String> find(String expr, Evidence e) {
        for (String alt : expr.split("\\|")) {
            List<String> all = new ArrayList<>();
            boolean ok = true;
            for (String part : alt.split("\\+")) {
                List<String> c = one(part.trim(), e);
                if (c.isEmpty()) {
                    ok = false;
                    break;
                }
                all.addAll(c);
            }
            if (ok) {
                return all;
            }
        }
        return List.of();
    }

    private static <T> List<String> cite(List<T> l, java.util.function.Predicate<T> keep, Function<T, Source> src) {
        if (l == null) {
            return List.of();
        }
        return l.stream()
                .filter(keep)
                .map(src)
                .filter(Objects::nonNull)
                .map(Source::toString)
                .distinct()
                .limit(MAX)
                .toList();
    }

    private static List<Evidence.Kernel> ncclKernels(Evidence e) {
        return e.kernels() == null
                ? List.of()
                : e.kernels().stream().filter(Evidence.Kernel::nccl).toList();
    }

    static List<String> one(String name, Evidence e) {
        return switch (name) {
            case "hook-ready" -> cite(hooks(e), b -> b.readyNs() != null, Evidence.BucketRecord::source);
            case "hook-future" -> cite(hooks(e), b -> b.futureDoneNs() != null, Evidence.BucketRecord::source);
            case "hook-bytes" -> cite(hooks(e), b -> b.bytes() > 0, Evidence.BucketRecord::source);
            case "ddp-logging" -> ddpLogging(e);
            case "param-comms-range" -> cite(e.ranges(), r -> named(r, "record_param_comms"), Evidence.Range::source);
            case "nccl-range" ->
                cite(
                        e.ranges(),
                        r -> r.name() != null && r.name().startsWith("nccl:all_reduce"),
                        Evidence.Range::source);
            case "flight-record" ->
                cite(
                        e.flightRecorder(),
                        f -> f.profilingName() != null && f.profilingName().equals("nccl:all_reduce"),
                        Evidence.FlightRecord::source);
            case "comm-init" -> cite(rankInits(e), r -> true, Evidence.RankInit::source);
            case "init-channels" ->
                cite(communicators(e), c -> c.collChannels() != null, Evidence.Communicator::source);
            case "coll-line" -> cite(colls(e), Witnesses::allReduce, Evidence.Coll::source);
            case "tuning-line" -> cite(tuning(e), t -> t.algorithm() != null, Evidence.Tuning::source);
            case "tuning-channels" -> cite(tuning(e), t -> t.channelLo() != null, Evidence.Tuning::source);
            case "nccl-kernel" -> cite(ncclKernels(e), k -> true, Evidence.Kernel::source);
            case "nccl-kernel-grid" -> cite(ncclKernels(e), k -> k.grid() != null, Evidence.Kernel::source);
            case "nccl-kernel-block" -> cite(ncclKernels(e), k -> k.block() != null, Evidence.Kernel::source);
            case "ring-kernel" -> cite(ncclKernels(e), Witnesses::ringKernel, Evidence.Kernel::source);
            case "connection" -> cite(connections(e), c -> true, Evidence.Connection::source);
            case "p2p-connection" -> cite(connections(e), Witnesses::p2p, Evidence.Connection::source);
            case "replicas" -> replicas(e);
            default -> throw new IllegalStateException("call graph model: unknown witness '" + name + "'");
        };
    }

    private static List<Evidence.BucketRecord> hooks(Evidence e) {
        return e.ddp() == null || e.ddp().buckets() == null
                ? List.of()
                : e.ddp().buckets();
    }

    /** The first keys of DDP's logging data, each a citation. */
    private static List<String> ddpLogging(Evidence e) {
        if (e.ddp() == null || e.ddp().logging() == null || e.ddp().logging().isEmpty()) {
            return List.of();
        }
        return e.ddp().logging().keySet().stream()
                .sorted()
                .limit(MAX)
                .map(k -> "ddp logging " + k)
                .toList();
    }

    private static boolean named(Evidence.Range r, String part) {
        return r.name() != null && r.name().contains(part);
    }

    private static List<Evidence.Communicator> communicators(Evidence e) {
        Evidence.Nccl n = e.nccl();
        return n == null || n.communicators() == null ? List.of() : n.communicators();
    }

    private static List<Evidence.RankInit> rankInits(Evidence e) {
        return communicators(e).stream()
                .flatMap(c -> c.rankInits() == null ? Stream.empty() : c.rankInits().stream())
                .toList();
    }

    private static List<Evidence.Connection> connections(Evidence e) {
        return communicators(e).stream()
                .flatMap(c -> c.connections() == null ? Stream.empty() : c.connections().stream())
                .toList();
    }

    private static List<Evidence.Coll> colls(Evidence e) {
        return e.nccl() == null ? List.of() : e.nccl().colls();
    }

    private static List<Evidence.Tuning> tuning(Evidence e) {
        return e.nccl() == null ? List.of() : e.nccl().tuning();
    }

    private static boolean allReduce(Evidence.Coll c) {
        return c.op() != null && c.op().toLowerCase(Locale.ROOT).contains("allreduce");
    }

    private static boolean ringKernel(Evidence.Kernel k) {
        return k.name() != null && k.name().toUpperCase(Locale.ROOT).contains("RING");
    }

    private static boolean p2p(Evidence.Connection c) {
        return c.transport() != null && c.transport().startsWith("P2P");
    }

    private static List<String> replicas(Evidence e) {
        return e.replicas() == null
                        || e.replicas().equal() == null
                        || e.replicas().source() == null
                ? List.of()
                : List.of(e.replicas().source().toString());
    }
}
