package io.pathproof.evidence;

import java.io.IOException;
import java.io.InputStream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads an NCCL debug log ({@code NCCL_DEBUG=INFO}, any subsystems) from bytes, streaming, in constant memory.
 *
 * <p>Lines are split on '\n' in a 1 MiB buffer; a line is looked at only if it holds {@code "NCCL "} followed by
 * {@code INFO}, {@code WARN} or {@code version}. The hot lines (COLL and TUNING, which repeat every iteration) are
 * parsed from bytes and aggregated; every init-line family is dispatched and, in its usual shape, read on the bytes
 * too (a line of another shape falls back to that family's regex, which also names what is wrong). Format strings and
 * their source lines per version are listed in package-info.
 *
 * <p>One class per log-line family, all package-private behind {@link Ingest}: {@link LinePrefix} (NCCL's line
 * prefix, launcher tags, torn lines), {@link CommLines} (comm init lines and the attribution of lines to
 * communicators), {@link CollLines} (COLL and TUNING), {@link ConnectorLines} (connections, ring orders),
 * {@link InitLines} (channel counts, Trees, Pattern, env, Init timings, thresholds), {@link TuningTableLines} (the
 * tuning table), {@link EmulatorLines}, and
 * {@link DdpLines}, which reads the lines of DDP's own debug log among the others (a rank's stderr holds both).
 *
 * <p>Attribution of init lines (which carry no comm pointer) to a communicator: NCCL ≥ 2.19 prints
 * {@code … comm %p … - Init START} first, so a line belongs to the communicator whose init is open on that thread
 * (else on that device of that process), else to the one last completed on that device (lazy connection lines,
 * {@code NCCL_RUNTIME_CONNECT}). Older versions print only {@code … - Init COMPLETE} at the end, so lines wait on
 * their device until the comm line that names them. The summary line ({@code comm %p rank %d nRanks %d nNodes %d …})
 * opens its communicator on its thread where nothing else did (a log cut before its Init START, an old version), and
 * the join gives lines of a process that named no communicator to the file's one communicator, if it names one only.
 */
final class NcclLogReader implements FormatReader {
    static final int MAX_LINE = 1 << 16;
    private static final int BUFFER = 1 << 20;
    private static final byte[] NCCL_ = LinePrefix.NCCL_;
    private static final byte[] INFO_ = LinePrefix.INFO_;
    private static final byte[] WARN_ = LinePrefix.WARN_;
    private static final byte[] TREES = Bytes.ascii("Trees");
    private static final byte[] RING_ = Bytes.ascii("Ring ");
    private static final byte[] PATTERN_ = Bytes.ascii("Pattern ");
    private static final byte[] THRESHOLDS_ = Bytes.ascii("threadThresholds ");
    private static final byte[] NCCL_VERSION_ = Bytes.ascii("NCCL version ");
    private static final byte[] NCCL_ENV = Bytes.ascii("NCCL_");
    /** aws-ofi-nccl's lines: "NET/OFI " before the text (its NCCL_OFI_INFO macro, include/nccl_ofi_log.h:21@v1.21.1 of aws/aws-ofi-nccl). */
    private static final byte[] NET_OFI_ = Bytes.ascii("NET/OFI ");

    private static final byte[] INIT_TIMINGS = Bytes.ascii("Init timings");
    private static final byte[] EMULATOR = Bytes.ascii("EMULATOR");
    private static final byte[] ORACLE = Bytes.ascii("ORACLE");
    private static final byte[] CONNECTED_RINGS = Bytes.ascii("Connected all rings");
    private static final byte[] CONNECTED_TREES = Bytes.ascii("Connected all trees");
    private static final byte[] COLL_CHANNELS = Bytes.ascii(" coll channels, ");
    private static final Pattern VERSION = Pattern.compile("^NCCL version ([0-9][0-9A-Za-z.\\-]*)");
    private static final byte[] NCCL_TESTS_VERSION = Bytes.ascii("# nccl-tests version ");
    private static final Pattern NCCL_TESTS =
            Pattern.compile("# nccl-tests version (\\S+) nccl-headers=(\\d{1,9}) nccl-library=(\\d{1,9})");

    /** The file's bookkeeping: rank, bytes, fact count, problems. */
    final Reading out;

    final String file;

    // What the log says, handed over as one Facts.Log by facts().
    final java.util.List<CommRank> commRanks = new java.util.ArrayList<>();
    private String ncclVersion;
    private Source ncclVersionSource;
    /** The NCCL library's version as nccl-tests' header gives it: the file's version where NCCL prints none. */
    private String testsLibraryVersion;

    private Source testsLibraryVersionSource;
    final java.util.Map<String, String> env = new java.util.LinkedHashMap<>();
    final java.util.Map<String, Source> envSources = new java.util.LinkedHashMap<>();
    private final java.util.List<Evidence.Warning> warningLines = new java.util.ArrayList<>();
    final java.util.List<Evidence.Finding> findings = new java.util.ArrayList<>();
    /** EMULATOR/ORACLE lines of pathproof's NCCL emulator: how many, the first, and the kernel launches they print. */
    long emulationLines;

    Source emulationFirst;
    final java.util.List<Evidence.Kernel> launches = new java.util.ArrayList<>();
    /** Messages of DDP's own debug log (TORCH_DISTRIBUTED_DEBUG) in this log, in file order. */
    final java.util.List<Evidence.DdpLogMessage> ddpLog = new java.util.ArrayList<>();

    final Integer fileRank;
    long lineNo;
    private int warnings;

    final LinePrefix prefix = new LinePrefix();
    final CommLines comms = new CommLines(this);
    final CollLines colls = new CollLines(this);
    private final EmulatorLines emulatorLines = new EmulatorLines(this);
    private final ConnectorLines connectors = new ConnectorLines(this);
    private final InitLines initLines = new InitLines(this);
    private final TuningTableLines tuningTable = new TuningTableLines(this);
    private final DdpLines ddpLines = new DdpLines(this);

    /**
     * Whether the families read their usual shapes on the bytes (always, but in the test that holds them to the
     * regexes: both paths must give the same facts on every log).
     */
    final boolean bytePaths;

    NcclLogReader(Reading out, Integer fileRank) {
        this(out, fileRank, true);
    }

    NcclLogReader(Reading out, Integer fileRank, boolean bytePaths) {
        this.out = out;
        this.file = out.file;
        this.fileRank = fileRank;
        this.bytePaths = bytePaths;
    }

    /** What the log said, also of a log read only in part. */
    @Override
    public Facts.Log facts() {
        boolean own = ncclVersion != null;
        return new Facts.Log(
                commRanks,
                own ? ncclVersion : testsLibraryVersion,
                own ? ncclVersionSource : testsLibraryVersionSource,
                env,
                envSources,
                warningLines,
                findings,
                emulationLines,
                emulationFirst,
                launches,
                ddpLog);
    }

    /** Reads the whole stream; I/O errors become a problem at the line reached. */
    @Override
    public void read(InputStream in) {
        byte[] buf = new byte[BUFFER];
        int len = 0;
        boolean skipping = false;
        try {
            while (true) {
                int n = in.read(buf, len, buf.length - len);
                if (n < 0) {
                    break;
                }
                out.bytes += n;
                int scanFrom = len;
                len += n;
                int start = 0;
                int i = scanFrom;
                while ((i = Bytes.indexOfByte(buf, i, len, (byte) '\n')) >= 0) {
                    lineNo++;
                    if (skipping) {
                        skipping = false;
                    } else if (i - start > MAX_LINE) {
                        out.problem(lineNo, "line longer than " + MAX_LINE + " bytes skipped");
                    } else {
                        line(buf, start, i);
                    }
                    start = ++i;
                }
                if (start == 0 && len == buf.length) {
                    // One line fills the buffer: skip it to its end, keeping memory constant.
                    if (!skipping) {
                        out.problem(lineNo + 1, "line longer than " + MAX_LINE + " bytes skipped");
                    }
                    skipping = true;
                    len = 0;
                } else {
                    System.arraycopy(buf, start, buf, 0, len - start);
                    len -= start;
                }
            }
            if (len > 0) {
                lineNo++;
                if (!skipping) {
                    if (len > MAX_LINE) {
                        out.problem(lineNo, "line longer than " + MAX_LINE + " bytes skipped");
                    } else {
                        line(buf, 0, len);
                    }
                }
            }
        } catch (IOException e) {
            out.problem(lineNo + 1, "read failed: " + e.getMessage());
        }
        comms.finish();
        ddpLines.finish();
    }

    private void line(byte[] b, int s, int e) {
        if (e > s && b[e - 1] == '\r') {
            e--;
        }
        int m = LinePrefix.marker(b, s, e);
        if (pendingLen >= 0) {
            int head = continuation(b, s, e, m);
            pendingLen = -1;
            if (head > s) {
                if (m < 0) {
                    return;
                }
                s = head;
            }
        }
        if (m < 0) {
            if (Bytes.indexOfByte(b, s, e, (byte) '#') < 0 || !testsHeader(b, s, e)) {
                ddpLines.line(b, s, e);
            } else {
                ddpLines.interrupted();
            }
            return;
        }
        ddpLines.interrupted();
        int next = prefix.nextFragment(b, m + NCCL_.length + 5, e);
        if (next < 0) {
            fragment(b, s, m, e);
            return;
        }
        torn(b, s, m, next, e);
    }

    /**
     * Several NCCL lines on one physical line: several processes wrote into one file at once, or whoever copied the
     * log joined lines (with runs of spaces, or as a console's columns). Each piece is read as a line of its own (its
     * prefix names its process, so no communicator is split); what lies between two pieces (padding, a column's "|")
     * belongs to the join, not to the first piece's text.
     *
     * <p>NCCL ends every line it prints with '\n' (debug.cc:196@v2.22.3-1, the format's last character), so two copies
     * of one line on one physical line are a copy's doing. Copies joined by mere spaces may be two real prints (NCCL
     * prints identical lines, e.g. one TUNING line per call) and are both read; but a piece that ends in a column
     * separator "|" and is repeated byte for byte by the next piece is a console showing the line twice, in two
     * columns ("X | X"): it is read once, from the later copy, whose prefix the separator leaves clean (the earlier may
     * be glued to the console's own column, a timestamp).
     */
    private void torn(byte[] b, int s, int m, int next, int e) {
        int pieces = 0;
        int echoes = 0;
        int from = s;
        while (m >= 0) {
            int end = next < 0 ? e : next;
            if (next >= 0) {
                int text = trimSpaces(b, from, end);
                int cut = text > from && b[text - 1] == '|' ? trimSpaces(b, from, text - 1) : -1;
                if (cut >= 0 && echoedBy(b, from, cut, next, e)) {
                    echoes++;
                    pendingLen = -1;
                    from = next;
                    m = LinePrefix.marker(b, from, e);
                    next = m < 0 ? -1 : prefix.nextFragment(b, m + NCCL_.length + 5, e);
                    continue;
                }
                end = cut >= 0 ? cut : text;
            }
            pendingLen = -1;
            fragment(b, from, m, Math.max(end, m + NCCL_.length + 5));
            pieces++;
            if (next < 0) {
                break;
            }
            from = next;
            m = LinePrefix.marker(b, from, e);
            next = m < 0 ? -1 : prefix.nextFragment(b, m + NCCL_.length + 5, e);
        }
        if (pieces > 1) {
            out.problem(
                    lineNo,
                    "torn line: " + pieces + " NCCL lines in one (processes writing at once, or lines pasted"
                            + " together); each piece was read apart");
        }
        if (echoes > 0) {
            out.problem(
                    lineNo, "console echo: " + echoes + " NCCL line(s) shown twice on one line (\"X | X\"); read once");
        }
    }

    /** The end of {@code b[from, to)} less its trailing spaces and tabs. */
    private static int trimSpaces(byte[] b, int from, int to) {
        while (to > from && (b[to - 1] == ' ' || b[to - 1] == '\t')) {
            to--;
        }
        return to;
    }

    /**
     * Whether the piece at {@code next} (up to the next piece, or the line's end; trailing spaces aside) repeats the end
     * of {@code b[from, cut)} byte for byte, from its NCCL prefix on.
     */
    private boolean echoedBy(byte[] b, int from, int cut, int next, int e) {
        int m2 = LinePrefix.marker(b, next, e);
        int after = m2 < 0 ? -1 : prefix.nextFragment(b, m2 + NCCL_.length + 5, e);
        int end2 = trimSpaces(b, next, after < 0 ? e : after);
        int n = end2 - next;
        return n > 0 && cut - from >= n && java.util.Arrays.equals(b, cut - n, cut, b, next, end2);
    }

    /**
     * A line that was wrapped by whoever posted the log: the last NCCL line of the previous physical line stopped short
     * of its family's shape (a connector line cut after "via"; see {@link ConnectorLines#channelLine}), and this
     * line's text before its first NCCL prefix (the whole line when it has none) completes it. The two are read as one
     * line, of the previous line's number, only when the join is a complete connector line; returns where this line's
     * own text starts then, else {@code s}.
     */
    private int continuation(byte[] b, int s, int e, int m) {
        int x;
        if (m < 0) {
            x = e;
        } else {
            x = prefix.nextFragment(b, s, e);
            if (x < 0 || x > m) {
                return s;
            }
        }
        int headEnd = trimSpaces(b, s, x);
        if (headEnd == s || pendingLen + headEnd - s > MAX_LINE) {
            return s;
        }
        byte[] joined = java.util.Arrays.copyOf(pending, pendingLen + headEnd - s);
        System.arraycopy(b, s, joined, pendingLen, headEnd - s);
        if (!ConnectorLines.isConnection(Bytes.string(joined, 0, joined.length))) {
            return s;
        }
        long here = lineNo;
        lineNo = pendingLine;
        pendingLen = -1;
        info(joined, 0, joined.length);
        lineNo = here;
        out.problem(here, "line continues line " + pendingLine + " (wrapped when posted); read joined to it");
        return x;
    }

    /**
     * The text after "NCCL INFO " of the last line read, kept while it may continue on the next physical line
     * ({@link #incomplete}); {@code pendingLen} is -1 when none is kept.
     */
    private byte[] pending = new byte[256];

    private int pendingLen = -1;
    private long pendingLine;

    /** A family found the line it reads cut short of its shape: keep it for the next physical line. */
    void incomplete(byte[] b, int s, int e) {
        if (e - s > MAX_LINE) {
            return;
        }
        if (pending.length < e - s) {
            pending = new byte[Math.max(e - s, 2 * pending.length)];
        }
        System.arraycopy(b, s, pending, 0, e - s);
        pendingLen = e - s;
        pendingLine = lineNo;
    }

    private void fragment(byte[] b, int s, int m, int e) {
        int after = m + NCCL_.length;
        prefix.parse(b, s, m);
        if (Bytes.startsWith(b, after, e, INFO_)) {
            info(b, after + INFO_.length, e);
        } else if (Bytes.startsWith(b, after, e, WARN_)) {
            warn(Bytes.string(b, after + WARN_.length, e).strip(), warnWhere(b, s, m));
        } else {
            version(Bytes.string(b, m, e));
        }
    }

    /** What follows "NCCL INFO ": each family is recognised on the bytes; only the lines that hold a fact are read. */
    private void info(byte[] b, int s, int e) {
        if (s >= e || colls.read(b, s, e)) {
            return;
        }
        // Kept apart so that the JIT compiles the hot path (COLL, TUNING) as a small unit: with every family inlined
        // into one method, its C2 compilation took over a second of CPU on a 200 MB log, more than it saved.
        other(b, s, e);
    }

    private void other(byte[] b, int s, int e) {
        byte c = b[s];
        if ((c == ' ' || c == 'R' || c == 'E' || c == 'L') && tuningTable.read(b, s, e)) {
            return;
        }
        if (c == 'C'
                && bytePaths
                && Bytes.startsWith(b, s, e, ConnectorLines.CHANNEL_)
                && (connectors.fastConnection(b, s, e) || connectors.fastRingOrder(b, s, e))) {
            return;
        }
        switch (c) {
            case 'C' -> {
                if (Bytes.startsWith(b, s, e, ConnectorLines.CHANNEL_)) {
                    if (connectors.channelLine(Bytes.string(b, s, e))) {
                        incomplete(b, s, e);
                    }
                } else if (Bytes.startsWith(b, s, e, CONNECTED_RINGS)) {
                    context().connectedRings = true;
                    counted();
                } else if (Bytes.startsWith(b, s, e, CONNECTED_TREES)) {
                    context().connectedTrees = true;
                    counted();
                }
            }
            case 'R' -> {
                // "Ring %02d : %d -> %d -> %d" (init.cc:1223@v2.28.9-1) names neighbours, no fact kept: only lines with
                // a
                // "[" (2.5's connector lines) or without " -> " (2.5's ring orders) are read.
                if (Bytes.indexOfByte(b, s, e, (byte) '[') < 0 && Bytes.indexOf(b, s, e, ConnectorLines.ARROW) >= 0) {
                    return;
                }
                if (Bytes.startsWith(b, s, e, RING_) && connectors.channelLine(Bytes.string(b, s, e))) {
                    incomplete(b, s, e);
                }
            }
            case 'T' -> {
                // "Tree %d : …" names neighbours, no fact kept.
                if (!Bytes.startsWith(b, s, e, TREES)) {
                    return;
                }
                initLines.trees(Bytes.string(b, s, e));
            }
            case 'P' -> {
                if (Bytes.startsWith(b, s, e, PATTERN_)) {
                    initLines.graph(b, s, e);
                }
            }
            case 't' -> {
                if (Bytes.startsWith(b, s, e, THRESHOLDS_)) {
                    initLines.threadThresholds(b, s + THRESHOLDS_.length, e);
                }
            }
            case 'N' -> {
                if (Bytes.startsWith(b, s, e, NCCL_VERSION_)) {
                    version(Bytes.string(b, s, e));
                } else if (Bytes.startsWith(b, s, e, NCCL_ENV)) {
                    initLines.env(Bytes.string(b, s, e));
                } else if (Bytes.startsWith(b, s, e, NET_OFI_) && initLines.pluginEnv(Bytes.string(b, s, e))) {
                    return;
                }
            }
            case 'I' -> {
                if (Bytes.startsWith(b, s, e, INIT_TIMINGS)) {
                    initLines.initTimings(b, s, e);
                }
            }
            case 'U' -> {
                if (initLines.network(b, s, e)) {
                    return;
                }
            }
            case 'E', 'O' -> {
                if (Bytes.startsWith(b, s, e, EMULATOR) || Bytes.startsWith(b, s, e, ORACLE)) {
                    emulatorLines.emulator(Bytes.string(b, s, e));
                }
            }
            default -> {}
        }
        // Whatever its first word: a channel-count line, a comm summary or a comm init line (2.30 puts the API's name
        // first: "ncclCommInitRankConfig comm %p … - Init COMPLETE").
        if (Bytes.isDigit(c)) {
            if (Bytes.indexOf(b, s, e, COLL_CHANNELS) >= 0) {
                initLines.channels(b, s, e);
            } else if (Bytes.indexOf(b, s, e, CommLines.INIT_MARK) >= 0) {
                comms.read(b, s, e);
            }
        } else if (Bytes.startsWith(b, s, e, CommLines.COMM_) || Bytes.indexOf(b, s, e, CommLines.INIT_MARK) >= 0) {
            comms.read(b, s, e);
        }
    }

    /**
     * "[%d] %s:%d NCCL WARN " (debug.cc:360@v2.28.9-1), "[%d] %s:%d (%s) NCCL WARN " (debug.cc:345@v2.30.7-1): the
     * file, line and function between the device's bracket and the marker; null when the prefix has none.
     */
    private static String warnWhere(byte[] b, int s, int m) {
        int q = m - 1;
        while (q >= s && b[q] != ']') {
            q--;
        }
        if (q < s || m - q > 256) {
            return null;
        }
        String where = Bytes.string(b, q + 1, m).strip();
        return where.isEmpty() || where.indexOf(':') < 0 ? null : where;
    }

    private void warn(String message, String where) {
        CommRank cr = comms.currentOrNull();
        Integer rank = cr != null ? cr.effectiveRank(fileRank) : comms.rankOnDevice();
        if (rank == null) {
            rank = lineRank();
        }
        if (warnings++ < 1000) {
            warningLines.add(new Evidence.Warning(rank, message, Source.line(file, lineNo), where));
        } else if (warnings == 1001) {
            out.problem(lineNo, "more than 1000 NCCL WARN lines; later ones not kept");
        }
        out.facts++;
    }

    private void version(String text) {
        Matcher m = VERSION.matcher(text);
        if (!m.find()) {
            out.problem(lineNo, "NCCL version line not understood");
            return;
        }
        String v = m.group(1);
        out.facts++;
        if (ncclVersion == null) {
            ncclVersion = v;
            ncclVersionSource = Source.line(file, lineNo);
        } else if (!ncclVersion.equals(v)) {
            findings.add(Evidence.Finding.once(
                    "nccl-version-mismatch",
                    "NCCL version " + v + " here but " + ncclVersion + " earlier in the same file",
                    java.util.List.of(ncclVersionSource, Source.line(file, lineNo))));
        }
    }

    /**
     * nccl-tests' header "# nccl-tests version %s nccl-headers=%d nccl-library=%d" (src/common.cu of NVIDIA/nccl-tests,
     * writeDeviceReport): the first is the tests' own version, the last the loaded library's ncclGetVersion, an
     * NCCL_VERSION_CODE (see {@link #versionCode}). A launcher's tag may precede it.
     */
    private boolean testsHeader(byte[] b, int s, int e) {
        int at = Bytes.indexOf(b, s, e, NCCL_TESTS_VERSION);
        if (at < 0) {
            return false;
        }
        Matcher m = NCCL_TESTS.matcher(Bytes.string(b, at, e));
        if (!m.lookingAt()) {
            out.problem(lineNo, "nccl-tests version line not understood");
            return true;
        }
        String v = versionCode(Integer.parseInt(m.group(3)));
        out.facts++;
        if (testsLibraryVersion == null) {
            testsLibraryVersion = v;
            testsLibraryVersionSource = Source.line(file, lineNo);
        }
        return true;
    }

    /**
     * "2.28.9" of an NCCL_VERSION_CODE: NCCL_VERSION(X,Y,Z) is X*1000+Y*100+Z up to 2.8 and X*10000+Y*100+Z from 2.9 on
     * (nccl.h.in:25@v2.28.9-1), so 22809 is 2.28.9 and 2708 is 2.7.8.
     */
    static String versionCode(int code) {
        if (code >= 10000) {
            return code / 10000 + "." + code % 10000 / 100 + "." + code % 100;
        }
        return code / 1000 + "." + code % 1000 / 100 + "." + code % 100;
    }

    /** A line outside any communicator has no NCCL rank, unless the file is named after one; a launcher tag is not. */
    private Integer lineRank() {
        return fileRank;
    }

    void counted() {
        out.facts++;
    }

    void setInt(String s, java.util.function.IntConsumer c) {
        try {
            c.accept(Integer.parseInt(s));
        } catch (NumberFormatException e) {
            out.problem(lineNo, "number out of range: " + s);
        }
    }

    /** The communicator of an init line without a comm pointer (see the class comment). */
    CommRank context() {
        return comms.context();
    }

    CommRank currentOrNull() {
        return comms.currentOrNull();
    }
}
