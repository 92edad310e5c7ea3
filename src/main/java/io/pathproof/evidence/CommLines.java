package io.pathproof.evidence;

import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Communicators of an NCCL log and the attribution of lines to them (one family of {@link NcclLogReader}): the comm
 * init lines ({@code … comm %p … - Init START|COMPLETE}), the INIT summary ({@code comm %p rank %d nRanks %d …}) and
 * the rule by which a line without a comm pointer finds its communicator (see the reader's class comment).
 */
final class CommLines {
    private static final Pattern SUMMARY = Pattern.compile(
            "^comm (0x[0-9a-fA-F]+|\\(nil\\)) rank (\\d+) nRanks (\\d+) nNodes (\\d+) localRanks (\\d+)");
    /**
     * The init line of every version; a split child's adds "parent %p [splitCount|childCount %d] color %d key %d"
     * after the busId, and from 2.23 on prints no commId and no space before "- Init START" (see {@link #initLine}).
     */
    private static final Pattern INIT = Pattern.compile(
            "comm (0x[0-9a-fA-F]+|\\(nil\\)) rank (\\d+) nranks (\\d+) cudaDev (\\d+)(?: nvmlDev (\\d+))? busId"
                    + " ([0-9a-fA-F]+)(?: parent (0x[0-9a-fA-F]+|\\(nil\\))(?: (?:splitCount|childCount) -?\\d+)?"
                    + " color (-?\\d+) key -?\\d+)?(?: commId (0x[0-9a-fA-F]+))? ?- Init (START|COMPLETE)");

    static final byte[] COMM_ = Bytes.ascii("comm ");
    /** What every init line holds: "- Init " (a split child's START of 2.23 to 2.30 has no space before it). */
    static final byte[] INIT_MARK = Bytes.ascii("- Init ");

    private static final byte[] NIL = Bytes.ascii("(nil)");
    private static final byte[] RANK_ = Bytes.ascii(" rank ");
    private static final byte[] NRANKS_ = Bytes.ascii(" nranks ");
    private static final byte[] NRANKS_SUMMARY = Bytes.ascii(" nRanks ");
    private static final byte[] NNODES_ = Bytes.ascii(" nNodes ");
    private static final byte[] LOCALRANKS_ = Bytes.ascii(" localRanks ");
    private static final byte[] CUDADEV_ = Bytes.ascii(" cudaDev ");
    private static final byte[] NVMLDEV_ = Bytes.ascii(" nvmlDev ");
    private static final byte[] BUSID_ = Bytes.ascii(" busId ");
    private static final byte[] COMMID_ = Bytes.ascii(" commId ");
    private static final byte[] PARENT_ = Bytes.ascii(" parent ");
    private static final byte[] SPLITCOUNT_ = Bytes.ascii(" splitCount ");
    private static final byte[] CHILDCOUNT_ = Bytes.ascii(" childCount ");
    private static final byte[] COLOR_ = Bytes.ascii(" color ");
    private static final byte[] KEY_ = Bytes.ascii(" key ");
    private static final byte[] INIT_START = Bytes.ascii("- Init START");
    private static final byte[] INIT_COMPLETE = Bytes.ascii("- Init COMPLETE");

    private final NcclLogReader r;
    private final LinePrefix p;
    private final LongMap<CommRank> byPtr = new LongMap<>();
    private final LongMap<CommRank> openByThread = new LongMap<>();
    private final LongMap<CommRank> openByDev = new LongMap<>();
    /** Iterated at the end (in HashMap order, as before), so a HashMap; asked only while not empty. */
    private final Map<Long, CommRank> pendingByDev = new HashMap<>();

    private final LongMap<CommRank> lastCompletedByDev = new LongMap<>();
    private final LongMap<Boolean> startSeen = new LongMap<>();
    private long lastPtrKey;
    private CommRank lastPtrComm;

    CommLines(NcclLogReader r) {
        this.r = r;
        this.p = r.prefix;
    }

    /**
     * A line that starts with "comm " or holds " - Init " ({@code b[s, e)}, what follows "NCCL INFO "): the summary or
     * an init line, read on the bytes when it has the usual shape, else by the regexes (which also name what is wrong).
     */
    void read(byte[] b, int s, int e) {
        if (!r.bytePaths) {
            readByRegex(Bytes.string(b, s, e));
            return;
        }
        // A line that starts with "comm " is a summary ("… nRanks …") or an init line ("… nranks …"), never both at its
        // start, so trying the init line first changes nothing. The regexes run only where their literals are.
        if (Bytes.startsWith(b, s, e, COMM_)) {
            if (summaryFast(b, s, e) || initFast(b, s, e)) {
                return;
            }
            if (Bytes.indexOf(b, s, e, NRANKS_SUMMARY) >= 0) {
                Matcher m = SUMMARY.matcher(Bytes.string(b, s, e));
                if (m.find()) {
                    summary(m);
                    return;
                }
            }
            if (Bytes.indexOf(b, s, e, INIT_MARK) >= 0) {
                initLine(Bytes.string(b, s, e));
            }
        } else if (!initFast(b, s, e)) {
            initLine(Bytes.string(b, s, e));
        }
    }

    private void readByRegex(String msg) {
        if (msg.startsWith("comm ")) {
            Matcher m = SUMMARY.matcher(msg);
            if (m.find()) {
                summary(m);
                return;
            }
        }
        initLine(msg);
    }

    // Scratch of the byte-level parse: the field's value, its end.
    private long num;
    private int at;

    /** " NAME %d" at {@code q}: sets {@link #num} and {@link #at}; false unless 1 to 9 digits follow. */
    private boolean field(byte[] b, int q, int e, byte[] name) {
        if (!Bytes.startsWith(b, q, e, name)) {
            return false;
        }
        int v = q + name.length;
        int end = v;
        while (end < e && Bytes.isDigit(b[end])) {
            end++;
        }
        if (end == v || end - v > 9) {
            return false; // none, or maybe out of int range: the regex path says which
        }
        num = Bytes.parseLong(b, v, end);
        at = end;
        return true;
    }

    /** "0x%x" or "(nil)" at {@code q}: sets {@link #num} and {@link #at}. */
    private boolean pointerAt(byte[] b, int q, int e) {
        if (Bytes.startsWith(b, q, e, NIL)) {
            num = 0;
            at = q + NIL.length;
            return true;
        }
        if (q + 2 >= e || b[q] != '0' || b[q + 1] != 'x') {
            return false;
        }
        int end = q + 2;
        while (end < e && Character.digit(b[end], 16) >= 0) {
            end++;
        }
        if (end == q + 2) {
            return false;
        }
        if (end - q - 2 > 16) {
            return false; // as many digits as Long.parseUnsignedLong may or may not read: the regex path decides
        }
        num = Bytes.parseHex(b, q + 2, end);
        at = end;
        return true;
    }

    /** The summary line on the bytes (same fields as {@link #SUMMARY}); false when it has another shape. */
    private boolean summaryFast(byte[] b, int s, int e) {
        if (!pointerAt(b, s + COMM_.length, e)) {
            return false;
        }
        long ptr = num;
        if (!field(b, at, e, RANK_)) {
            return false;
        }
        int rank = (int) num;
        if (!field(b, at, e, NRANKS_SUMMARY)) {
            return false;
        }
        int nRanks = (int) num;
        if (!field(b, at, e, NNODES_)) {
            return false;
        }
        int nNodes = (int) num;
        if (!field(b, at, e, LOCALRANKS_)) {
            return false;
        }
        CommRank cr = bind(ptr, false);
        cr.rank = rank;
        cr.nRanks = nRanks;
        cr.nNodes = nNodes;
        cr.localRanks = (int) num;
        openBySummary(cr);
        cr.facts++;
        r.counted();
        return true;
    }

    /**
     * The init line on the bytes (same fields as {@link #INIT}, at its first "comm "): false when it has another shape
     * or a number that may not fit, and the regex decides.
     */
    private boolean initFast(byte[] b, int s, int e) {
        int c = Bytes.indexOf(b, s, e, COMM_);
        if (c < 0 || !pointerAt(b, c + COMM_.length, e)) {
            return false;
        }
        long ptr = num;
        if (!field(b, at, e, RANK_)) {
            return false;
        }
        int rank = (int) num;
        if (!field(b, at, e, NRANKS_)) {
            return false;
        }
        int nRanks = (int) num;
        if (!field(b, at, e, CUDADEV_)) {
            return false;
        }
        int dev = (int) num;
        int nvml = -1;
        if (field(b, at, e, NVMLDEV_)) {
            nvml = (int) num;
        }
        if (!Bytes.startsWith(b, at, e, BUSID_)) {
            return false;
        }
        int busFrom = at + BUSID_.length;
        int busTo = busFrom;
        while (busTo < e && Character.digit(b[busTo], 16) >= 0) {
            busTo++;
        }
        if (busTo == busFrom) {
            return false;
        }
        at = busTo;
        long parent = -1;
        int color = 0;
        if (Bytes.startsWith(b, at, e, PARENT_)) {
            if (!pointerAt(b, at + PARENT_.length, e)) {
                return false;
            }
            parent = num;
            if (!signed(b, at, e, SPLITCOUNT_)) {
                signed(b, at, e, CHILDCOUNT_);
            }
            if (!signed(b, at, e, COLOR_)) {
                return false;
            }
            color = (int) num;
            if (!signed(b, at, e, KEY_)) {
                return false;
            }
        }
        int idFrom = -1;
        int idTo = -1;
        if (Bytes.startsWith(b, at, e, COMMID_)
                && at + COMMID_.length + 2 < e
                && b[at + COMMID_.length] == '0'
                && b[at + COMMID_.length + 1] == 'x') {
            idFrom = at + COMMID_.length;
            idTo = idFrom + 2;
            while (idTo < e && Character.digit(b[idTo], 16) >= 0) {
                idTo++;
            }
            if (idTo == idFrom + 2) {
                return false;
            }
            at = idTo;
        }
        if (at < e && b[at] == ' ') {
            at++;
        }
        boolean start;
        if (Bytes.startsWith(b, at, e, INIT_START)) {
            start = true;
        } else if (Bytes.startsWith(b, at, e, INIT_COMPLETE)) {
            start = false;
        } else {
            return false;
        }
        CommRank cr = initBind(ptr, start);
        cr.rank = rank;
        cr.nRanks = nRanks;
        cr.cudaDev = dev;
        if (nvml >= 0) {
            cr.nvmlDev = nvml;
        }
        // The same busId and commId as already known (a log re-read, a re-initialised communicator): no new String.
        if (cr.busId == null || !sameAscii(cr.busId, b, busFrom, busTo, false)) {
            cr.busId = Bytes.string(b, busFrom, busTo);
        }
        if (idFrom >= 0 && (cr.commId == null || !sameAscii(cr.commId, b, idFrom, idTo, true))) {
            cr.commId = Bytes.string(b, idFrom, idTo).toLowerCase(java.util.Locale.ROOT);
        }
        if (parent >= 0) {
            split(cr, parent, color);
        }
        initDone(cr, start);
        return true;
    }

    /**
     * " NAME %d" (signed, within int) at {@code q}: sets {@link #num} and {@link #at}; false otherwise (then the regex
     * path decides, and names a number out of range).
     */
    private boolean signed(byte[] b, int q, int e, byte[] name) {
        if (!Bytes.startsWith(b, q, e, name)) {
            return false;
        }
        int v = q + name.length;
        int end = Bytes.digitsEnd(b, v, e);
        long x = Bytes.parseSigned(b, v, end);
        if (x == Bytes.NONE || x < Integer.MIN_VALUE || x > Integer.MAX_VALUE) {
            return false;
        }
        num = x;
        at = end;
        return true;
    }

    /**
     * A child of ncclCommSplit: from 2.23 on its init lines name no commId, so that it would otherwise join another
     * communicator of its size (its parent's, when the color takes every rank). Its ranks share the parent's commId and
     * the color: that is the child's name where the parent's init line is in the log (it precedes the child's).
     */
    private void split(CommRank cr, long parent, int color) {
        CommRank pc = byPtr.get(ptrKey(parent));
        cr.splitOf = pc != null && pc != cr && pc.commId != null ? pc.commId : null;
        cr.splitColor = color;
    }

    /** Whether {@code s} is {@code b[from, to)} (lower-cased first when {@code lower}). */
    private static boolean sameAscii(String s, byte[] b, int from, int to, boolean lower) {
        if (s.length() != to - from) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            int c = b[from + i];
            if (lower && c >= 'A' && c <= 'Z') {
                c += 'a' - 'A';
            }
            if (s.charAt(i) != c) {
                return false;
            }
        }
        return true;
    }

    private void summary(Matcher m) {
        long ptr = pointer(m.group(1));
        CommRank cr = bind(ptr, false);
        r.setInt(m.group(2), v -> cr.rank = v);
        r.setInt(m.group(3), v -> cr.nRanks = v);
        r.setInt(m.group(4), v -> cr.nNodes = v);
        r.setInt(m.group(5), v -> cr.localRanks = v);
        openBySummary(cr);
        cr.facts++;
        r.counted();
    }

    /**
     * "comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init START|COMPLETE"
     * (init.cc:1434@v2.22.3-1 and :1573@v2.21.5-1; init.cc:1945@v2.30.7-1 with the API name first, as :1429@v2.26.2-1
     * and :1469@v2.27.5-1); 2.5 has neither nvmlDev nor commId
     * (init.cc:746@v2.5.7-1). A child of ncclCommSplit prints "… busId %lx parent %p color %d key %d commId 0x%llx -
     * Init START|COMPLETE" in 2.21 and 2.22 (init.cc:1541/1570@v2.21.5-1, :1401/1431@v2.22.3-1), without the commId
     * and with "key %d- Init START" in 2.23 (init.cc:1440/1477@v2.23.4-1), with "splitCount %d" before the color from
     * 2.24 (init.cc:1561/1593@v2.28.9-1) and "childCount %d" from 2.29 (init.cc:1675/1722@v2.29.7-1,
     * :1886/1938@v2.30.7-1).
     */
    private void initLine(String msg) {
        Matcher m = INIT.matcher(msg);
        if (!m.find()) {
            if (msg.contains("- Init COMPLETE") || msg.contains("- Init START")) {
                r.out.problem(r.lineNo, "comm init line not understood");
            }
            return;
        }
        boolean start = m.group(10).equals("START");
        CommRank cr = initBind(pointer(m.group(1)), start);
        r.setInt(m.group(2), v -> cr.rank = v);
        r.setInt(m.group(3), v -> cr.nRanks = v);
        r.setInt(m.group(4), v -> cr.cudaDev = v);
        if (m.group(5) != null) {
            r.setInt(m.group(5), v -> cr.nvmlDev = v);
        }
        cr.busId = m.group(6);
        if (m.group(9) != null) {
            cr.commId = m.group(9).toLowerCase(java.util.Locale.ROOT);
        }
        if (m.group(7) != null) {
            r.setInt(m.group(8), v -> split(cr, pointer(m.group(7)), v));
        }
        initDone(cr, start);
    }

    private CommRank initBind(long ptr, boolean start) {
        if (start) {
            startSeen.put(p.processKey, Boolean.TRUE);
            epoch++;
        }
        return bind(ptr, start);
    }

    /**
     * The summary line ("comm %p rank %d nRanks %d nNodes %d localRanks %d …", init.cc:1160@v2.21.5-1) comes before the
     * ring, Trees and connection lines of its init, in every version (after its Init START where one is printed). A
     * log that starts after the Init START (a posted excerpt, NCCL_DEBUG turned on by a later process) or of a version
     * that prints none has no other anchor: so the communicator it names is the open one on its thread and device,
     * unless one is open there already, until its Init COMPLETE. Before, such lines made a second communicator of
     * nobody, and the named one stayed without its trees and connections.
     */
    private void openBySummary(CommRank cr) {
        if (openByThread.get(p.threadKey) == null) {
            openByThread.put(p.threadKey, cr);
            epoch++;
        }
        if (openByDev.get(p.devKey) == null) {
            openByDev.put(p.devKey, cr);
            epoch++;
        }
    }

    private void initDone(CommRank cr, boolean start) {
        if (!start) {
            if (openByThread.get(p.threadKey) == cr) {
                openByThread.remove(p.threadKey);
                epoch++;
            }
            if (openByDev.get(p.devKey) == cr) {
                openByDev.remove(p.devKey);
                epoch++;
            }
            lastCompletedByDev.put(p.devKey, cr);
            epoch++;
        }
        cr.facts++;
        r.counted();
    }

    private static long pointer(String p) {
        if (p.startsWith("(")) {
            return 0;
        }
        try {
            return Long.parseUnsignedLong(p.substring(2), 16);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** Names the communicator (process, ptr); lines read before on this device join it. */
    private CommRank bind(long ptr, boolean start) {
        long key = ptrKey(ptr);
        CommRank cr = byPtr.get(key);
        CommRank pending = pendingByDev.isEmpty() ? null : pendingByDev.remove(p.devKey);
        epoch++;
        if (cr == null) {
            if (pending != null && !pending.bound()) {
                cr = pending;
                pending = null;
            } else {
                cr = newRank();
            }
            cr.ptr = ptr;
            byPtr.put(key, cr);
            lastPtrComm = null;
        }
        if (pending != null && !pending.bound()) {
            cr.absorb(pending);
            r.commRanks.remove(pending);
        }
        if (start) {
            openByThread.put(p.threadKey, cr);
            openByDev.put(p.devKey, cr);
            epoch++;
        }
        decorate(cr);
        return cr;
    }

    CommRank byPointer(long ptr) {
        long key = ptrKey(ptr);
        if (lastPtrComm != null && key == lastPtrKey) {
            return lastPtrComm;
        }
        CommRank cr = byPtr.get(key);
        if (cr == null) {
            cr = newRank();
            cr.ptr = ptr;
            byPtr.put(key, cr);
            decorate(cr);
        }
        lastPtrKey = key;
        lastPtrComm = cr;
        return cr;
    }

    private long ptrKey(long ptr) {
        return p.processKey * 0x9E3779B97F4A7C15L + ptr;
    }

    private CommRank newRank() {
        CommRank cr = new CommRank(p.processKey, Source.line(r.file, r.lineNo));
        r.commRanks.add(cr);
        return cr;
    }

    private void decorate(CommRank cr) {
        if (cr.host == null && p.hostFrom >= 0) {
            cr.host = p.host();
            cr.pid = p.pid > Integer.MAX_VALUE ? null : (int) p.pid;
        }
        if (cr.cudaDev == null && p.cudaDev >= 0) {
            cr.cudaDev = p.cudaDev;
        }
        if (cr.launcherLabel == null) {
            cr.launcherLabel = p.launcherLabel;
        }
    }

    /** Bumped whenever the maps that {@link #currentOrNull} reads change, so that its answer can be reused. */
    private long epoch;

    private long cachedEpoch = -1;
    private long cachedThread;
    private long cachedDev;
    private CommRank cached;

    CommRank currentOrNull() {
        // Init lines come in runs from one thread: the same question, the same answer, without boxing four map keys.
        if (cachedEpoch == epoch && cachedThread == p.threadKey && cachedDev == p.devKey) {
            return cached;
        }
        CommRank cr = lookUp();
        cachedEpoch = epoch;
        cachedThread = p.threadKey;
        cachedDev = p.devKey;
        cached = cr;
        return cr;
    }

    private CommRank lookUp() {
        CommRank cr = openByThread.get(p.threadKey);
        if (cr == null) {
            cr = openByDev.get(p.devKey);
        }
        if (cr == null && !pendingByDev.isEmpty()) {
            cr = pendingByDev.get(p.devKey);
        }
        if (cr == null && startSeen.containsKey(p.processKey)) {
            cr = lastCompletedByDev.get(p.devKey);
        }
        return cr;
    }

    /** The communicator an init line without a comm pointer belongs to (see the class comment). */
    CommRank context() {
        return counted(currentOrNull());
    }

    /** The line's communicator rank, a new one waiting on the device for its comm line where there is none. */
    private CommRank counted(CommRank found) {
        CommRank cr = found;
        if (cr == null) {
            cr = newRank();
            pendingByDev.put(p.devKey, cr);
            epoch++;
        }
        decorate(cr);
        cr.facts++;
        return cr;
    }

    /**
     * The communicator of a line that commAlloc prints before its Init START on the same thread ("Using network %s",
     * init.cc:428@v2.28.9-1, Init START at :1574; init.cc:335 and :1394@v2.19.3-1): the one open on the thread (a
     * summary line opened it), else the one that waits on the device for its comm line. Never the last one completed
     * on the device, which {@link #context} would give once an Init START was seen: the line is the next one's.
     */
    CommRank beforeStart() {
        CommRank cr = openByThread.get(p.threadKey);
        if (cr == null && !pendingByDev.isEmpty()) {
            cr = pendingByDev.get(p.devKey);
        }
        return counted(cr);
    }

    /**
     * The NCCL rank of the line's process on its device, where every communicator named there has the same (a WARN
     * after init, from a proxy thread, of a version that prints no Init START, has no open communicator): else null.
     */
    Integer rankOnDevice() {
        if (p.processKey == 0 || p.cudaDev < 0) {
            return null;
        }
        Integer rank = null;
        for (CommRank cr : r.commRanks) {
            if (cr.processKey == p.processKey && cr.rank != null && cr.cudaDev != null && cr.cudaDev == p.cudaDev) {
                if (rank != null && !rank.equals(cr.rank)) {
                    return null;
                }
                rank = cr.rank;
            }
        }
        return rank;
    }

    /** Lines that waited for a comm line that never came join the last communicator completed on their device. */
    void finish() {
        for (Map.Entry<Long, CommRank> e : pendingByDev.entrySet()) {
            CommRank pending = e.getValue();
            CommRank last = lastCompletedByDev.get(e.getKey());
            if (!pending.bound() && last != null) {
                last.absorb(pending);
                r.commRanks.remove(pending);
            }
        }
        r.commRanks.removeIf(cr -> cr.facts == 0 && !cr.bound());
    }
}
