package io.pathproof.evidence;

import io.pathproof.nccl.NcclAlgorithm;
import io.pathproof.nccl.NcclProtocol;
import java.util.Arrays;

/**
 * The lines NCCL prints per collective call (one family of {@link NcclLogReader}): the COLL (enqueue) line of every
 * rank and the TUNING line of rank 0, read on the bytes token by token and aggregated per signature, so that memory
 * does not grow with the log.
 */
final class CollLines {
    private static final byte[] OPCOUNT = Bytes.ascii(": opCount ");
    private static final byte[] COUNT = Bytes.ascii(" count ");
    private static final byte[] DATATYPE = Bytes.ascii(" datatype ");
    private static final byte[] OP = Bytes.ascii(" op ");
    private static final byte[] COMM = Bytes.ascii(" comm ");
    private static final byte[] SENDBUFF = Bytes.ascii(" sendbuff ");
    private static final byte[] RECVBUFF = Bytes.ascii(" recvbuff ");
    private static final byte[] ROOT = Bytes.ascii(" root ");
    private static final byte[] NRANKS_SP = Bytes.ascii(" [nranks=");
    static final byte[] BYTES_ALGO = Bytes.ascii(" Bytes -> Algo ");
    private static final byte[] PROTO = Bytes.ascii(" proto ");
    private static final byte[] TIME = Bytes.ascii(" time ");
    private static final byte[] CHANNEL_LO_HI = Bytes.ascii(" channel{Lo..Hi}={");
    private static final byte[] DOTS = Bytes.ascii("..");
    private static final byte[] COLON_SPACE = Bytes.ascii(": ");
    private static final byte[] NIL = Bytes.ascii("(nil)");

    /**
     * Algorithm and protocol names by NCCL's id, in the upper-case spelling the ≥ 2.24 TUNING line prints; matched
     * against the line's bytes without making a String.
     */
    private static final String[] ALGORITHMS =
            Arrays.stream(NcclAlgorithm.values()).map(NcclAlgorithm::name).toArray(String[]::new);

    private static final String[] PROTOCOLS =
            Arrays.stream(NcclProtocol.values()).map(NcclProtocol::name).toArray(String[]::new);

    /** Collective names as ncclFuncToString prints them; interned so that the hot path makes no String. */
    private static final String[] OPS = {
        "AllReduce",
        "AllGather",
        "ReduceScatter",
        "Broadcast",
        "Reduce",
        "Send",
        "Recv",
        "AllToAll",
        "Gather",
        "Scatter",
        "SendRecv",
        "AlltoAll"
    };

    private static final byte[][] OP_BYTES = new byte[OPS.length][];

    static {
        for (int i = 0; i < OPS.length; i++) {
            OP_BYTES[i] = Bytes.ascii(OPS[i]);
        }
    }

    private final NcclLogReader r;
    /** The communicator of each thread's last COLL line: its TUNING and launch lines follow it on that thread. */
    final LongMap<CommRank> lastCollByThread = new LongMap<>();

    private long lastCollThread;
    private CommRank lastCollComm;
    private final CommRank.CollKey collProbe = new CommRank.CollKey();
    private final CommRank.TuneKey tuneProbe = new CommRank.TuneKey();
    /** The COLL line being read: its fields, and the walk's position in its bytes (no allocation per line). */
    private long collCount;

    private long collDatatype;
    private long collRedOp;
    private long collPointer;
    private long collNRanks;
    private int at;

    CollLines(NcclLogReader r) {
        this.r = r;
    }

    /**
     * Reads {@code b[s, e)} (what follows "NCCL INFO ") when it is a COLL or a TUNING line; false when it is neither
     * (then another family looks at it).
     */
    boolean read(byte[] b, int s, int e) {
        byte c = b[s];
        if (c >= 'A' && c <= 'Z') {
            int opEnd = s;
            while (opEnd < e && ((b[opEnd] | 0x20) >= 'a' && (b[opEnd] | 0x20) <= 'z')) {
                opEnd++;
            }
            if (Bytes.startsWith(b, opEnd, e, OPCOUNT)) {
                coll(b, s, opEnd, e);
                return true;
            }
            if (Bytes.startsWith(b, opEnd, e, COLON_SPACE) && opEnd + 2 < e && Bytes.isDigit(b[opEnd + 2])) {
                int be = Bytes.digitsEnd(b, opEnd + 2, e);
                if (Bytes.startsWith(b, be, e, BYTES_ALGO)) {
                    tuning(b, s, opEnd, opEnd + 2, e);
                    return true;
                }
            }
        } else if (Bytes.isDigit(c)) {
            int be = Bytes.digitsEnd(b, s, e);
            if (Bytes.startsWith(b, be, e, BYTES_ALGO)) {
                tuning(b, -1, -1, s, e);
                return true;
            }
        }
        return false;
    }

    /**
     * {@code %s: opCount %lx sendbuff %p recvbuff %p count %zu datatype %d op %d root %d comm %p [nranks=%d] stream %p}
     * (enqueue.cc:2065@v2.22.3-1, enqueue.cc:3151@v2.30.7-1; the same since 2.5: enqueue.cc:2022@v2.21.5-1 prints the
     * count with {@code %zi}, enqueue.cc:2289@v2.26.2-1, enqueue.cc:2422@v2.27.3-1 and @v2.27.5-1). Walked token by
     * token, no search.
     */
    private void coll(byte[] b, int s, int opEnd, int e) {
        int opCountFrom = opEnd + OPCOUNT.length;
        int opCountEnd = Bytes.tokenEnd(b, opCountFrom, e);
        collFields(b, opCountEnd, e);
        if (!collUnderstood()) {
            r.out.problem(
                    r.lineNo,
                    "COLL line not understood (expected opCount … count … datatype … op … comm … [nranks=…])");
            return;
        }
        CommRank cr = collComm();
        CommRank.CollKey k = collProbe;
        k.op = op(b, s, opEnd);
        k.count = collCount;
        k.datatype = (int) collDatatype;
        k.redOp = (int) collRedOp;
        k.nRanks = (int) collNRanks;
        lastEnqueueThread = r.prefix.threadKey;
        lastEnqueueOp = k.op;
        lastEnqueueCount = collCount;
        lastEnqueueDatatype = (int) collDatatype;
        CommRank.Agg a = cr.colls.get(k);
        if (a == null) {
            cr.colls.put(
                    k.copy(),
                    new CommRank.Agg(Source.line(r.file, r.lineNo), Bytes.string(b, opCountFrom, opCountEnd), 1));
        } else {
            a.n++;
        }
        cr.facts++;
        r.out.facts++;
    }

    /**
     * Walks the COLL line's tokens after its opCount from {@code q} into {@link #collCount} … {@link #collNRanks}, in
     * the order NCCL prints them; a field past the first token out of place stays {@link Bytes#NONE}.
     */
    private void collFields(byte[] b, int q, int e) {
        collCount = Bytes.NONE;
        collDatatype = Bytes.NONE;
        collRedOp = Bytes.NONE;
        collPointer = Bytes.NONE;
        collNRanks = Bytes.NONE;
        at = q;
        if (!skip(b, SENDBUFF, e) || !skip(b, RECVBUFF, e) || !Bytes.startsWith(b, at, e, COUNT)) {
            return;
        }
        collCount = number(b, COUNT, e);
        if (!Bytes.startsWith(b, at, e, DATATYPE)) {
            return;
        }
        collDatatype = number(b, DATATYPE, e);
        if (!Bytes.startsWith(b, at, e, OP)) {
            return;
        }
        collRedOp = number(b, OP, e);
        if (!skip(b, ROOT, e) || !Bytes.startsWith(b, at, e, COMM)) {
            return;
        }
        int v = at + COMM.length;
        at = Bytes.tokenEnd(b, v, e);
        collPointer = Bytes.startsWith(b, v, at, NIL) ? 0 : Bytes.parseHex(b, v, at);
        if (Bytes.startsWith(b, at, e, NRANKS_SP)) {
            v = at + NRANKS_SP.length;
            at = Bytes.digitsEnd(b, v, e);
            collNRanks = at < e && b[at] == ']' ? Bytes.parseLong(b, v, at) : Bytes.NONE;
        }
    }

    /** Steps over {@code key} and the token after it when the line has {@code key} at {@link #at}. */
    private boolean skip(byte[] b, byte[] key, int e) {
        if (!Bytes.startsWith(b, at, e, key)) {
            return false;
        }
        at = Bytes.tokenEnd(b, at + key.length, e);
        return true;
    }

    /** The decimal token after {@code key} at {@link #at}, {@link #at} moved past it. */
    private long number(byte[] b, byte[] key, int e) {
        int v = at + key.length;
        at = Bytes.tokenEnd(b, v, e);
        return Bytes.parseLong(b, v, at);
    }

    private boolean collUnderstood() {
        return collCount != Bytes.NONE
                && collDatatype != Bytes.NONE
                && collRedOp != Bytes.NONE
                && collPointer != Bytes.NONE
                && collNRanks != Bytes.NONE
                && collDatatype <= Integer.MAX_VALUE
                && collRedOp <= Integer.MAX_VALUE
                && collNRanks <= Integer.MAX_VALUE;
    }

    /** The communicator the COLL line names, now its thread's last: its TUNING and launch lines follow. */
    private CommRank collComm() {
        CommRank cr = r.comms.byPointer(collPointer);
        if (cr.nRanks == null) {
            cr.nRanks = (int) collNRanks;
        }
        if (r.prefix.threadKey != lastCollThread || cr != lastCollComm) {
            lastCollByThread.put(r.prefix.threadKey, cr);
            lastCollThread = r.prefix.threadKey;
            lastCollComm = cr;
        }
        return cr;
    }

    /**
     * TUNING, three formats: {@code %ld Bytes -> Algo %d proto %d time %f} (enqueue.cc:1534@v2.21.5-1,
     * enqueue.cc:1613@v2.22.3-1), the same with {@code %s: } first (enqueue.cc:1855@v2.23.4-1), and {@code %s: %ld Bytes
     * -> Algo %s proto %s channel{Lo..Hi}={%d..%d}} (enqueue.cc:678@v2.24.3-1, :702@v2.26.2-1, :748@v2.27.3-1 and
     * @v2.27.5-1, :741@v2.28.9-1, :822@v2.30.7-1).
     */
    private void tuning(byte[] b, int opFrom, int opTo, int bytesFrom, int e) {
        CommRank.TuneKey k = tuneProbe;
        int be = Bytes.digitsEnd(b, bytesFrom, e);
        long bytes = Bytes.parseLong(b, bytesFrom, be);
        int a0 = be + BYTES_ALGO.length;
        int aEnd = Bytes.tokenEnd(b, a0, e);
        boolean ok = bytes != Bytes.NONE && Bytes.startsWith(b, aEnd, e, PROTO);
        int p0 = aEnd + PROTO.length;
        int pEnd = ok ? Bytes.tokenEnd(b, p0, e) : e;
        k.op = opFrom < 0 ? null : op(b, opFrom, opTo);
        k.bytes = bytes;
        k.timeScale = -1;
        k.timeUnscaled = 0;
        k.channelLo = -1;
        k.channelHi = -1;
        if (ok) {
            k.algorithmId = nameOrId(b, a0, aEnd, ALGORITHMS);
            k.protocolId = nameOrId(b, p0, pEnd, PROTOCOLS);
            k.algorithm = k.algorithmId >= 0 ? ALGORITHMS[k.algorithmId] : Bytes.string(b, a0, aEnd);
            k.protocol = k.protocolId >= 0 ? PROTOCOLS[k.protocolId] : Bytes.string(b, p0, pEnd);
            if (Bytes.startsWith(b, pEnd, e, TIME)) {
                ok = time(b, pEnd + TIME.length, e, k);
            } else if (Bytes.startsWith(b, pEnd, e, CHANNEL_LO_HI)) {
                int l0 = pEnd + CHANNEL_LO_HI.length;
                int lEnd = Bytes.digitsEnd(b, l0, e);
                long lo = Bytes.parseLong(b, l0, lEnd);
                long hi = Bytes.NONE;
                if (Bytes.startsWith(b, lEnd, e, DOTS)) {
                    int hEnd = Bytes.digitsEnd(b, lEnd + 2, e);
                    hi = Bytes.parseLong(b, lEnd + 2, hEnd);
                    ok = hEnd < e && b[hEnd] == '}';
                } else {
                    ok = false;
                }
                ok &= lo != Bytes.NONE && hi != Bytes.NONE && lo <= 4096 && hi <= 4096;
                if (ok) {
                    k.channelLo = (int) lo;
                    k.channelHi = (int) hi;
                }
            } else {
                ok = false;
            }
        }
        if (!ok) {
            r.out.problem(
                    r.lineNo, "TUNING line not understood (expected Bytes -> Algo … proto … time|channel{Lo..Hi})");
            return;
        }
        CommRank cr = lastCollByThread.get(r.prefix.threadKey);
        if (cr == null) {
            cr = r.context();
        }
        cr = rankZero(cr);
        lastTuneOp = k.op;
        lastTuneThread = r.prefix.threadKey;
        CommRank.Agg a = cr.tuning.get(k);
        if (a == null) {
            cr.tuning.put(k.copy(), new CommRank.Agg(Source.line(r.file, r.lineNo), null, 1));
        } else {
            a.n++;
        }
        cr.facts++;
        r.out.facts++;
    }

    /**
     * NCCL prints TUNING only on rank 0 of a communicator ({@code if (comm->rank == 0)}: enqueue.cc:1613@v2.22.3-1,
     * enqueue.cc:1855@v2.23.4-1, enqueue.cc:740@v2.28.9-1). When one process drives several GPUs the thread's last COLL
     * line may be another rank's: the line goes to rank 0 of the same communicator (same commId, else same process and
     * size) when this file holds it.
     */
    private CommRank rankZero(CommRank cr) {
        if (cr.rank == null || cr.rank == 0) {
            return cr;
        }
        if (cr == lastZeroFrom) {
            return lastZeroTo;
        }
        CommRank zero = cr;
        for (CommRank o : r.commRanks) {
            if (o.rank != null
                    && o.rank == 0
                    && o != cr
                    && (cr.commId != null
                            ? cr.commId.equals(o.commId)
                            : o.commId == null
                                    && o.processKey == cr.processKey
                                    && java.util.Objects.equals(o.nRanks, cr.nRanks))) {
                zero = o;
                break;
            }
        }
        lastZeroFrom = cr;
        lastZeroTo = zero;
        return zero;
    }

    private CommRank lastZeroFrom;
    private CommRank lastZeroTo;
    String lastTuneOp;
    long lastTuneThread;
    // The last COLL (enqueue) line per reader: every rank prints it, unlike TUNING (rank 0 only), so an emulator launch
    // line that follows it on the same thread is the kernel of that collective.
    long lastEnqueueThread = Long.MIN_VALUE;
    String lastEnqueueOp;
    long lastEnqueueCount;
    int lastEnqueueDatatype;

    /** "%f": digits, '.', digits, kept exactly as unscaled value and scale. */
    private static boolean time(byte[] b, int s, int e, CommRank.TuneKey k) {
        long v = 0;
        int scale = -1;
        int digits = 0;
        int i = s;
        for (; i < e; i++) {
            byte c = b[i];
            if (Bytes.isDigit(c)) {
                if (++digits > 18) {
                    return false;
                }
                v = v * 10 + (c - '0');
                if (scale >= 0) {
                    scale++;
                }
            } else if (c == '.' && scale < 0) {
                scale = 0;
            } else {
                break;
            }
        }
        if (digits == 0 || (i < e && b[i] != ' ')) {
            return false;
        }
        k.timeUnscaled = v;
        k.timeScale = Math.max(scale, 0);
        return true;
    }

    private static int nameOrId(byte[] b, int s, int e, String[] names) {
        long id = Bytes.parseLong(b, s, e);
        if (id != Bytes.NONE) {
            return id < names.length ? (int) id : -1;
        }
        for (int i = 0; i < names.length; i++) {
            String n = names[i];
            if (n.length() == e - s) {
                boolean eq = true;
                for (int j = 0; j < n.length() && eq; j++) {
                    eq = (b[s + j] | 0x20) == (n.charAt(j) | 0x20);
                }
                if (eq) {
                    return i;
                }
            }
        }
        return -1;
    }

    private static String op(byte[] b, int s, int e) {
        for (int i = 0; i < OPS.length; i++) {
            if (OP_BYTES[i].length == e - s && Bytes.startsWith(b, s, e, OP_BYTES[i])) {
                return OPS[i];
            }
        }
        return Bytes.string(b, s, e);
    }
}
