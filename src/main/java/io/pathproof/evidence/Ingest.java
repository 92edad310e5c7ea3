package io.pathproof.evidence;

import io.pathproof.core.Messages;
import io.pathproof.core.PathproofException;
import io.pathproof.rundir.DdpSessions;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

/** The public entry of the evidence room: read files and directories (run dirs included) into one {@link Evidence}. */
public final class Ingest {
    private static final int SNIFF = 1 << 16;
    private static final int MAX_DEPTH = 4;
    private static final Pattern NCCL_LINE =
            Pattern.compile("(?m)(\\] NCCL (INFO|WARN) |^\\s*NCCL (INFO|WARN|version) )");
    /** DDP's debug lines (see DdpLines): torch's C++ logging naming reducer.cpp or logger.cpp, or Python's rebuild line. */
    private static final Pattern DDP_LINE = Pattern.compile(
            "(?m)(?:(?:reducer|logger)\\.cpp:\\d+\\] |Reducer buckets have been rebuilt in this iteration)");

    private static final Pattern RANK_IN_NAME = Pattern.compile("(?i)(?<![a-z0-9])rank[_\\-.]?(\\d{1,7})(?![a-z])");

    private Ingest() {}

    /**
     * Reads every input: a file is read by the reader of its format; a directory is walked (4 levels) and its harness
     * output is read by {@link HarnessReader}. Files are read in parallel on a bounded pool; the result does not
     * depend on the order they finish in. Never throws for bad input: every problem is listed with file and line.
     */
    public static Evidence read(List<Path> inputs) {
        return read(inputs, Math.max(1, Runtime.getRuntime().availableProcessors()));
    }

    /**
     * One run directory (or one evidence file) that a verb cannot do without: read as {@link #read(List)}, but a path
     * that does not exist, or that holds nothing readable, is bad input (exit 3) instead of an empty evidence set.
     */
    public static Evidence readRun(Path dir) {
        if (!Files.exists(dir)) {
            throw PathproofException.badInput("no such run directory: " + dir);
        }
        Evidence e = read(List.of(dir));
        if (e == null || !e.anythingRead()) {
            throw PathproofException.badInput(dir + ": no readable evidence");
        }
        return e;
    }

    /** As {@link #read(List)} with at most {@code threads} files read at once. */
    public static Evidence read(List<Path> inputs, int threads) {
        List<Task> tasks = new ArrayList<>();
        List<Problem> problems = new ArrayList<>();
        List<HarnessFacts> harness = new ArrayList<>();
        String runDir = null;
        Path runPath = null;
        com.fasterxml.jackson.databind.JsonNode runManifest = null;
        for (Path in : inputs) {
            String name = in.toString();
            if (!Files.exists(in)) {
                problems.add(new Problem(name, 0, "no such file or directory"));
            } else if (Files.isDirectory(in)) {
                boolean first = runDir == null;
                if (first) {
                    runDir = name;
                    runPath = in;
                }
                try {
                    HarnessFacts h = HarnessReader.read(in);
                    if (h != null) {
                        harness.add(h);
                        if (first) {
                            runManifest = h.manifest();
                        }
                    }
                } catch (RuntimeException e) {
                    problems.add(new Problem(name, 0, "harness output not readable: " + e.getMessage()));
                }
                walk(in, tasks, problems);
            } else {
                FileKind kind = classify(in, true, problems);
                if (kind != null) {
                    tasks.add(new Task(in, kind));
                }
            }
        }
        List<FileFacts> facts = readAll(tasks, threads);
        // Each rank's files whole, for the run directory the evidence is named after (its manifest says how many ranks
        // ran).
        Evidence.Integrity integrity = runPath == null ? null : RankIntegrity.check(runPath, runManifest, facts);
        return Assembly.evidence(runDir, facts, harness, problems, integrity);
    }

    private record Task(Path path, FileKind kind) {}

    private static void walk(Path dir, List<Task> tasks, List<Problem> problems) {
        List<Path> files;
        try (Stream<Path> s = Files.walk(dir, MAX_DEPTH)) {
            // fault.sealed.json holds what a run injected: never opened here, so a diagnosis cannot be told what to
            // find.
            // Hidden files and folders are not evidence: a run's .pathproof/ holds the instrumentation that ran.
            files = s.filter(Files::isRegularFile)
                    .filter(p -> !hidden(dir.relativize(p)))
                    .filter(p -> !laterSession(dir.relativize(p)))
                    .filter(p -> !p.getFileName().toString().equals("fault.sealed.json"))
                    .sorted()
                    .toList();
        } catch (IOException | UncheckedIOException e) {
            problems.add(new Problem(dir.toString(), 0, "directory not readable: " + e.getMessage()));
            return;
        }
        for (Path f : files) {
            if (HarnessReader.reads(dir, f)) {
                continue; // the run's own files, read by HarnessReader under the rank their name gives
            }
            FileKind kind = classify(f, false, problems);
            if (kind != null) {
                tasks.add(new Task(f, kind));
            }
        }
    }

    /**
     * A file of a later DDP session of the run (session-N/): a run of its own, read when it is named, never as part of
     * the first session's evidence.
     */
    private static boolean laterSession(Path relative) {
        return relative.getNameCount() > 1
                && DdpSessions.isSessionFolder(relative.getName(0).toString());
    }

    private static boolean hidden(Path relative) {
        for (Path part : relative) {
            if (part.toString().startsWith(".")) {
                return true;
            }
        }
        return false;
    }

    /**
     * The format of a file, from its name and its first 64 KiB (decompressed for .gz). Unknown files named on the
     * command line are a problem; inside a directory they are someone else's (the harness's, a script) and skipped.
     */
    static FileKind classify(Path f, boolean explicit, List<Problem> problems) {
        String name = f.getFileName().toString().toLowerCase(Locale.ROOT);
        byte[] head;
        try {
            head = head(f);
        } catch (IOException e) {
            problems.add(new Problem(f.toString(), 0, "not readable: " + Messages.io(e, f)));
            return null;
        }
        FileKind kind = sniff(name, head);
        if (kind == null && explicit) {
            String why = name.endsWith(".nsys-rep") || name.endsWith(".qdrep")
                    ? "an Nsight Systems report: export it first with `nsys export --type sqlite`"
                    : name.endsWith(".pkl") || (head.length > 0 && (head[0] & 0xff) == 0x80)
                            ? "a pickle that is not a flight-recorder dump (no version, pg_config or entries in its first"
                                    + " 64 KiB): not read; pickles are read only as flight-recorder dumps, and never run or load code"
                            : "not a format pathproof reads (NCCL log, DDP's debug log, Kineto trace, nsys SQLite, ncu CSV,"
                                    + " flight-recorder JSON or pickle, a JSON dump of DDP's _get_ddp_logging_data())";
            problems.add(new Problem(f.toString(), 0, why));
        }
        return kind;
    }

    /** The format of a file from its name and first bytes: binary formats, then JSON ones, then CSV, then text logs. */
    static FileKind sniff(String name, byte[] head) {
        if (startsWith(head, "SQLite format 3\0")) {
            return FileKind.NSYS;
        }
        String text = new String(head, StandardCharsets.ISO_8859_1);
        // torch's default dump (TORCH_NCCL_DEBUG_INFO_TEMP_FILE, e.g. nccl_trace_rank_0) is a pickle, protocol 2.
        if (head.length > 2
                && (head[0] & 0xff) == 0x80
                && head[1] >= 2
                && head[1] <= 5
                && (text.contains("pg_config")
                        || text.contains("comm_lib_version")
                        || text.contains("profiling_name"))) {
            return FileKind.FLIGHT_RECORDER;
        }
        FileKind json = json(text);
        if (json != null) {
            return json;
        }
        if (text.contains("\"ID\",") && text.contains("\"Kernel Name\"")) {
            return FileKind.NCU;
        }
        return textLog(name, text);
    }

    /** A JSON format, by the keys in its first bytes; null when the text is not JSON or none of them. */
    private static FileKind json(String text) {
        int i = 0;
        while (i < text.length() && Character.isWhitespace(text.charAt(i))) {
            i++;
        }
        char first = i < text.length() ? text.charAt(i) : ' ';
        if (first != '{' && first != '[') {
            return null;
        }
        if (text.contains("\"traceEvents\"") || (first == '[' && text.contains("\"ph\""))) {
            return FileKind.KINETO;
        }
        if (text.contains(NcclProfilerReader.FORMAT_MARK)) {
            return FileKind.NCCL_PROFILER;
        }
        if (first == '{' && DdpLoggingReader.looksLikeDump(text)) {
            return FileKind.DDP_LOGGING;
        }
        // Harness JSON files live in the same run directories: ask for the flight recorder's own keys.
        if (text.contains("\"profiling_name\"")
                || text.contains("\"comm_lib_version\"")
                || (text.contains("\"pg_config\"") && text.contains("\"entries\""))) {
            return FileKind.FLIGHT_RECORDER;
        }
        return null;
    }

    /** An NCCL log or DDP's debug log, by its lines or, for a log file with neither in its first bytes, by its name. */
    private static FileKind textLog(String name, String text) {
        String base = name.endsWith(".gz") ? name.substring(0, name.length() - 3) : name;
        if (base.endsWith(".md")
                || base.endsWith(".json")
                || base.endsWith(".csv")
                || base.endsWith(".py")
                || base.endsWith(".xml")) {
            return null; // documentation and data that may quote NCCL lines
        }
        boolean nccl = NCCL_LINE.matcher(text).find();
        if (!nccl && DDP_LINE.matcher(text).find()) {
            return FileKind.DDP_LOG;
        }
        if (nccl) {
            return FileKind.NCCL_LOG;
        }
        if ((base.endsWith(".log")
                        || base.endsWith(".txt")
                        || base.endsWith(".out")
                        || base.endsWith(".err")
                        || base.contains("nccl"))
                && !text.contains("\0")) {
            return FileKind.NCCL_LOG; // NCCL lines may come after more than 64 KiB of other output
        }
        return null;
    }

    private static boolean startsWith(byte[] b, String prefix) {
        if (b.length < prefix.length()) {
            return false;
        }
        for (int i = 0; i < prefix.length(); i++) {
            if (b[i] != (byte) prefix.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static byte[] head(Path f) throws IOException {
        try (InputStream in = open(f)) {
            return in.readNBytes(SNIFF);
        }
    }

    /** Opens a file, decompressing gzip (by its magic bytes, whatever the name). */
    static InputStream open(Path f) throws IOException {
        InputStream raw = new BufferedInputStream(Files.newInputStream(f), 1 << 16);
        raw.mark(2);
        int b0 = raw.read();
        int b1 = raw.read();
        raw.reset();
        if (b0 == 0x1f && b1 == 0x8b) {
            return new BufferedInputStream(new GZIPInputStream(raw, 1 << 16), 1 << 16);
        }
        return raw;
    }

    static Integer rankFromName(Path f) {
        Matcher m = RANK_IN_NAME.matcher(f.getFileName().toString());
        return m.find() ? Integer.valueOf(m.group(1)) : null;
    }

    private static List<FileFacts> readAll(List<Task> tasks, int threads) {
        int n = Math.min(threads, tasks.size());
        if (n <= 1) {
            List<FileFacts> out = new ArrayList<>();
            for (Task t : tasks) {
                out.add(readOne(t.path(), t.kind()));
            }
            return out;
        }
        ExecutorService pool = Executors.newFixedThreadPool(n, r -> {
            Thread t = new Thread(r, "pathproof-ingest");
            t.setDaemon(true);
            return t;
        });
        try {
            List<Future<FileFacts>> futures = new ArrayList<>();
            for (Task t : tasks) {
                futures.add(pool.submit(() -> readOne(t.path(), t.kind())));
            }
            List<FileFacts> out = new ArrayList<>();
            for (int i = 0; i < futures.size(); i++) {
                try {
                    out.add(futures.get(i).get());
                } catch (ExecutionException e) {
                    Reading in = new Reading(
                            tasks.get(i).path().toString(), tasks.get(i).kind(), null);
                    in.problem(0, "internal error while reading: " + e.getCause());
                    out.add(in.done(new Facts.Unread()));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while reading evidence", e);
                }
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    /** Reads one file of a known kind; never throws for bad content. */
    static FileFacts readOne(Path f, FileKind kind) {
        Reading in = new Reading(f.toString(), kind, rankFromName(f));
        if (kind == FileKind.NSYS) {
            Facts.Trace.Builder trace = new Facts.Trace.Builder();
            try {
                in.bytes = Files.size(f);
                NsysReader.read(f, in, trace);
            } catch (IOException e) {
                in.problem(0, "not readable: " + Messages.io(e, f));
            } catch (RuntimeException | StackOverflowError e) {
                in.problem(0, "internal error while reading: " + e);
            }
            return in.done(trace.build());
        }
        FormatReader reader = reader(in);
        try {
            try (InputStream s = open(f)) {
                reader.read(s);
            }
            if (kind != FileKind.NCCL_LOG && kind != FileKind.DDP_LOG) {
                in.bytes = Files.size(f); // the log reader counts what it read (decompressed); others: the file's size
            }
        } catch (IOException e) {
            in.problem(0, "not readable: " + Messages.io(e, f));
        } catch (RuntimeException | StackOverflowError e) {
            in.problem(0, "internal error while reading: " + e);
        }
        return in.done(reader.facts());
    }

    /** Reads a stream of a stream-readable kind (used by tests and fuzzing on bytes). */
    static FileFacts readStream(InputStream s, Reading in) throws IOException {
        FormatReader reader = reader(in);
        reader.read(s);
        return in.done(reader.facts());
    }

    /** The reader of a stream-readable kind, for one file. */
    private static FormatReader reader(Reading in) {
        return switch (in.kind) {
            case NCCL_LOG, DDP_LOG -> new NcclLogReader(in, in.rank);
            case KINETO -> new KinetoReader(in);
            case FLIGHT_RECORDER -> new FlightRecorderReader(in);
            case NCU -> new NcuCsvReader(in);
            case NCCL_PROFILER -> new NcclProfilerReader(in);
            case DDP_LOGGING -> new DdpLoggingReader(in);
            case NSYS -> throw new IllegalArgumentException("not a stream kind: " + in.kind);
        };
    }
}
