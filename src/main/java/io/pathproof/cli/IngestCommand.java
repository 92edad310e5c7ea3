package io.pathproof.cli;

import io.pathproof.cli.FormatOption.Format;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import io.pathproof.evidence.Problem;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Parameters;

/** Verb {@code ingest}: read evidence files and run directories; print the normalized facts. */
@Command(
        name = "ingest",
        resourceBundle = "io.pathproof.cli.table-or-json",
        mixinStandardHelpOptions = true,
        description = {
            "Read NCCL debug logs, DDP's own debug log (TORCH_DISTRIBUTED_DEBUG), Kineto traces (.json, .json.gz), Nsight Systems SQLite exports, Nsight Compute CSV,"
                    + " flight-recorder dumps (JSON, or torch's pickle, read without running it), dumps of DDP's"
                    + " _get_ddp_logging_data() (JSON, any file name) and run directories into one evidence set.",
            "Exit 0 when something was read, 3 when nothing readable was found."
        })
public final class IngestCommand extends Verb implements Callable<Integer> {
    private static final int SHOWN = 20;

    @Parameters(arity = "1..*", paramLabel = "FILE|DIR", description = "evidence files and run directories")
    List<Path> inputs;

    @Mixin
    FormatOption format = new FormatOption(Format.TABLE, Format.JSON);

    /** The parsed command line. */
    record Options(List<Path> inputs, Format format) {
        Options {
            inputs = List.copyOf(inputs);
        }
    }

    @Override
    public Integer call() throws Exception {
        Options o = new Options(inputs, format.get());
        if (o.format() == Format.JSON) {
            // Jackson builds its serializers of the evidence records on first use (class loading, reflection: about 0.4
            // CPU-s); built on the second core while the files are read, they are ready when the JSON is written.
            Thread warm = new Thread(IngestCommand::prepareJson, "pathproof-json-warm-up");
            warm.setDaemon(true);
            warm.start();
        }
        Evidence ev = Ingest.read(o.inputs());
        PrintWriter out = out();
        PrintWriter err = err();
        boolean anything = ev.anythingRead();
        if (o.format() == Format.JSON) {
            // Streamed, not built as one String first: the JSON of a large log set is tens of MB.
            Json.mapper()
                    .writerWithDefaultPrettyPrinter()
                    .writeValue(
                            new java.io.FilterWriter(out) {
                                @Override
                                public void close() throws java.io.IOException {
                                    flush();
                                }
                            },
                            ev);
            out.println();
        } else {
            table(ev, out);
        }
        for (Problem p : ev.problems()) {
            err.println("pathproof: " + p.file() + ":" + p.line() + ": " + p.message());
        }
        if (!anything) {
            err.println("pathproof: nothing readable in " + o.inputs().size() + " input(s)");
            return ExitCode.BAD_INPUT;
        }
        return ExitCode.OK;
    }

    private static void prepareJson() {
        try {
            Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsBytes(Ingest.read(List.of()));
        } catch (java.io.IOException | RuntimeException e) {
            // A failed warm-up only loses the time it would have saved: the real write reports its own errors.
        }
    }

    /** The evidence as a table: what was read, then one section per kind of fact, findings and problems last. */
    private static void table(Evidence ev, PrintWriter out) {
        files(ev, out);
        nccl(ev.nccl(), out);
        traces(ev, out);
        emulation(ev, out);
        ncclProfiler(ev, out);
        ddp(ev, out);
        for (Evidence.Finding f : ev.findings()) {
            out.println("FINDING " + f.kind() + ": " + f.message() + (f.count() > 1 ? "  (×" + f.count() + ")" : "")
                    + "  " + f.sources());
        }
        out.printf("problems         %d%n", ev.problems().size());
    }

    /** The first {@link #SHOWN} of a list: a long list is cut, with a line saying how many more there are. */
    private static <T> List<T> shown(List<T> all) {
        return all.subList(0, Math.min(SHOWN, all.size()));
    }

    private static void more(PrintWriter out, String indent, List<?> all, String what) {
        if (all.size() > SHOWN) {
            out.println(indent + "… " + (all.size() - SHOWN) + what);
        }
    }

    private static void files(Evidence ev, PrintWriter out) {
        out.println("files");
        for (Evidence.FileRead f : ev.files()) {
            out.printf(
                    "  %-16s rank %-5s %,14d bytes %,10d facts  %s%n",
                    f.kind(), f.rank() == null ? "-" : f.rank(), f.bytes(), f.facts(), f.path());
        }
    }

    private static void nccl(Evidence.Nccl n, PrintWriter out) {
        out.println("nccl");
        out.println("  version        "
                + (n.version() == null ? "(not in the evidence)" : n.version() + "  (" + n.versionSource() + ")"));
        for (Evidence.Communicator c : n.communicators()) {
            communicator(c, out);
        }
        for (Evidence.Tuning t : shown(n.tuning())) {
            out.printf(
                    "  tuning         rank %s %s %,d bytes -> %s/%s%s%s  ×%d  (%s)%n",
                    t.rank(),
                    t.op() == null ? "-" : t.op(),
                    t.bytes(),
                    t.algorithm(),
                    t.protocol(),
                    t.timeUs() == null ? "" : " time " + t.timeUs().toPlainString() + " µs",
                    t.channelHi() == null ? "" : " channels " + t.channelLo() + ".." + t.channelHi(),
                    t.lines(),
                    t.source());
        }
        more(out, "  tuning         ", n.tuning(), " more");
        long calls = n.colls().stream().mapToLong(Evidence.Coll::calls).sum();
        out.printf(
                "  coll           %,d calls in %d distinct (rank, op, count, type) groups%n",
                calls, n.colls().size());
        Map<String, String> env = new TreeMap<>(n.envOverrides());
        env.forEach((k, v) -> out.println("  env            " + k + "=" + v));
        for (Evidence.Warning w : n.warnings()) {
            out.println("  WARN           " + (w.rank() == null ? "" : "rank " + w.rank() + " ")
                    + (w.where() == null ? "" : w.where() + ": ") + w.message() + "  (" + w.source() + ")");
        }
    }

    private static void communicator(Evidence.Communicator c, PrintWriter out) {
        out.printf(
                "  communicator   %s  nRanks %s nNodes %s  ranks seen %d  coll channels %s  p2p %s/%s per peer"
                        + "  nvls %s  transports %s%n",
                c.commId() == null ? "(no commId)" : c.commId(),
                c.nRanks(),
                c.nNodes(),
                c.ranks().size(),
                c.collChannels(),
                c.p2pChannels(),
                c.p2pChannelsPerPeer(),
                c.nvlsChannels(),
                c.transports());
        if (c.collnetChannels() != null) {
            out.println("                 collnet channels " + c.collnetChannels());
        }
        if (c.threadThresholds() != null) {
            out.println("                 threadThresholds " + c.threadThresholds());
        }
        Evidence.TuningTable table = c.tuningTable();
        if (table != null) {
            out.printf(
                    "                 tuning table     %d cells, %d Max NThreads (rank %s)%s%n",
                    table.cells().size(),
                    table.maxThreads().size(),
                    table.rank(),
                    table.cells().isEmpty() ? "" : "  " + table.cells().get(0).source());
        }
        List<String> rings = shown(c.rings());
        for (int i = 0; i < rings.size(); i++) {
            out.printf("                 ring %02d: %s%n", c.ringChannel(i), rings.get(i));
        }
        more(out, "                 ", c.rings(), " more rings");
    }

    /** Kernels, ranges, flight-recorder dumps, torch.distributed metadata and copies of the traces. */
    private static void traces(Evidence ev, PrintWriter out) {
        long nccl = ev.kernels().stream().filter(Evidence.Kernel::nccl).count();
        out.printf("kernels          %,d (%,d NCCL)%n", ev.kernels().size(), nccl);
        out.printf("ranges           %,d%n", ev.ranges().size());
        out.printf("flight recorder  %,d entries%n", ev.flightRecorder().size());
        for (Evidence.FlightDump d : ev.flightRecorderDumps()) {
            out.printf(
                    "  dump           version %s, NCCL %s, %d process group(s), %s  (%s)%n",
                    d.version(), d.ncclVersion(), d.processGroups().size(), d.format(), d.source());
        }
        for (Evidence.Distributed d : ev.distributed()) {
            out.printf(
                    "distributed      rank %s of %s, backend %s, torch built with NCCL %s, %d process group(s)  (%s)%n",
                    d.rank(),
                    d.worldSize(),
                    d.backend(),
                    d.torchNcclBuild(),
                    d.processGroups().size(),
                    d.source());
        }
        if (!ev.copies().isEmpty()) {
            out.printf("copies           %,d memcpy/memset%n", ev.copies().size());
        }
    }

    private static void emulation(Evidence ev, PrintWriter out) {
        if (ev.emulation() != null) {
            out.printf(
                    "emulation        %s; %,d EMULATOR/ORACLE line(s) in the logs%s — NCCL decisions real, timings not"
                            + " physical%n",
                    ev.emulation().manifest() != null ? "manifest.emulation present" : "no manifest.emulation",
                    ev.emulation().logLines(),
                    ev.emulation().firstLogLine() == null
                            ? ""
                            : " (" + ev.emulation().firstLogLine() + ")");
        }
    }

    private static void ncclProfiler(Evidence ev, PrintWriter out) {
        Evidence.NcclProfiler np = ev.ncclProfiler();
        if (np == null) {
            return;
        }
        out.printf(
                "nccl profiler    %s%n",
                np.message() != null
                        ? np.message()
                        : np.colls().stream()
                                        .mapToLong(Evidence.ProfiledColl::calls)
                                        .sum() + " collectives in " + np.colls().size()
                                + " distinct (rank, decision) groups (plugin API v" + np.apiVersion() + ")");
        for (Evidence.ProfiledColl c : shown(np.colls())) {
            out.printf(
                    "                 rank %s %s count %,d %s -> %s/%s %s channels, %s threads  ×%d  (%s)%n",
                    c.rank(),
                    c.func(),
                    c.count(),
                    c.datatype(),
                    c.algorithm(),
                    c.protocol(),
                    c.channels(),
                    c.threads(),
                    c.calls(),
                    c.source());
        }
    }

    private static void ddp(Evidence ev, PrintWriter out) {
        if (ev.ddp() == null) {
            return;
        }
        out.printf(
                "ddp              %,d bucket records%s%n",
                ev.ddp().buckets().size(),
                ev.ddp().logging().isEmpty()
                        ? ""
                        : "; DDP logging of rank(s) "
                                + String.join(", ", ev.ddp().logging().keySet()));
        List<Evidence.DdpLogMessage> log = ev.ddp().log();
        for (Evidence.DdpLogMessage m : shown(log)) {
            out.printf(
                    "  debug log      rank %s %s %s  (%s)%n",
                    m.rank() == null ? "?" : m.rank(),
                    m.message(),
                    m.message().equals("ddp-initialized") ? m.values().size() + " entries" : m.values(),
                    m.source());
        }
        more(out, "  debug log      ", log, " more messages");
    }
}
