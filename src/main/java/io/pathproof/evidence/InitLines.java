package io.pathproof.evidence;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The init lines of an NCCL log that describe a communicator (one family of {@link NcclLogReader}): Trees, the graph
 * search's Pattern lines, channel counts, environment echoes, Init timings, thread thresholds. Channel counts, Init
 * timings and thresholds are read on the bytes in their usual shape; any other shape goes to the regex, which decides.
 */
final class InitLines {

    static final Pattern CHANNELS = Pattern.compile(
            "^(\\d+) coll channels, (?:(\\d+) collnet channels, )?(?:(\\d+) nvls channels, )?(\\d+) p2p channels,"
                    + " (\\d+) p2p channels per peer");
    /**
     * "Trees%s" of " [%d] %d/%d/%d->%d->%d" per channel (init.cc:1064@v2.22.3-1, :1226@v2.28.9-1; :1224@v2.21.5-1, :1044@v2.26.2-1,
     * :1054@v2.27.5-1); 2.5 adds "|" and the reverse tree. NCCL cuts the
     * line at its buffer size, so a last, incomplete item is not a tree.
     */
    private static final String TREE_SIDE = "-?\\d+(?:/-?\\d+)*->-?\\d+->-?\\d+(?:/-?\\d+)*";

    static final Pattern TREE_ITEM =
            Pattern.compile("\\[(\\d+)\\] (" + TREE_SIDE + "(?:\\|" + TREE_SIDE + ")?)(?=\\s|$)");
    static final Pattern GRAPH = Pattern.compile(
            "^Pattern (\\d+), crossNic (\\d+), nChannels (\\d+), (?:bw|speed) ([0-9.]+)/([0-9.]+), type (\\S+)/(\\S+),"
                    + " sameChannels (\\d+)");
    /**
     * "%s set by environment to …" (see {@link #env}), or "NCCL_IB_HCA set to %s" (transport/net_ib.cc:702@v2.28.9-1,
     * net_ib/init.cc:318@v2.30.7-1), "NCCL_SOCKET_IFNAME set to %s" (misc/socket.cc:366@v2.28.9-1),
     * "NCCL_OOB_NET_IFNAME set to %s" (bootstrap.cc:504@v2.28.9-1), "NCCL_TUNER_PLUGIN set to %s"
     * (misc/tuner.cc:31@v2.19.3-1): each prints the variable's value as read from the environment.
     */
    static final Pattern ENV = Pattern.compile("^(NCCL_[A-Za-z0-9_]+) set (?:by environment )?to ?(.*)$");

    static final Pattern INIT_TIMINGS =
            Pattern.compile("^Init timings(?: - [^:]+)?: rank (\\d+) nranks (\\d+) total ([0-9.]+) \\((.*)\\)");
    static final Pattern PHASE = Pattern.compile("([A-Za-z]+) ([0-9.]+)");
    static final Pattern INTEGER = Pattern.compile("-?\\d+");

    private static final byte[] COLL_CH = Bytes.ascii(" coll channels, ");
    private static final byte[] COLLNET_CH = Bytes.ascii(" collnet channels, ");
    private static final byte[] NVLS_CH = Bytes.ascii(" nvls channels, ");
    private static final byte[] P2P_CH = Bytes.ascii(" p2p channels, ");
    private static final byte[] P2P_PER_PEER = Bytes.ascii(" p2p channels per peer");
    private static final byte[] TIMINGS_ = Bytes.ascii("Init timings");
    private static final byte[] RANK_ = Bytes.ascii(": rank ");
    private static final byte[] NRANKS_ = Bytes.ascii(" nranks ");
    private static final byte[] TOTAL_ = Bytes.ascii(" total ");
    private static final byte[] DASH = Bytes.ascii(" - ");
    private final NcclLogReader r;

    InitLines(NcclLogReader r) {
        this.r = r;
    }

    void trees(String msg) {
        CommRank cr = r.context();
        // The same Trees line again for this rank (a log concatenated or re-read) gives nothing new: skip the regex.
        if (cr.treeLines.size() < 4096 && !cr.treeLines.add(msg)) {
            r.counted();
            return;
        }
        Integer known = cr.effectiveRank(r.fileRank);
        Matcher m = TREE_ITEM.matcher(msg);
        int n = 0;
        while (m.find()) {
            // "%d/%d/%d->%d->%d" is down/down/down->rank->up (init.cc:1221@v2.28.9-1): the line names its own rank,
            // also
            // where no comm line of its thread came first, and that rank is the communicator's, not the file's.
            Integer own = treeRank(m.group(2));
            if (own != null && own < 0) {
                own = null;
            }
            ownRank(cr, own);
            Integer rank = own != null ? own : known;
            String tree = (rank == null ? "" : "rank " + rank + " ") + "[" + m.group(1) + "] " + m.group(2);
            if (cr.trees.size() < 4096 && !cr.trees.contains(tree)) {
                cr.trees.add(tree);
            }
            n++;
        }
        if (n == 0 && msg.length() > 5) {
            r.out.problem(r.lineNo, "Trees line not understood");
            return;
        }
        r.counted();
    }

    /** The middle number of "x/y/z->R->p" (the first side of 2.5's "…|…"), or null when out of int range. */
    private static Integer treeRank(String tree) {
        int a = tree.indexOf("->");
        int b = tree.indexOf("->", a + 2);
        try {
            return Integer.valueOf(tree.substring(a + 2, b));
        } catch (NumberFormatException | IndexOutOfBoundsException e) {
            return null;
        }
    }

    void graph(String msg) {
        Matcher m = GRAPH.matcher(msg);
        if (!m.find()) {
            r.out.problem(r.lineNo, "Pattern (graph) line not understood");
            return;
        }
        try {
            Evidence.Graph g = new Evidence.Graph(
                    Integer.parseInt(m.group(1)),
                    Integer.parseInt(m.group(2)),
                    Integer.parseInt(m.group(3)),
                    Double.parseDouble(m.group(4)),
                    Double.parseDouble(m.group(5)),
                    m.group(6),
                    m.group(7),
                    Integer.parseInt(m.group(8)),
                    Source.line(r.file, r.lineNo));
            addGraph(g);
        } catch (NumberFormatException ex) {
            r.out.problem(r.lineNo, "Pattern (graph) line has a number out of range");
        }
    }

    private void addGraph(Evidence.Graph g) {
        CommRank cr = r.context();
        boolean seen = false;
        for (Evidence.Graph o : cr.graphs) {
            seen |= o.sameShape(g);
        }
        if (!seen && cr.graphs.size() < 64) {
            cr.graphs.add(g);
        }
        r.counted();
    }

    private static final byte[] CROSSNIC_ = Bytes.ascii(", crossNic ");
    private static final byte[] NCHANNELS_ = Bytes.ascii(", nChannels ");
    private static final byte[] BW_ = Bytes.ascii(", bw ");
    private static final byte[] SPEED_ = Bytes.ascii(", speed ");
    private static final byte[] TYPE_ = Bytes.ascii(", type ");
    private static final byte[] SAME_ = Bytes.ascii(", sameChannels ");
    /** Powers of ten that a double holds exactly (up to 10^22). */
    private static final double[] POW10 = new double[23];

    static {
        POW10[0] = 1;
        for (int i = 1; i < POW10.length; i++) {
            POW10[i] = POW10[i - 1] * 10;
        }
    }

    /**
     * "Pattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s, sameChannels %d" (search.cc:1000@v2.22.3-1;
     * search.cc:1047@v2.21.5-1, :1138@v2.26.2-1, :1127@v2.27.3-1, :1177@v2.27.5-1;
     * "speed" before 2.12) on the bytes: the fields of {@link #GRAPH}; any other shape goes to the regex.
     */
    void graph(byte[] b, int s, int e) {
        if (!r.bytePaths || !graphFast(b, s, e)) {
            graph(Bytes.string(b, s, e));
        }
    }

    private boolean graphFast(byte[] b, int s, int e) {
        if (!int9(b, s + "Pattern ".length(), e) || !Bytes.startsWith(b, at, e, CROSSNIC_)) {
            return false;
        }
        int pattern = (int) num;
        if (!int9(b, at + CROSSNIC_.length, e) || !Bytes.startsWith(b, at, e, NCHANNELS_)) {
            return false;
        }
        int crossNic = (int) num;
        if (!int9(b, at + NCHANNELS_.length, e)) {
            return false;
        }
        int nChannels = (int) num;
        int q = Bytes.startsWith(b, at, e, BW_)
                ? at + BW_.length
                : Bytes.startsWith(b, at, e, SPEED_) ? at + SPEED_.length : -1;
        if (q < 0 || !decimal(b, q, e) || at >= e || b[at] != '/') {
            return false;
        }
        double intra = exactDouble();
        if (Double.isNaN(intra) || !decimal(b, at + 1, e) || !Bytes.startsWith(b, at, e, TYPE_)) {
            return false;
        }
        double inter = exactDouble();
        // "type %s/%s": \S+/\S+ before ", sameChannels": the last '/' of the token splits it, as the regex backtracks.
        int t0 = at + TYPE_.length;
        int t1 = Bytes.indexOf(b, t0, e, SAME_);
        if (Double.isNaN(inter) || t1 < 0) {
            return false;
        }
        int slash = -1;
        for (int i = t0; i < t1; i++) {
            if (b[i] <= ' ') {
                return false;
            }
            if (b[i] == '/') {
                slash = i;
            }
        }
        if (slash <= t0 || slash >= t1 - 1 || !int9(b, t1 + SAME_.length, e)) {
            return false;
        }
        addGraph(new Evidence.Graph(
                pattern,
                crossNic,
                nChannels,
                intra,
                inter,
                Bytes.string(b, t0, slash),
                Bytes.string(b, slash + 1, t1),
                (int) num,
                Source.line(r.file, r.lineNo)));
        return true;
    }

    /**
     * The decimal just read ({@link #num}, {@link #scale}) as the double Double.parseDouble gives: exact when the digits
     * fit in 53 bits and the power of ten is exact (one correctly rounded division); NaN otherwise.
     */
    private double exactDouble() {
        return num < 1L << 53 && scale < POW10.length ? num / POW10[scale] : Double.NaN;
    }

    /**
     * "%d coll channels, %d collnet channels, %d nvls channels, %d p2p channels, %d p2p channels per peer"
     * (init.cc:1234@v2.22.3-1, init.cc:1646@v2.30.7-1; :1297@v2.21.5-1, :1219@v2.26.2-1, :1232@v2.27.5-1); 2.19 has
     * no collnet field (init.cc:1151@v2.19.3-1) and 2.9
     * neither collnet nor nvls (paths.cc:531@v2.9.9-1).
     */
    void channels(String msg) {
        Matcher m = CHANNELS.matcher(msg);
        if (!m.find()) {
            r.out.problem(r.lineNo, "channel-count line not understood");
            return;
        }
        try {
            channelCounts(
                    Integer.parseInt(m.group(1)),
                    m.group(2) == null ? null : Integer.valueOf(m.group(2)),
                    m.group(3) == null ? null : Integer.valueOf(m.group(3)),
                    Integer.parseInt(m.group(4)),
                    Integer.parseInt(m.group(5)));
        } catch (NumberFormatException ex) {
            r.out.problem(r.lineNo, "channel-count line has a number out of range");
        }
    }

    private static final byte[] USING_NETWORK_ = Bytes.ascii("Using network ");

    /**
     * "Using network %s" (init.cc:428@v2.28.9-1, :335@v2.19.3-1, :486@v2.30.7-1): the network NCCL chose for the
     * communicator (IB, Socket, a net plugin's name). Printed by commAlloc before the comm's Init START, so it goes to
     * the communicator that START will name (see {@link CommLines#beforeStart}).
     */
    boolean network(byte[] b, int s, int e) {
        if (!Bytes.startsWith(b, s, e, USING_NETWORK_)) {
            return false;
        }
        String name = Bytes.string(b, s + USING_NETWORK_.length, e).strip();
        if (name.isEmpty()) {
            return false;
        }
        CommRank cr = r.comms.beforeStart();
        cr.network = name;
        r.counted();
        return true;
    }

    /** "%s set by environment to %lld." (param.cc:75@v2.22.3-1, with the period) or "… to %s" (tuning.cc:273@v2.22.3-1). */
    private final java.util.Set<String> envLines = new java.util.HashSet<>();

    void env(String msg) {
        // Every rank echoes the same variables: an identical echo adds no fact and no finding.
        if (envLines.contains(msg)) {
            r.counted();
            return;
        }
        Matcher m = ENV.matcher(msg);
        if (!m.find()) {
            return;
        }
        if (envLines.size() < 4096) {
            envLines.add(msg);
        }
        String value = m.group(2).strip();
        if (value.endsWith(".")
                && INTEGER.matcher(value.substring(0, value.length() - 1)).matches()) {
            value = value.substring(0, value.length() - 1);
        }
        setting(m.group(1), value);
    }

    /**
     * The NCCL variables that aws-ofi-nccl puts into the process's environment before NCCL reads them (NCCL_PROTO=simple
     * where GDR is missing, NCCL_BUFFSIZE, NCCL_TUNER_PLUGIN, NCCL_TOPO_FILE): they change NCCL's choices as a user's
     * setting would, and NCCL may never echo them (it prints "set by environment" only for the variables it reads
     * through its param table, and only in versions that print it). Two shapes:
     * "NET/OFI Adding %s to environment" of "NAME=VALUE" (aws/aws-ofi-nccl include/nccl_ofi_environ.h:194@v1.21.1, since v1.16.0; a
     * variable already set is "Skipping adding %s to environment, already set", :108, and not recorded), and
     * "NET/OFI [Running on %s platform, ]Setting NCCL_TOPO_FILE environment variable to %s" (src/nccl_ofi_rdma.c:446
     * and src/platform-aws.c:563@v1.14.0, setenv with overwrite). "Setting OFI_NCCL_… environment variable to" is the
     * plugin reading its own variable (include/nccl_ofi_param.h:139@v1.14.0), no NCCL setting: only NCCL_ names are
     * kept. Returns whether the line was one of these.
     */
    boolean pluginEnv(String msg) {
        Matcher m = PLUGIN_ENV.matcher(msg);
        if (!m.find()) {
            return false;
        }
        if (envLines.contains(msg)) {
            r.counted();
            return true;
        }
        if (envLines.size() < 4096) {
            envLines.add(msg);
        }
        String name = m.group(1) != null ? m.group(1) : m.group(3);
        String value = (m.group(1) != null ? m.group(2) : m.group(4)).strip();
        setting(name, value);
        return true;
    }

    static final Pattern PLUGIN_ENV = Pattern.compile("^NET/OFI (?:Adding (NCCL_[A-Za-z0-9_]+)=(.*) to environment$"
            + "|(?:Running on .* platform, )?Setting (NCCL_[A-Za-z0-9_]+) environment variable to (.*)$)");

    /** One variable's value on this line: the file's first value kept, a different one a finding. */
    private void setting(String name, String value) {
        Source src = Source.line(r.file, r.lineNo);
        String old = r.env.putIfAbsent(name, value);
        if (old == null) {
            r.envSources.put(name, src);
        } else if (!old.equals(value) && !NcclJoin.NODE_ENV.contains(name)) {
            r.findings.add(Evidence.Finding.once(
                    "env-mismatch",
                    name + " is " + old + " on one rank and " + value + " on another",
                    java.util.List.of(r.envSources.get(name), src)));
        }
        r.counted();
    }

    void initTimings(String msg) {
        Matcher m = INIT_TIMINGS.matcher(msg);
        if (!m.find()) {
            return;
        }
        CommRank cr = r.context();
        ownRank(cr, m.group(1));
        cr.initTotal = new BigDecimal(m.group(3));
        Map<String, BigDecimal> phases = new LinkedHashMap<>();
        Matcher p = PHASE.matcher(m.group(4));
        while (p.find()) {
            phases.put(p.group(1), new BigDecimal(p.group(2)));
        }
        cr.initPhases = phases;
        cr.initSource = Source.line(r.file, r.lineNo);
        r.counted();
    }

    /**
     * "threadThresholds %ld/%ld/%ld | …" (tuning.cc:285@v2.22.3-1; :398@v2.21.5-1, :510@v2.26.2-1, :541@v2.27.5-1): the
     * text after the name, as printed.
     */
    void threadThresholds(byte[] b, int s, int e) {
        CommRank cr = r.context();
        int from = s;
        int to = e;
        boolean ascii = r.bytePaths;
        for (int i = s; i < e && ascii; i++) {
            ascii = b[i] >= 0;
        }
        if (ascii) {
            while (from < to && Character.isWhitespace(b[from])) {
                from++;
            }
            to = thresholdsEnd(b, from, to);
            while (to > from && Character.isWhitespace(b[to - 1])) {
                to--;
            }
            // Every communicator prints the same thresholds again: keep the String already made.
            if (cr.threadThresholds == null || !sameAscii(cr.threadThresholds, b, from, to)) {
                cr.threadThresholds = Bytes.string(b, from, to);
            }
        } else {
            String v = Bytes.string(b, s, e).strip();
            int end = 0;
            while (end < v.length() && isThresholdsChar(v.charAt(end))) {
                end++;
            }
            cr.threadThresholds = v.substring(0, end).strip();
        }
        cr.thresholdsSource = Source.line(r.file, r.lineNo);
        r.counted();
    }

    /**
     * Where the printed thresholds end: NCCL prints only numbers, '/', '|' and spaces there (tuning.cc:285@v2.22.3-1),
     * so anything after (a terminal's padding and the next line's host, pasted as one line) is not part of them.
     */
    private static int thresholdsEnd(byte[] b, int from, int to) {
        int i = from;
        while (i < to && isThresholdsChar((char) b[i])) {
            i++;
        }
        return i;
    }

    private static boolean isThresholdsChar(char c) {
        return (c >= '0' && c <= '9') || c == '/' || c == '|' || c == ' ' || c == '\t';
    }

    private static boolean sameAscii(String str, byte[] b, int from, int to) {
        if (str.length() != to - from) {
            return false;
        }
        for (int i = 0; i < str.length(); i++) {
            if (str.charAt(i) != b[from + i]) {
                return false;
            }
        }
        return true;
    }

    // Scratch of the byte-level parses: a number's value and where it ends.
    private long num;
    private int at;

    /** 1 to 9 digits at {@code q} into {@link #num}/{@link #at}; false otherwise (then the regex decides). */
    private boolean int9(byte[] b, int q, int e) {
        int end = q;
        while (end < e && Bytes.isDigit(b[end])) {
            end++;
        }
        if (end == q || end - q > 9) {
            return false;
        }
        num = Bytes.parseLong(b, q, end);
        at = end;
        return true;
    }

    /** The channel-count line on the bytes, the fields of {@link #CHANNELS}; false when it has another shape. */
    void channels(byte[] b, int s, int e) {
        if (!r.bytePaths || !channelsFast(b, s, e)) {
            channels(Bytes.string(b, s, e));
        }
    }

    private boolean channelsFast(byte[] b, int s, int e) {
        if (!int9(b, s, e) || !Bytes.startsWith(b, at, e, COLL_CH)) {
            return false;
        }
        int coll = (int) num;
        if (!int9(b, at + COLL_CH.length, e)) {
            return false;
        }
        Integer collnet = null;
        Integer nvls = null;
        if (Bytes.startsWith(b, at, e, COLLNET_CH)) {
            collnet = (int) num;
            if (!int9(b, at + COLLNET_CH.length, e)) {
                return false;
            }
        }
        if (Bytes.startsWith(b, at, e, NVLS_CH)) {
            nvls = (int) num;
            if (!int9(b, at + NVLS_CH.length, e)) {
                return false;
            }
        }
        if (!Bytes.startsWith(b, at, e, P2P_CH)) {
            return false;
        }
        int p2p = (int) num;
        if (!int9(b, at + P2P_CH.length, e) || !Bytes.startsWith(b, at, e, P2P_PER_PEER)) {
            return false;
        }
        channelCounts(coll, collnet, nvls, p2p, (int) num);
        return true;
    }

    /** One rank's channel counts, from either reading of the line; a second, different count is a finding. */
    private void channelCounts(int coll, Integer collnet, Integer nvls, int p2p, int perPeer) {
        CommRank cr = r.context();
        if (cr.collChannels != null && cr.collChannels != coll) {
            r.findings.add(Evidence.Finding.once(
                    "channels-changed",
                    "one rank's communicator printed " + cr.collChannels + " and then " + coll + " coll channels",
                    java.util.List.of(cr.channelsSource, Source.line(r.file, r.lineNo))));
        }
        cr.collChannels = coll;
        cr.collnetChannels = collnet;
        cr.nvlsChannels = nvls;
        cr.p2pChannels = p2p;
        cr.p2pPerPeer = perPeer;
        cr.channelsSource = Source.line(r.file, r.lineNo);
        cr.facts++;
        r.counted();
    }

    /** Phase names already made into Strings (the same few in every line: bootstrap, allgathers, topo, …). */
    private final java.util.List<String> phaseNames = new java.util.ArrayList<>();

    /**
     * "Init timings - %s: rank %d nranks %d total %.2f (kernels %.2f, alloc %.2f, bootstrap %.2f, allgathers %.2f, topo
     * %.2f, graphs %.2f, connections %.2f, rest %.2f)" (init.cc:1976@v2.28.9-1; without the API name before 2.26): on
     * the bytes, the fields of {@link #INIT_TIMINGS} and {@link #PHASE}; any other shape goes to the regexes.
     */
    void initTimings(byte[] b, int s, int e) {
        if (!r.bytePaths || !initTimingsFast(b, s, e)) {
            initTimings(Bytes.string(b, s, e));
        }
    }

    private boolean initTimingsFast(byte[] b, int s, int e) {
        int q = s + TIMINGS_.length;
        if (Bytes.startsWith(b, q, e, DASH)) {
            int colon = Bytes.indexOfByte(b, q + DASH.length, e, (byte) ':');
            if (colon <= q + DASH.length) {
                return false;
            }
            q = colon;
        }
        if (!Bytes.startsWith(b, q, e, RANK_) || !digits(b, q + RANK_.length, e)) {
            return false;
        }
        int rankFrom = q + RANK_.length;
        int rankTo = at;
        if (!Bytes.startsWith(b, at, e, NRANKS_)
                || !digits(b, at + NRANKS_.length, e)
                || !Bytes.startsWith(b, at, e, TOTAL_)
                || !decimal(b, at + TOTAL_.length, e)) {
            return false;
        }
        long totalUnscaled = num;
        int totalScale = scale;
        if (at + 1 >= e || b[at] != ' ' || b[at + 1] != '(') {
            return false;
        }
        int open = at + 2;
        int close = e - 1;
        while (close >= open && b[close] != ')') {
            close--;
        }
        if (close < open) {
            return false;
        }
        Map<String, BigDecimal> phases = new LinkedHashMap<>();
        int i = open;
        while (i < close) {
            if (!isLetter(b[i])) {
                i++;
                continue;
            }
            int nameEnd = i;
            while (nameEnd < close && isLetter(b[nameEnd])) {
                nameEnd++;
            }
            int v = nameEnd + 1;
            if (nameEnd < close && b[nameEnd] == ' ' && v < close && (Bytes.isDigit(b[v]) || b[v] == '.')) {
                int vEnd = v;
                while (vEnd < close && (Bytes.isDigit(b[vEnd]) || b[vEnd] == '.')) {
                    vEnd++;
                }
                if (!decimal(b, v, vEnd) || at != vEnd) {
                    return false; // "1.2.3", ".": what BigDecimal makes of it is the regex path's business
                }
                phases.put(phaseName(b, i, nameEnd), BigDecimal.valueOf(num, scale));
                i = vEnd;
            } else {
                i = nameEnd;
            }
        }
        CommRank cr = r.context();
        ownRank(cr, Bytes.string(b, rankFrom, rankTo));
        cr.initTotal = BigDecimal.valueOf(totalUnscaled, totalScale);
        cr.initPhases = phases;
        cr.initSource = Source.line(r.file, r.lineNo);
        r.counted();
        return true;
    }

    /**
     * "Init timings - %s: rank %d nranks %d …" prints comm->rank (init.cc:1605@v2.28.9-1; "Init timings: rank %d",
     * init.cc:1437@v2.22.3-1, the first with the line): the line names its own rank, also where no comm line of its
     * thread came first (a log cut before Init COMPLETE), as a Trees line does. A rank already known is kept.
     */
    private static void ownRank(CommRank cr, String rank) {
        if (rank.length() <= 9) {
            ownRank(cr, Integer.valueOf(rank));
        }
    }

    /** The rank a line names for itself (a Trees line's {@code ->R->}, an Init timings line's): kept where none is known. */
    private static void ownRank(CommRank cr, Integer rank) {
        if (cr.rank == null && rank != null) {
            cr.rank = rank;
        }
    }

    private static boolean isLetter(byte c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
    }

    private String phaseName(byte[] b, int from, int to) {
        for (String n : phaseNames) {
            if (sameAscii(n, b, from, to)) {
                return n;
            }
        }
        String n = Bytes.string(b, from, to);
        if (phaseNames.size() < 64) {
            phaseNames.add(n);
        }
        return n;
    }

    private int scale;

    /** At least one digit at {@code q}: sets {@link #at}. */
    private boolean digits(byte[] b, int q, int e) {
        int end = q;
        while (end < e && Bytes.isDigit(b[end])) {
            end++;
        }
        at = end;
        return end > q;
    }

    /**
     * "%d" or "%d.%d" (at most 18 digits in all) at {@code q}, followed by neither a digit nor '.': its unscaled value
     * and scale in {@link #num}/{@link #scale}, its end in {@link #at}, as {@code new BigDecimal} reads it.
     */
    private boolean decimal(byte[] b, int q, int e) {
        long v = 0;
        int n = 0;
        int sc = -1;
        int i = q;
        for (; i < e; i++) {
            byte c = b[i];
            if (Bytes.isDigit(c)) {
                v = v * 10 + (c - '0');
                n++;
                if (sc >= 0) {
                    sc++;
                }
            } else if (c == '.' && sc < 0 && n > 0) {
                sc = 0;
            } else {
                break;
            }
        }
        if (n == 0 || n > 18 || sc == 0 || (i < e && b[i] == '.')) {
            return false;
        }
        num = v;
        scale = Math.max(sc, 0);
        at = i;
        return true;
    }
}
