package io.pathproof.evidence;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Reads the JSON lines of pathproof's NCCL profiler plugin ({@code native/nccl-profiler}, format
 * {@code pathproof.nccl-profiler/1}): a {@code comm} line, one {@code coll} line per collective, a {@code finalize}
 * line. A one-rank communicator has no {@code coll} line: NCCL copies before any profiler event exists. The fields are NCCL's own task fields at launch
 * (src/plugin/profiler.cc:393-453@v2.28.9-1). Identical decisions of one rank are kept once with {@code calls}
 * counting them, so memory does not grow with the run's length; GPU durations are summed, with min and max.
 */
final class NcclProfilerReader implements FormatReader {
    /** The first line's marker, for {@link Ingest#sniff}. */
    static final String FORMAT_MARK = "\"format\":\"pathproof.nccl-profiler/";

    /** The profiler API version the plugin exports (native/nccl-profiler/pathproof_profiler.c). */
    static final int PLUGIN_API = 5;

    /**
     * Newest profiler API each NCCL release looks for (it then tries the older ones): from the getNcclProfiler_vN
     * calls of src/plugin/profiler.cc (and the dlsym names of src/profiler.cc before 2.26) at v2.23.4-1, v2.24.3-1,
     * v2.25.1-1, v2.26.2-1, v2.27.3-1, v2.28.9-1, v2.29.2-1 and v2.30.7-1. Keys are major.minor, in order.
     */
    private static final int[][] NCCL_WANTS = {
        {2, 22, 0}, {2, 23, 1}, {2, 24, 2}, {2, 25, 2}, {2, 26, 3}, {2, 27, 4}, {2, 28, 5}, {2, 29, 6}, {2, 30, 6},
    };

    private final Reading ff;
    private final Aggregates f = new Aggregates();
    private final List<Evidence.Finding> findings = new ArrayList<>();

    NcclProfilerReader(Reading ff) {
        this.ff = ff;
    }

    /** What one file held, its decisions aggregated. */
    @Override
    public Facts.Profiler facts() {
        return new Facts.Profiler(f.apiVersion, colls(f), findings);
    }

    /** What one file held so far. */
    static final class Aggregates {
        Integer apiVersion;
        String commId;
        Integer nRanks;
        final Map<String, Agg> colls = new LinkedHashMap<>();
    }

    /** One distinct decision of one rank, aggregated over its calls. */
    static final class Agg {
        Evidence.ProfiledColl first;
        long calls;
        long incomplete;
        Long minDur;
        Long maxDur;
        long sumDur;
        long timed;
    }

    @Override
    public void read(InputStream in) throws IOException {
        BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 1 << 16);
        String line;
        long n = 0;
        while ((line = r.readLine()) != null) {
            n++;
            if (line.isBlank()) {
                continue;
            }
            JsonNode j;
            try {
                j = Json.mapper().readTree(line);
            } catch (JsonProcessingException e) {
                ff.problem(n, "not a JSON line of the NCCL profiler plugin: " + io.pathproof.core.Messages.json(e));
                continue;
            }
            if (j == null || !j.isObject() || !j.path("event").isTextual()) {
                ff.problem(n, "NCCL profiler line without an \"event\"");
                continue;
            }
            switch (j.get("event").textValue()) {
                case "comm" -> comm(j, n, f, ff);
                case "coll" -> coll(j, n, f, ff);
                case "finalize" -> {
                    if (j.path("lost").asLong(0) > 0) {
                        findings.add(Evidence.Finding.once(
                                "nccl-profiler-lost-lines",
                                "the NCCL profiler plugin could not write "
                                        + j.get("lost").asLong() + " line(s) of this rank",
                                List.of(Source.line(ff.file, n))));
                    }
                }
                default ->
                    ff.problem(
                            n, "unknown NCCL profiler event '" + j.get("event").textValue() + "'");
            }
        }
        if (f.apiVersion == null && n > 0) {
            ff.problem(1, "NCCL profiler file without its comm line (format " + FORMAT_MARK + "...)");
        }
    }

    private static void comm(JsonNode j, long n, Aggregates f, Reading ff) {
        f.apiVersion = j.path("apiVersion").isInt() ? j.get("apiVersion").intValue() : null;
        f.commId = j.path("commId").isTextual() ? commId(j.get("commId").textValue()) : null;
        f.nRanks = j.path("nRanks").isInt() ? j.get("nRanks").intValue() : null;
        if (ff.rank == null && j.path("rank").isInt()) {
            ff.rank = j.get("rank").intValue();
        }
        ff.facts++;
    }

    private static void coll(JsonNode j, long n, Aggregates f, Reading ff) {
        String event = j.get("event").textValue();
        String func = text(j, "func");
        JsonNode count = j.get("count");
        if (func == null || count == null || !count.canConvertToLong() || !count.isIntegralNumber()) {
            ff.problem(n, "NCCL profiler " + event + " line without func (text) and count (integer)");
            return;
        }
        Integer rank = j.path("rank").isInt() ? j.get("rank").intValue() : ff.rank;
        boolean complete = j.path("complete").asBoolean(true);
        Long start = longOrNull(j.get("startNs"));
        Long end = longOrNull(j.get("endNs"));
        String clock = text(j, "clock");
        Evidence.ProfiledColl c = new Evidence.ProfiledColl(
                rank,
                f.commId,
                event,
                func,
                count.longValue(),
                text(j, "datatype"),
                text(j, "algorithm"),
                text(j, "protocol"),
                intOrNull(j.get("channels")),
                intOrNull(j.get("warps")),
                1,
                complete ? 0 : 1,
                longOrNull(j.get("seq")),
                null,
                null,
                null,
                clock,
                Source.line(ff.file, n));
        String key = String.join(
                "|",
                String.valueOf(rank),
                String.valueOf(f.commId),
                event,
                func,
                Long.toString(c.count()),
                String.valueOf(c.datatype()),
                String.valueOf(c.algorithm()),
                String.valueOf(c.protocol()),
                String.valueOf(c.channels()),
                String.valueOf(c.warps()),
                String.valueOf(clock));
        Agg a = f.colls.computeIfAbsent(key, k -> new Agg());
        if (a.first == null) {
            a.first = c;
        }
        a.calls++;
        if (!complete) {
            a.incomplete++;
        }
        // Only a span on the GPU's clock is a duration of NCCL's work; host times bracket the launch, not the kernel.
        if ("gpu-globaltimer".equals(clock) && start != null && end != null && end >= start && complete) {
            long d = end - start;
            a.minDur = a.minDur == null ? d : Math.min(a.minDur, d);
            a.maxDur = a.maxDur == null ? d : Math.max(a.maxDur, d);
            a.sumDur += d;
            a.timed++;
        }
        ff.facts++;
    }

    /** The aggregated records of one file. */
    static List<Evidence.ProfiledColl> colls(Aggregates f) {
        List<Evidence.ProfiledColl> out = new ArrayList<>();
        for (Agg a : f.colls.values()) {
            out.add(a.first.aggregated(
                    a.calls,
                    a.incomplete,
                    a.timed == 0 ? null : a.minDur,
                    a.timed == 0 ? null : a.maxDur,
                    a.timed == 0 ? null : a.sumDur));
        }
        return out;
    }

    /**
     * The plugin's part of the evidence: its records; or, when the run asked NCCL to load it (NCCL_PROFILER_PLUGIN in
     * the manifest's environment) and no record exists, why: "profiler plugin not loaded (NCCL wants vN)". Null when
     * the run did not ask for the plugin and no record exists.
     */
    static Evidence.NcclProfiler assemble(List<FileFacts> files, JsonNode manifest, String ncclVersion) {
        List<Evidence.ProfiledColl> colls = new ArrayList<>();
        Integer api = null;
        boolean any = false;
        for (FileFacts ff : files) {
            if (ff.facts() instanceof Facts.Profiler p) {
                any = true;
                api = api == null ? p.apiVersion() : api;
                colls.addAll(p.colls());
            }
        }
        if (any) {
            return new Evidence.NcclProfiler("loaded", null, api, colls);
        }
        String requested = requestedPlugin(manifest);
        if (requested == null) {
            return null;
        }
        String version = ncclVersion != null
                ? ncclVersion
                : manifest != null && manifest.path("versions").path("nccl").isTextual()
                        ? manifest.path("versions").path("nccl").textValue()
                        : null;
        Integer wants = wants(version);
        String why;
        if (wants != null && wants == 0) {
            why = "profiler plugin not loaded (NCCL " + version + " has no profiler plugin API; it came with 2.23)";
        } else if (wants == null) {
            why = "profiler plugin not loaded (NCCL " + (version == null ? "version unknown" : version)
                    + ": which profiler API it wants is not known; the plugin exports v" + PLUGIN_API + ")";
        } else if (wants < PLUGIN_API) {
            why = "profiler plugin not loaded (NCCL wants v" + wants + ")";
        } else {
            why = "profiler plugin not loaded (NCCL " + version + " accepts v" + PLUGIN_API
                    + "; no record was written: see the NCCL log's PROFILER/Plugin lines and the rank's stderr)";
        }
        return new Evidence.NcclProfiler("not-loaded", why, null, List.of());
    }

    /** NCCL_PROFILER_PLUGIN as the launcher or the harness recorded it, unless "none". */
    static String requestedPlugin(JsonNode manifest) {
        if (manifest == null) {
            return null;
        }
        for (String where : new String[] {"launcherEnv", "env"}) {
            JsonNode v = manifest.path(where).path("NCCL_PROFILER_PLUGIN");
            if (v.isTextual() && !v.textValue().isBlank() && !v.textValue().equalsIgnoreCase("none")) {
                return v.textValue();
            }
        }
        return null;
    }

    /** The newest profiler API version NCCL {@code version} ("2.28.9", "2.27.3-1", "2.28.9+cuda13.0") looks for. */
    static Integer wants(String version) {
        if (version == null) {
            return null;
        }
        String[] p = version.trim().split("[.\\-+]");
        if (p.length < 2) {
            return null;
        }
        int major;
        int minor;
        try {
            major = Integer.parseInt(p[0]);
            minor = Integer.parseInt(p[1]);
        } catch (NumberFormatException e) {
            return null;
        }
        Integer best = null;
        for (int[] row : NCCL_WANTS) {
            if (major == row[0] && minor == row[1]) {
                return row[2];
            }
            if (major > row[0] || (major == row[0] && minor > row[1])) {
                best = row[2]; // a release newer than the table: at least what the newest known one wants
            }
        }
        return major < 2 || (major == 2 && minor < NCCL_WANTS[0][1]) ? 0 : best;
    }

    /**
     * Witnesses that disagree: a TUNING line and the profiler's record of the same rank, collective and size naming a
     * different algorithm, protocol or channel count. Both come from the same NCCL decision, so a difference means one
     * witness is read wrongly or belongs to another call.
     */
    static void disagreements(Evidence.Nccl nccl, Evidence.NcclProfiler prof, List<Evidence.Finding> findings) {
        if (nccl == null || prof == null || prof.colls().isEmpty()) {
            return;
        }
        int reported = 0;
        for (Evidence.ProfiledColl c : prof.colls()) {
            Long bytes = c.bytes();
            if (bytes == null || c.algorithm() == null || !"coll".equals(c.event())) {
                continue;
            }
            for (Evidence.Tuning t : nccl.tuning()) {
                if (!Objects.equals(t.rank(), c.rank())
                        || t.bytes() != bytes
                        || t.op() == null
                        || !t.op().toLowerCase(Locale.ROOT).equals(c.func().toLowerCase(Locale.ROOT))
                        || t.algorithm() == null
                        || t.protocol() == null) {
                    continue;
                }
                Integer tch = t.channelLo() != null && t.channelHi() != null ? t.channelHi() - t.channelLo() + 1 : null;
                boolean same = t.algorithm().equalsIgnoreCase(c.algorithm())
                        && t.protocol().equalsIgnoreCase(c.protocol())
                        && (tch == null || c.channels() == null || tch.equals(c.channels()));
                if (!same && reported++ < 10) {
                    findings.add(Evidence.Finding.once(
                            "witness-disagreement",
                            c.func() + " " + bytes + " bytes on rank " + c.rank() + ": the TUNING line says "
                                    + t.algorithm() + "/"
                                    + t.protocol() + (tch == null ? "" : " on " + tch + " channel(s)")
                                    + " but NCCL's profiler says "
                                    + c.algorithm() + "/" + c.protocol() + " on " + c.channels() + " channel(s)",
                            List.of(t.source(), c.source())));
                }
            }
        }
    }

    /**
     * Ranks of one communicator that ran the same collective (function, count, datatype) with another algorithm,
     * protocol, channel count or warp count, as NCCL's profiler saw it: ranks that disagree can hang (NVIDIA/nccl #1136).
     */
    static void crossRank(Evidence.NcclProfiler prof, List<Evidence.Finding> findings) {
        if (prof == null) {
            return;
        }
        Map<String, Evidence.ProfiledColl> first = new LinkedHashMap<>();
        int reported = 0;
        for (Evidence.ProfiledColl c : prof.colls()) {
            if (!"coll".equals(c.event()) || c.rank() == null) {
                continue;
            }
            String what = c.commId() + "|" + c.func() + "|" + c.count() + "|" + c.datatype();
            Evidence.ProfiledColl a = first.putIfAbsent(what, c);
            if (a == null || a.rank().equals(c.rank())) {
                continue;
            }
            String da =
                    a.algorithm() + "/" + a.protocol() + " on " + a.channels() + " channel(s), " + a.warps() + " warps";
            String dc =
                    c.algorithm() + "/" + c.protocol() + " on " + c.channels() + " channel(s), " + c.warps() + " warps";
            if (!da.equals(dc) && reported++ < 10) {
                findings.add(Evidence.Finding.once(
                        "cross-rank-disagreement",
                        c.func() + " count " + c.count() + " " + c.datatype() + ": NCCL's profiler saw rank " + a.rank()
                                + " run " + da + " but rank " + c.rank() + " " + dc + " (NVIDIA/nccl #1136)",
                        List.of(a.source(), c.source())));
            }
        }
    }

    /**
     * The plugin prints comm->commHash as 16 hex digits; NCCL's INIT line prints the same hash as {@code 0x%llx}
     * (init.cc:1574@v2.28.9-1): written the log's way, the two join.
     */
    static String commId(String hex) {
        try {
            return "0x" + Long.toHexString(Long.parseUnsignedLong(hex.startsWith("0x") ? hex.substring(2) : hex, 16));
        } catch (NumberFormatException e) {
            return hex;
        }
    }

    private static String text(JsonNode j, String k) {
        JsonNode v = j.get(k);
        return v != null && v.isTextual() ? v.textValue() : null;
    }

    private static Long longOrNull(JsonNode n) {
        return n != null && n.isIntegralNumber() && n.canConvertToLong() ? n.longValue() : null;
    }

    private static Integer intOrNull(JsonNode n) {
        return n != null && n.isInt() ? n.intValue() : null;
    }
}
