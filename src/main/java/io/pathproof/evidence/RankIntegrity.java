package io.pathproof.evidence;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import io.pathproof.core.Messages;
import io.pathproof.rundir.DdpSessions;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Checks, for every rank the manifest says ran, every kind of per-rank file of {@link RankEvidence}: present, read to
 * its end (a torn last line — no newline at the end, or a line cut mid-JSON — is a gap), the rank's own (a record of
 * another rank, or a file byte for byte another rank's, is a gap) and covering the iterations. Readers keep what they
 * can read of a damaged file, which is right for a reader and wrong for a verdict: a rank whose records stop early or
 * vanished would otherwise leave rows that pass on the ranks that remain.
 */
final class RankIntegrity {
    /** Gaps named per file; the rest are counted in one more gap, so nothing is silently lost and nothing floods. */
    private static final int GAPS_PER_FILE = 3;

    private final Path dir;
    private final JsonNode manifest;
    private final Map<String, FileFacts> read = new HashMap<>();
    private final List<Evidence.Gap> gaps = new ArrayList<>();

    private RankIntegrity(Path dir, JsonNode manifest, List<FileFacts> facts) {
        this.dir = dir;
        this.manifest = manifest;
        for (FileFacts f : facts) {
            read.put(f.file(), f);
        }
    }

    /** The integrity of the run directory {@code dir}; null when it holds no per-rank file and no manifest. */
    static Evidence.Integrity check(Path dir, JsonNode manifest, List<FileFacts> facts) {
        return new RankIntegrity(dir, manifest, facts).check();
    }

    private Evidence.Integrity check() {
        List<Path> names;
        try (Stream<Path> s = Files.list(dir)) {
            names = s.filter(Files::isRegularFile).sorted().toList();
        } catch (IOException e) {
            return null;
        }
        Map<RankEvidence, TreeMap<Integer, Path>> files = byKindAndRank(names);
        TreeSet<Integer> seen = new TreeSet<>();
        files.values()
                .forEach(byRank -> byRank.keySet().stream().filter(r -> r >= 0).forEach(seen::add));
        if (seen.isEmpty()
                && manifest == null
                && files.get(RankEvidence.REPLICAS).isEmpty()) {
            return null;
        }
        WorldSize world = worldSize();
        Set<Integer> ranks = ranks(world.size(), seen);
        List<Evidence.KindCheck> kinds = new ArrayList<>();
        for (RankEvidence k : RankEvidence.values()) {
            kinds.add(kindCheck(k, files.get(k), ranks, world.size()));
        }
        return new Evidence.Integrity(
                world.size() != null ? world.size() : ranks.isEmpty() ? null : ranks.size(),
                world.from(),
                kinds,
                gaps,
                DdpSessions.later(dir).stream().map(Path::toString).toList());
    }

    /** The files of each kind by rank (-1: the one file of a per-run kind). */
    private static Map<RankEvidence, TreeMap<Integer, Path>> byKindAndRank(List<Path> names) {
        Map<RankEvidence, TreeMap<Integer, Path>> files = new EnumMap<>(RankEvidence.class);
        for (RankEvidence k : RankEvidence.values()) {
            TreeMap<Integer, Path> byRank = new TreeMap<>();
            for (Path p : names) {
                Integer r = k.rankOf(p.getFileName().toString());
                if (r != null) {
                    // trace-rank0.json and trace-rank0.json.gz: one rank's trace; the first name (sorted) stands for
                    // it.
                    byRank.putIfAbsent(r, p);
                }
            }
            files.put(k, byRank);
        }
        return files;
    }

    /** How many ranks ran, and where that was read; a null size when the manifest does not say. */
    private record WorldSize(Integer size, String from) {}

    private WorldSize worldSize() {
        if (manifest != null
                && manifest.path("worldSize").canConvertToInt()
                && manifest.path("worldSize").asInt() > 0) {
            return new WorldSize(manifest.path("worldSize").asInt(), "manifest worldSize");
        }
        if (manifest != null && manifest.path("nproc").asInt(0) > 0) {
            return new WorldSize(
                    manifest.path("nproc").asInt()
                            * Math.max(1, manifest.path("nnodes").asInt(1)),
                    "manifest nproc × nnodes");
        }
        return new WorldSize(null, "the ranks the files name (no world size in the manifest)");
    }

    /** The ranks that ran: 0 … world size - 1, else 0 … the highest rank a file names. */
    private static Set<Integer> ranks(Integer worldSize, TreeSet<Integer> seen) {
        Set<Integer> ranks = new TreeSet<>();
        int end = worldSize != null ? worldSize : seen.isEmpty() ? 0 : seen.last() + 1;
        for (int r = 0; r < end; r++) {
            ranks.add(r);
        }
        return ranks;
    }

    /** Checks the files of kind {@code k} where the run has or promises them; whole ranks are those without a gap. */
    private Evidence.KindCheck kindCheck(
            RankEvidence k, TreeMap<Integer, Path> byRank, Set<Integer> ranks, Integer worldSize) {
        boolean expected = !byRank.isEmpty() || manifest != null && k.promised.test(manifest);
        int before = gaps.size();
        if (expected) {
            if (k.perRun()) {
                digests(k, byRank.get(-1), ranks);
            } else {
                perRank(k, byRank, ranks, worldSize);
            }
        }
        Set<Integer> broken = new TreeSet<>();
        for (Evidence.Gap g : gaps.subList(before, gaps.size())) {
            broken.add(g.rank());
        }
        List<Integer> complete = new ArrayList<>();
        if (expected) {
            for (int r : ranks) {
                if (!broken.contains(r) && !broken.contains(-1)) {
                    complete.add(r);
                }
            }
        }
        return new Evidence.KindCheck(k.kind, k.pattern(), k.rows, k.evidence, k.uses, expected, complete);
    }

    // ------------------------------------------------------------------ one file per rank
    private void perRank(RankEvidence k, TreeMap<Integer, Path> byRank, Set<Integer> ranks, Integer worldSize) {
        Map<Integer, Records> records = new TreeMap<>();
        for (int r : ranks) {
            Path p = byRank.get(r);
            if (p == null
                    && k.cover != RankEvidence.Cover.NONE
                    && Integer.valueOf(0).equals(ownIterations(r))) {
                continue; // it finished and said it ran no iteration (a script that only builds DDP): none owed
            }
            if (p == null) {
                gap(
                        k,
                        r,
                        dir.resolve(
                                k.pattern().replace("{r}", Integer.toString(r)).replace("[.gz]", "")),
                        0,
                        "missing: rank " + r + " wrote no " + k.kind + " file");
                continue;
            }
            Records rec = file(k, r, p);
            if (rec != null) {
                records.put(r, rec);
            }
        }
        for (Map.Entry<Integer, Path> en : byRank.entrySet()) {
            if (!ranks.contains(en.getKey())) {
                gap(
                        k,
                        en.getKey(),
                        en.getValue(),
                        0,
                        "rank " + en.getKey() + " is not one of the " + worldSize
                                + " ranks the manifest says ran: evidence of another job?");
            }
        }
        copies(k, byRank, ranks);
        if (k.cover != RankEvidence.Cover.NONE) {
            cover(k, byRank, records);
        }
    }

    /** What a JSON-lines file held: per iteration the bucket indices (and which was last), and its last line. */
    private static final class Records {
        final TreeMap<Integer, TreeMap<Integer, Boolean>> iterations = new TreeMap<>();
        long lines;
    }

    private Records file(RankEvidence k, int rank, Path p) {
        long size;
        try {
            size = Files.size(p);
        } catch (IOException e) {
            gap(k, rank, p, 0, "cannot read: " + Messages.io(e, p));
            return null;
        }
        if (size == 0) {
            gap(k, rank, p, 0, "empty");
            return null;
        }
        return switch (k.form) {
            case JSON_LINES -> jsonLines(k, rank, p);
            case TEXT_LINES -> {
                textLines(k, rank, p, size);
                yield null;
            }
            case JSON_OBJECT -> {
                jsonObject(k, rank, p);
                yield null;
            }
            case READER -> {
                reader(k, rank, p);
                yield null;
            }
            case DIGESTS -> throw new IllegalStateException("a per-run kind: " + k);
        };
    }

    private Records jsonLines(RankEvidence k, int rank, Path p) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(p);
        } catch (IOException e) {
            gap(k, rank, p, 0, "cannot read: " + Messages.io(e, p));
            return null;
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        if (text.isBlank()) {
            gap(k, rank, p, 0, "empty");
            return null;
        }
        boolean torn = bytes[bytes.length - 1] != '\n';
        String[] lines = text.split("\n", -1);
        int last = lines.length - (torn ? 0 : 1); // the empty string after a final newline is no line
        JsonLines file = new JsonLines(k, rank, p);
        file.rec.lines = last;
        for (int i = 0; i < last; i++) {
            file.line(lines[i].strip(), i + 1, torn && i == last - 1);
        }
        file.end();
        return file.rec;
    }

    /** One JSON-lines file being read: its records, each key's first line, and its gaps so far. */
    private final class JsonLines {
        final RankEvidence k;
        final int rank;
        final Path p;
        final Records rec = new Records();
        final Map<String, Integer> firstAt = new HashMap<>();
        int fileGaps;
        int otherRank;

        JsonLines(RankEvidence k, int rank, Path p) {
            this.k = k;
            this.rank = rank;
            this.p = p;
        }

        /** Line {@code lineNo}; {@code tornLast}: the file's last line, with no newline at its end. */
        void line(String l, int lineNo, boolean tornLast) {
            if (l.isEmpty()) {
                return;
            }
            JsonNode n;
            try {
                n = Json.mapper().readTree(l);
            } catch (JsonProcessingException e) {
                gap(
                        lineNo,
                        tornLast
                                ? "the last line is cut mid-JSON (no newline at its end): the file was cut "
                                        + "while it was written"
                                : "not JSON: " + Messages.json(e));
                return;
            }
            if (tornLast) {
                gap(lineNo, "the last line has no newline at its end: the file may have been cut right after it");
            }
            if (n == null || !n.isObject()) {
                gap(lineNo, "not a JSON object");
                return;
            }
            JsonNode rf = n.get("rank");
            if (rf != null && rf.canConvertToInt() && rf.asInt() != rank) {
                if (otherRank++ == 0) {
                    gap(
                            lineNo,
                            "a record of rank " + rf.asInt() + " in rank " + rank
                                    + "'s file: not this rank's evidence");
                }
                return;
            }
            JsonNode it = n.get("iteration");
            if (it != null && it.canConvertToInt()) {
                record(n, it.asInt(), lineNo);
            }
        }

        /** A record of this rank's iteration; one whose iteration (and bucket) came before is a gap. */
        private void record(JsonNode n, int iteration, int lineNo) {
            boolean buckets = k.cover == RankEvidence.Cover.ITERATION_BUCKETS;
            String key = buckets ? iteration + "/" + n.path("index").asInt(-1) : Integer.toString(iteration);
            Integer first = firstAt.putIfAbsent(key, lineNo);
            if (first != null) {
                gap(
                        lineNo,
                        "iteration " + iteration
                                + (buckets ? " bucket " + n.path("index").asInt(-1) : "")
                                + " recorded twice (first at line " + first + ")");
                return;
            }
            rec.iterations
                    .computeIfAbsent(iteration, x -> new TreeMap<>())
                    .put(n.path("index").asInt(0), n.path("isLast").asBoolean(false));
        }

        void end() {
            if (otherRank > 1) {
                gap(0, otherRank + " records of other ranks in all");
            }
            if (fileGaps > GAPS_PER_FILE) {
                RankIntegrity.this.gap(
                        k, rank, p, 0, (fileGaps - GAPS_PER_FILE) + " more gaps in this file not listed");
            }
        }

        private void gap(long line, String problem) {
            fileGaps = limited(k, rank, p, line, problem, fileGaps);
        }
    }

    /** Adds a gap unless this file already has its share; returns the file's gap count. */
    private int limited(RankEvidence k, int rank, Path p, long line, String problem, int count) {
        if (count < GAPS_PER_FILE) {
            gap(k, rank, p, line, problem);
        }
        return count + 1;
    }

    /** An NCCL log: its last byte is a newline (NCCL ends every line with one), else its last line is torn. */
    private void textLines(RankEvidence k, int rank, Path p, long size) {
        try (SeekableByteChannel ch = Files.newByteChannel(p)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.position(size - 1);
            ch.read(b);
            if (b.get(0) == '\n') {
                return;
            }
        } catch (IOException e) {
            gap(k, rank, p, 0, "cannot read: " + Messages.io(e, p));
            return;
        }
        gap(
                k,
                rank,
                p,
                lineCount(p),
                "the last line is torn (no newline at its end): the log was cut while it was written");
    }

    private static long lineCount(Path p) {
        long n = 1;
        byte[] buf = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(p)) {
            for (int got; (got = in.read(buf)) > 0; ) {
                for (int i = 0; i < got; i++) {
                    if (buf[i] == '\n') {
                        n++;
                    }
                }
            }
        } catch (IOException e) {
            return 0;
        }
        return n;
    }

    private void jsonObject(RankEvidence k, int rank, Path p) {
        JsonNode n;
        try {
            n = Json.mapper().readTree(p.toFile());
        } catch (JsonProcessingException e) {
            gap(
                    k,
                    rank,
                    p,
                    e.getLocation() == null ? 0 : e.getLocation().getLineNr(),
                    "not JSON to its end: " + Messages.json(e));
            return;
        } catch (IOException e) {
            gap(k, rank, p, 0, "cannot read: " + Messages.io(e, p));
            return;
        }
        if (n == null || n.isMissingNode()) {
            gap(k, rank, p, 0, "empty");
        } else if (!n.isObject()) {
            gap(k, rank, p, 1, "not a JSON object");
        } else if (n.get("rank") != null
                && n.get("rank").canConvertToInt()
                && n.get("rank").asInt() != rank) {
            gap(k, rank, p, 0, "holds rank " + n.get("rank").asInt() + "'s record, not rank " + rank + "'s");
        }
    }

    /** A format with its own reader: the file must have been read as that format, and to its end without a problem. */
    private void reader(RankEvidence k, int rank, Path p) {
        FileFacts f = read.get(p.toString());
        if (f == null) {
            gap(k, rank, p, 0, "not readable as a " + k.kind + ": cut before its first record, or not this format");
            return;
        }
        int n = 0;
        for (Problem pr : f.problems()) {
            n = limited(k, rank, p, pr.line(), pr.message(), n);
        }
        if (n > GAPS_PER_FILE) {
            gap(k, rank, p, 0, (n - GAPS_PER_FILE) + " more problems in this file not listed");
        }
    }

    /** A file byte for byte another rank's is a copy: it is not the evidence of the rank its name says. */
    private void copies(RankEvidence k, TreeMap<Integer, Path> byRank, Set<Integer> ranks) {
        Map<Long, List<Integer>> bySize = new TreeMap<>();
        for (Map.Entry<Integer, Path> en : byRank.entrySet()) {
            try {
                long size = Files.size(en.getValue());
                if (size > 0 && ranks.contains(en.getKey())) {
                    bySize.computeIfAbsent(size, x -> new ArrayList<>()).add(en.getKey());
                }
            } catch (IOException e) {
                // reported by the file's own check
            }
        }
        for (List<Integer> sameSize : bySize.values()) {
            if (sameSize.size() < 2) {
                continue;
            }
            // Ranks' logs often share a size (a thousand ranks of one job): a cheap hash first, SHA-256 only where it
            // ties.
            Map<Long, List<Integer>> byQuick = new HashMap<>();
            for (int r : sameSize) {
                byQuick.computeIfAbsent(quickHash(byRank.get(r)), x -> new ArrayList<>())
                        .add(r);
            }
            for (List<Integer> same : byQuick.values()) {
                if (same.size() > 1) {
                    sameBytes(k, byRank, same);
                }
            }
        }
    }

    private void sameBytes(RankEvidence k, TreeMap<Integer, Path> byRank, List<Integer> same) {
        Map<String, Integer> firstBySha = new HashMap<>();
        for (int r : same) {
            String sha = sha256(byRank.get(r));
            if (sha == null) {
                continue;
            }
            Integer first = firstBySha.putIfAbsent(sha, r);
            if (first != null) {
                gap(
                        k,
                        r,
                        byRank.get(r),
                        0,
                        "byte for byte the same as " + byRank.get(first).getFileName() + ": a copy of rank " + first
                                + "'s file, not rank " + r + "'s evidence");
            }
        }
    }

    /** A 64-bit polynomial hash of the file's bytes (not a proof of equality: SHA-256 decides); 0 if unreadable. */
    private static long quickHash(Path p) {
        try (InputStream in = Files.newInputStream(p)) {
            long h = 0;
            byte[] buf = new byte[1 << 16];
            for (int got; (got = in.read(buf)) > 0; ) {
                for (int i = 0; i < got; i++) {
                    h = 31 * h + buf[i];
                }
            }
            return h;
        } catch (IOException e) {
            return 0;
        }
    }

    private static String sha256(Path p) {
        try (InputStream in = Files.newInputStream(p)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int got; (got = in.read(buf)) > 0; ) {
                md.update(buf, 0, got);
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (IOException | NoSuchAlgorithmException e) {
            return null;
        }
    }

    /**
     * The iterations each rank's records must cover: the manifest's (its hooked iterations; its warm-up + measured
     * steps), else every iteration some rank recorded — a rank that stopped early lacks the others' last iterations.
     */
    private void cover(RankEvidence k, TreeMap<Integer, Path> byRank, Map<Integer, Records> records) {
        Set<Integer> want = new TreeSet<>();
        String why;
        boolean fixedSteps = false; // the stand-in job's ranks all run warmup + iters: no rank may say fewer
        if (k.cover == RankEvidence.Cover.ITERATION_BUCKETS
                && manifest != null
                && manifest.path("hookedIterations").isArray()
                && !manifest.path("hookedIterations").isEmpty()) {
            manifest.path("hookedIterations").forEach(x -> want.add(x.asInt()));
            why = "the manifest's hookedIterations";
        } else if (k.cover == RankEvidence.Cover.ITERATIONS
                && manifest != null
                && manifest.path("iters").canConvertToInt()
                && manifest.path("warmup").canConvertToInt()) {
            for (int i = 0;
                    i < manifest.path("warmup").asInt() + manifest.path("iters").asInt();
                    i++) {
                want.add(i);
            }
            why = "the manifest's warmup + iters";
            fixedSteps = true;
        } else {
            records.values().forEach(r -> want.addAll(r.iterations.keySet()));
            why = "the iterations other ranks recorded";
        }
        for (Map.Entry<Integer, Records> en : records.entrySet()) {
            int rank = en.getKey();
            Records rec = en.getValue();
            Path p = byRank.get(rank);
            Set<Integer> missing = new TreeSet<>(want);
            // A rank that finished and said how many iterations it ran (uneven inputs under DDP's Join) owes none
            // past them; a rank that did not finish, or lost records within its count, still shows the gap.
            Integer own = fixedSteps ? null : ownIterations(rank);
            if (own != null) {
                missing.removeIf(i -> i >= own);
            }
            missing.removeAll(rec.iterations.keySet());
            if (!missing.isEmpty()) {
                gap(
                        k,
                        rank,
                        p,
                        rec.lines,
                        "iterations " + abbreviate(missing) + " missing (" + why + ": " + abbreviate(want) + ")");
            }
            if (k.cover == RankEvidence.Cover.ITERATION_BUCKETS) {
                for (Map.Entry<Integer, TreeMap<Integer, Boolean>> it : rec.iterations.entrySet()) {
                    TreeMap<Integer, Boolean> buckets = it.getValue();
                    boolean contiguous = buckets.firstKey() == 0 && buckets.lastKey() == buckets.size() - 1;
                    if (!contiguous || !buckets.lastEntry().getValue()) {
                        gap(
                                k,
                                rank,
                                p,
                                rec.lines,
                                "iteration " + it.getKey() + " has buckets " + buckets.keySet()
                                        + (contiguous
                                                ? " and none marked last (isLast): its later buckets are missing"
                                                : ": some are missing"));
                        break;
                    }
                }
            }
        }
    }

    /** Each rank's {@link #readOwnIterations}, read once for every kind that asks. */
    private final Map<Integer, java.util.Optional<Integer>> ownIterations = new HashMap<>();

    private Integer ownIterations(int rank) {
        return ownIterations
                .computeIfAbsent(rank, r -> java.util.Optional.ofNullable(readOwnIterations(r)))
                .orElse(null);
    }

    /** The iterations rank {@code rank} said it ran, in its own status file, if it finished; else null. */
    private Integer readOwnIterations(int rank) {
        Path f = dir.resolve("rank" + rank + ".json");
        if (!Files.isRegularFile(f)) {
            return null;
        }
        try {
            JsonNode st = io.pathproof.core.Json.mapper().readTree(f.toFile());
            return st.path("status").asText("").equals("finished")
                            && st.path("iterations").canConvertToInt()
                    ? st.path("iterations").asInt()
                    : null;
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** Iterations as runs: {@code 0-1, 7-9}. */
    static String abbreviate(Set<Integer> s) {
        List<String> parts = new ArrayList<>();
        Integer start = null;
        Integer prev = null;
        for (int i : s) {
            if (prev != null && i == prev + 1) {
                prev = i;
                continue;
            }
            if (start != null) {
                parts.add(start.equals(prev) ? Integer.toString(start) : start + "-" + prev);
            }
            start = i;
            prev = i;
        }
        if (start != null) {
            parts.add(start.equals(prev) ? Integer.toString(start) : start + "-" + prev);
        }
        return String.join(", ", parts);
    }

    // ------------------------------------------------------------------ one file per run
    /** Rank 0's gathered digests: one entry per rank, each rank once. */
    private void digests(RankEvidence k, Path p, Set<Integer> ranks) {
        if (p == null) {
            gap(k, -1, dir.resolve(k.pattern()), 0, "missing: the manifest says the harness finished, which writes it");
            return;
        }
        JsonNode n;
        try {
            n = Json.mapper().readTree(p.toFile());
        } catch (JsonProcessingException e) {
            gap(
                    k,
                    -1,
                    p,
                    e.getLocation() == null ? 0 : e.getLocation().getLineNr(),
                    "not JSON to its end: " + Messages.json(e));
            return;
        } catch (IOException e) {
            gap(k, -1, p, 0, "cannot read: " + Messages.io(e, p));
            return;
        }
        if (n == null || n.isMissingNode()) {
            gap(k, -1, p, 0, "empty");
            return;
        }
        Map<Integer, Integer> count = new TreeMap<>();
        for (JsonNode d : n.path("digests")) {
            count.merge(d.path("rank").asInt(-1), 1, Integer::sum);
        }
        for (int r : ranks) {
            int c = count.getOrDefault(r, 0);
            if (c == 0) {
                gap(k, r, p, 0, "no digest of rank " + r);
            } else if (c > 1) {
                gap(k, r, p, 0, "rank " + r + "'s digest listed " + c + " times");
            }
        }
        for (int r : count.keySet()) {
            if (!ranks.contains(r)) {
                gap(k, r, p, 0, "a digest of rank " + r + ", not one of the ranks that ran");
            }
        }
    }

    private void gap(RankEvidence k, int rank, Path p, long line, String problem) {
        gaps.add(new Evidence.Gap(k.kind, rank, p.toString(), line, problem));
    }
}
