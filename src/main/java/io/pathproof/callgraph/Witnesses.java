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
        List<Evidence.BucketRecord> hooks = e.ddp() == null || e.ddp().buckets() == null
                ? List.of()
                : e.ddp().buckets();
        Evidence.Nccl n = e.nccl();
        return switch (name) {
            case "hook-ready" -> cite(hooks, b -> b.readyNs() != null, Evidence.BucketRecord::source);
            case "hook-future" -> cite(hooks, b -> b.futureDoneNs() != null, Evidence.BucketRecord::source);
            case "hook-bytes" -> cite(hooks, b -> b.bytes() > 0, Evidence.BucketRecord::source);
            case "ddp-logging" ->
                e.ddp() == null
                                || e.ddp().logging() == null
                                || e.ddp().logging().isEmpty()
                        ? List.of()
                        : e.ddp().logging().keySet().stream()
                                .sorted()
                                .limit(MAX)
                                .map(k -> "ddp logging " + k)
                                .toList();
            case "param-comms-range" ->
                cite(
                        e.ranges(),
                        r -> r.name() != null && r.name().contains("record_param_comms"),
                        Evidence.Range::source);
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
            case "comm-init" ->
                n == null || n.communicators() == null
                        ? List.of()
                        : cite(
                                n.communicators().stream()
                                        .flatMap(c -> c.rankInits() == null ? Stream.empty() : c.rankInits().stream())
                                        .toList(),
                                r -> true,
                                Evidence.RankInit::source);
            case "init-channels" ->
                n == null || n.communicators() == null
                        ? List.of()
                        : cite(n.communicators(), c -> c.collChannels() != null, Evidence.Communicator::source);
            case "coll-line" ->
                n == null
                        ? List.of()
                        : cite(
                                n.colls(),
                                c -> c.op() != null
                                        && c.op().toLowerCase(Locale.ROOT).contains("allreduce"),
                                Evidence.Coll::source);
            case "tuning-line" ->
                n == null ? List.of() : cite(n.tuning(), t -> t.algorithm() != null, Evidence.Tuning::source);
            case "tuning-channels" ->
                n == null ? List.of() : cite(n.tuning(), t -> t.channelLo() != null, Evidence.Tuning::source);
            case "nccl-kernel" -> cite(ncclKernels(e), k -> true, Evidence.Kernel::source);
            case "nccl-kernel-grid" -> cite(ncclKernels(e), k -> k.grid() != null, Evidence.Kernel::source);
            case "nccl-kernel-block" -> cite(ncclKernels(e), k -> k.block() != null, Evidence.Kernel::source);
            case "ring-kernel" ->
                cite(
                        ncclKernels(e),
                        k -> k.name() != null
                                && k.name().toUpperCase(Locale.ROOT).contains("RING"),
                        Evidence.Kernel::source);
            case "connection" ->
                n == null || n.communicators() == null
                        ? List.of()
                        : cite(
                                n.communicators().stream()
                                        .flatMap(c ->
                                                c.connections() == null ? Stream.empty() : c.connections().stream())
                                        .toList(),
                                c -> true,
                                Evidence.Connection::source);
            case "p2p-connection" ->
                n == null || n.communicators() == null
                        ? List.of()
                        : cite(
                                n.communicators().stream()
                                        .flatMap(c ->
                                                c.connections() == null ? Stream.empty() : c.connections().stream())
                                        .toList(),
                                c -> c.transport() != null && c.transport().startsWith("P2P"),
                                Evidence.Connection::source);
            case "replicas" ->
                e.replicas() == null
                                || e.replicas().equal() == null
                                || e.replicas().source() == null
                        ? List.of()
                        : List.of(e.replicas().source().toString());
            default -> throw new IllegalStateException("call graph model: unknown witness '" + name + "'");
        };
    }
}
