package io.pathproof.evidence;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import io.pathproof.core.Messages;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Reads the harness's own outputs in a run directory (manifest, hook records, steps, replicas, peer access), as
 * written by {@code io/pathproof/run/harness.py} (schema {@code pathproof.run.manifest/1}), and the per-rank replica
 * digests a user's instrumented job writes ({@code replica-rank{r}.json}: {"rank":r,"sha256":…,"samples":[first,
 * last,mean]}; where they exist they are the replicas, rank 0's gathered {@code replicas.json} otherwise). Every fact
 * keeps its file and line (JSON lines) or event index (JSON arrays); a line that cannot be read becomes a
 * {@link Problem} naming the file and line, and reading goes on. Nothing read here is executed or trusted: replica
 * equality is recomputed from the digests.
 */
public final class HarnessReader {
    private static final Pattern RANKED =
            Pattern.compile("^(hook|steps|ddp-logging|peer-access|replica)-rank(\\d+)\\.jsonl?$");

    private HarnessReader() {}

    /** Returns null when {@code dir} holds no harness output. */
    public static HarnessFacts read(Path dir) {
        if (dir == null || !Files.isDirectory(dir)) {
            return null;
        }
        List<Path> hooks = new ArrayList<>();
        List<Path> steps = new ArrayList<>();
        List<Path> logging = new ArrayList<>();
        List<Path> peers = new ArrayList<>();
        List<Path> replicaFiles = new ArrayList<>();
        try {
            for (Path p : rankFiles(dir)) {
                Matcher m = RANKED.matcher(p.getFileName().toString());
                if (!m.matches()) {
                    continue;
                }
                switch (m.group(1)) {
                    case "hook" -> hooks.add(p);
                    case "steps" -> steps.add(p);
                    case "ddp-logging" -> logging.add(p);
                    case "replica" -> replicaFiles.add(p);
                    default -> peers.add(p);
                }
            }
        } catch (IOException e) {
            return null;
        }
        Path manifestFile = dir.resolve("manifest.json");
        Path replicasFile = dir.resolve("replicas.json");
        if (hooks.isEmpty()
                && steps.isEmpty()
                && logging.isEmpty()
                && peers.isEmpty()
                && replicaFiles.isEmpty()
                && !Files.exists(manifestFile)
                && !Files.exists(replicasFile)) {
            return null;
        }
        List<Problem> problems = new ArrayList<>();
        List<Evidence.BucketRecord> buckets = new ArrayList<>();
        for (Path p : hooks) {
            readBuckets(p, buckets, problems);
        }
        Map<String, JsonNode> log = new TreeMap<>(Comparator.comparingInt(Integer::parseInt));
        for (Path p : logging) {
            JsonNode n = readJson(p, problems);
            if (n != null) {
                log.put(Integer.toString(rankOf(p)), n);
            }
        }
        List<Evidence.Step> stepList = new ArrayList<>();
        for (Path p : steps) {
            readSteps(p, stepList, problems);
        }
        List<Evidence.PeerAccess> peerList = new ArrayList<>();
        for (Path p : peers) {
            readPeers(p, peerList, problems);
        }
        Evidence.Replicas replicas = !replicaFiles.isEmpty()
                ? readReplicaFiles(replicaFiles, problems)
                : Files.exists(replicasFile) ? readReplicas(replicasFile, problems) : null;
        JsonNode manifest = Files.exists(manifestFile) ? readJson(manifestFile, problems) : null;
        return new HarnessFacts(
                new Evidence.Ddp(List.copyOf(buckets), log, List.of()),
                List.copyOf(stepList),
                replicas,
                List.copyOf(peerList),
                manifest,
                List.copyOf(problems));
    }

    /**
     * True for a file this reader reads when {@code dir} is read: a per-rank file named as the run writes it, in
     * {@code dir} or in one of its {@code node-N/} folders. The walk over the directory leaves these to it, so that a
     * file is read once (a DDP logging dump elsewhere in the tree is read by its content).
     */
    static boolean reads(Path dir, Path file) {
        Path parent = file.getParent();
        if (parent == null || !RANKED.matcher(file.getFileName().toString()).matches()) {
            return false;
        }
        return parent.equals(dir)
                || parent.getParent() != null
                        && parent.getParent().equals(dir)
                        && parent.getFileName().toString().matches("node-\\d+");
    }

    /**
     * The files of the run's ranks: in {@code dir}, and in its {@code node-N/} folders, where the ranks of another
     * node are when the nodes did not share a file system (their directories copied in), in rank order.
     */
    private static List<Path> rankFiles(Path dir) throws IOException {
        List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                if (Files.isDirectory(p) && p.getFileName().toString().matches("node-\\d+")) {
                    try (Stream<Path> n = Files.list(p)) {
                        out.addAll(n.toList());
                    }
                } else {
                    out.add(p);
                }
            }
        }
        out.sort(Comparator.comparing(HarnessReader::rankOrder));
        return out;
    }

    private static String rankOrder(Path p) {
        Matcher m = RANKED.matcher(p.getFileName().toString());
        return m.matches()
                ? m.group(1) + String.format("%09d", Long.parseLong(m.group(2)))
                : p.getFileName().toString();
    }

    private static int rankOf(Path p) {
        Matcher m = RANKED.matcher(p.getFileName().toString());
        return m.matches() ? Integer.parseInt(m.group(2)) : -1;
    }

    private interface LineReader {
        void accept(JsonNode n, Source src);
    }

    private static void eachLine(Path p, List<Problem> problems, LineReader r) {
        List<String> lines;
        try {
            lines = Files.readAllLines(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            problems.add(new Problem(p.toString(), 0, "cannot read: " + Messages.io(e, p)));
            return;
        }
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i).strip();
            if (l.isEmpty()) {
                continue;
            }
            try {
                JsonNode n = Json.mapper().readTree(l);
                if (!n.isObject()) {
                    throw new IllegalArgumentException("not a JSON object");
                }
                r.accept(n, Source.line(p.toString(), i + 1));
            } catch (JsonProcessingException e) {
                problems.add(new Problem(p.toString(), i + 1, "not JSON: " + Messages.json(e)));
            } catch (IllegalArgumentException e) {
                problems.add(new Problem(p.toString(), i + 1, e.getMessage()));
            }
        }
    }

    private static void readBuckets(Path p, List<Evidence.BucketRecord> out, List<Problem> problems) {
        eachLine(p, problems, (n, src) -> {
            List<String> params = new ArrayList<>();
            for (JsonNode x : n.path("params")) {
                params.add(x.asText());
            }
            out.add(new Evidence.BucketRecord(
                    reqInt(n, "rank"),
                    reqInt(n, "iteration"),
                    reqInt(n, "index"),
                    reqLong(n, "bytes"),
                    reqBool(n, "isLast"),
                    List.copyOf(params),
                    optLong(n, "readyNs"),
                    optLong(n, "futureDoneNs"),
                    optLong(n, "gpuDoneNs"),
                    src));
        });
    }

    private static void readSteps(Path p, List<Evidence.Step> out, List<Problem> problems) {
        eachLine(p, problems, (n, src) -> {
            JsonNode ms = n.get("ms");
            if (ms == null || !ms.isNumber() || ms.asDouble() < 0) {
                throw new IllegalArgumentException("field ms: missing or not a non-negative number");
            }
            String phase = n.path("phase").asText("");
            if (!phase.equals("measured") && !phase.equals("warmup")) {
                throw new IllegalArgumentException("field phase: '" + phase + "' is neither measured nor warmup");
            }
            int rank = reqInt(n, "rank");
            int iteration = reqInt(n, "iteration");
            Evidence.HostPhases host = null;
            try {
                host = hostPhases(n);
            } catch (IllegalArgumentException e) {
                // The step's time stands on its own: a bad boundary costs the bars, not the step.
                problems.add(new Problem(src.file(), src.line(), e.getMessage()));
            }
            Evidence.StepLoad load = null;
            try {
                load = stepLoad(n);
            } catch (IllegalArgumentException e) {
                // As the phases: a bad load figure costs the load evidence of this step, not the step.
                problems.add(new Problem(src.file(), src.line(), e.getMessage()));
            }
            out.add(new Evidence.Step(rank, iteration, ms.asDouble(), phase.equals("measured"), src, host, load));
        });
    }

    /** A step row's machine load: none in rows without {@code cpuMs}; a problem where a figure is not a number. */
    private static Evidence.StepLoad stepLoad(JsonNode n) {
        if (!n.has("cpuMs")) {
            return null;
        }
        for (String f : List.of("cpuMs", "runQueueMs", "loadavg1")) {
            if (n.has(f) && !n.get(f).isNumber() && !n.get(f).isNull()) {
                throw new IllegalArgumentException("field " + f + ": not a number");
            }
        }
        return new Evidence.StepLoad(
                n.get("cpuMs").asDouble(),
                n.path("runQueueMs").isNumber() ? n.get("runQueueMs").asDouble() : null,
                n.path("loadavg1").isNumber() ? n.get("loadavg1").asDouble() : null);
    }

    private static final List<String> PHASE_FIELDS = List.of(
            "hostForwardStartNs",
            "hostBackwardStartNs",
            "hostBackwardEndNs",
            "hostOptimizerStartNs",
            "hostOptimizerEndNs");

    /** A step row's phase boundaries: none in rows older than them, all five or a problem otherwise. */
    private static Evidence.HostPhases hostPhases(JsonNode n) {
        long[] t = new long[PHASE_FIELDS.size()];
        int present = 0;
        for (int i = 0; i < t.length; i++) {
            Long v = optLong(n, PHASE_FIELDS.get(i));
            if (v != null) {
                t[i] = v;
                present++;
            }
        }
        if (present == 0) {
            return null;
        }
        if (present < t.length) {
            throw new IllegalArgumentException(
                    "fields " + String.join(", ", PHASE_FIELDS) + ": only " + present + " of " + t.length + " present");
        }
        String kind = n.path("hostPhases").asText("");
        if (!kind.equals("issue") && !kind.equals("work")) {
            throw new IllegalArgumentException("field hostPhases: '" + kind + "' is neither issue nor work");
        }
        return new Evidence.HostPhases(
                t[0],
                t[1],
                t[2],
                t[3],
                t[4],
                kind.equals("issue"),
                optDouble(n, "hostForwardRunQueueMs"),
                optDouble(n, "hostOptimizerRunQueueMs"));
    }

    private static void readPeers(Path p, List<Evidence.PeerAccess> out, List<Problem> problems) {
        JsonNode n = readJson(p, problems);
        if (n == null) {
            return;
        }
        JsonNode pairs = n.path("pairs");
        for (int i = 0; i < pairs.size(); i++) {
            JsonNode x = pairs.get(i);
            try {
                JsonNode bw = x.get("copyGBs");
                out.add(new Evidence.PeerAccess(
                        reqInt(x, "fromRank"),
                        reqInt(x, "toRank"),
                        reqBool(x, "canAccess"),
                        bw == null || bw.isNull() ? null : bw.asDouble(),
                        Source.event(p.toString(), i)));
            } catch (IllegalArgumentException e) {
                problems.add(new Problem(p.toString(), 0, "pairs[" + i + "]: " + e.getMessage()));
            }
        }
    }

    private static Evidence.Replicas readReplicas(Path p, List<Problem> problems) {
        JsonNode n = readJson(p, problems);
        if (n == null) {
            return null;
        }
        List<Evidence.Digest> digests = new ArrayList<>();
        Set<String> shas = new HashSet<>();
        JsonNode ds = n.path("digests");
        for (int i = 0; i < ds.size(); i++) {
            JsonNode d = ds.get(i);
            String sha = d.path("sha256").asText("");
            if (!sha.matches("[0-9a-f]{64}")) {
                problems.add(new Problem(p.toString(), 0, "digests[" + i + "].sha256: not a SHA-256 hex digest"));
                continue;
            }
            List<Double> samples = new ArrayList<>();
            for (JsonNode s : d.path("samples")) {
                samples.add(s.isNumber() ? s.asDouble() : null);
            }
            digests.add(new Evidence.Digest(d.path("rank").asInt(-1), sha, samples));
            shas.add(sha);
        }
        Boolean equal = digests.isEmpty() ? null : shas.size() == 1;
        JsonNode claimed = n.get("equal");
        if (claimed != null && claimed.isBoolean() && equal != null && claimed.asBoolean() != equal) {
            problems.add(new Problem(
                    p.toString(), 0, "equal: file says " + claimed.asBoolean() + " but the digests say " + equal));
        }
        return new Evidence.Replicas(equal, List.copyOf(digests), Source.file(p.toString()));
    }

    /** A replica file's gradient digest; null where it has none (an older file, a job that ran no backward). */
    private static Evidence.Gradients gradients(JsonNode g, Path p, List<Problem> problems) {
        if (g.isMissingNode() || g.isNull()) {
            return null;
        }
        String sha = g.path("sha256").asText("");
        if (!sha.matches("[0-9a-f]{64}")
                || !g.path("iteration").canConvertToInt()
                || !g.path("averaged").isBoolean()) {
            problems.add(new Problem(
                    p.toString(), 0, "gradients: expected sha256 (hex), iteration (integer) and averaged (boolean)"));
            return null;
        }
        return new Evidence.Gradients(
                sha,
                g.path("iteration").asInt(),
                g.path("averaged").asBoolean(),
                g.path("held").asInt(0));
    }

    /**
     * One digest per rank, each in its own file: equality is computed here from the digests, as for replicas.json. A
     * file whose rank field is not the rank in its name is a problem (a copy of another rank's file); its digest is kept
     * under the rank it names, so a copy never stands in for the rank whose file it replaced.
     */
    private static Evidence.Replicas readReplicaFiles(List<Path> files, List<Problem> problems) {
        List<Evidence.Digest> digests = new ArrayList<>();
        Set<String> shas = new HashSet<>();
        for (Path p : files) {
            JsonNode d = readJson(p, problems);
            if (d == null) {
                continue;
            }
            String sha = d.path("sha256").asText("");
            if (!sha.matches("[0-9a-f]{64}")) {
                problems.add(new Problem(p.toString(), 0, "sha256: not a SHA-256 hex digest"));
                continue;
            }
            int rank = d.path("rank").asInt(-1);
            if (rank != rankOf(p)) {
                problems.add(new Problem(p.toString(), 0, "rank: " + rank + " in the file of rank " + rankOf(p)));
            }
            List<Double> samples = new ArrayList<>();
            for (JsonNode s : d.path("samples")) {
                samples.add(s.isNumber() ? s.asDouble() : null);
            }
            digests.add(new Evidence.Digest(rank, sha, samples, gradients(d.path("gradients"), p, problems)));
            shas.add(sha);
        }
        return new Evidence.Replicas(
                digests.isEmpty() ? null : shas.size() == 1,
                List.copyOf(digests),
                Source.file(files.get(0).toString()));
    }

    private static JsonNode readJson(Path p, List<Problem> problems) {
        try {
            JsonNode n = Json.mapper().readTree(p.toFile());
            if (n == null || n.isMissingNode()) {
                // An emptied file is no evidence, not an empty object: say so rather than read it as "nothing
                // recorded".
                problems.add(new Problem(p.toString(), 0, "empty: expected a JSON object"));
                return null;
            }
            return n;
        } catch (JsonProcessingException e) {
            problems.add(new Problem(
                    p.toString(),
                    e.getLocation() == null ? 0 : e.getLocation().getLineNr(),
                    "not JSON: " + Messages.json(e)));
        } catch (IOException e) {
            problems.add(new Problem(p.toString(), 0, "cannot read: " + Messages.io(e, p)));
        }
        return null;
    }

    private static JsonNode req(JsonNode n, String f) {
        JsonNode v = n.get(f);
        if (v == null || v.isNull()) {
            throw new IllegalArgumentException("field " + f + ": missing");
        }
        return v;
    }

    private static int reqInt(JsonNode n, String f) {
        JsonNode v = req(n, f);
        if (!v.canConvertToInt() || !v.isIntegralNumber()) {
            throw new IllegalArgumentException("field " + f + ": not an integer");
        }
        return v.asInt();
    }

    private static long reqLong(JsonNode n, String f) {
        JsonNode v = req(n, f);
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new IllegalArgumentException("field " + f + ": not an integer");
        }
        return v.asLong();
    }

    private static boolean reqBool(JsonNode n, String f) {
        JsonNode v = req(n, f);
        if (!v.isBoolean()) {
            throw new IllegalArgumentException("field " + f + ": not true/false");
        }
        return v.asBoolean();
    }

    private static Long optLong(JsonNode n, String f) {
        JsonNode v = n.get(f);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new IllegalArgumentException("field " + f + ": not an integer");
        }
        return v.asLong();
    }

    private static Double optDouble(JsonNode n, String f) {
        JsonNode v = n.get(f);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isNumber()) {
            throw new IllegalArgumentException("field " + f + ": not a number");
        }
        return v.asDouble();
    }
}
