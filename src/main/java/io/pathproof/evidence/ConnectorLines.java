package io.pathproof.evidence;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Connector lines ("Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read") and ring-order lines ("Channel 00/24 : 0 1 2 3")
 * of an NCCL log (one family of {@link NcclLogReader}), read on the bytes where they have the usual shape.
 */
final class ConnectorLines {
    private static final Pattern RING_ORDER =
            Pattern.compile("^(?:Channel|Ring) (\\d+)(?:/(\\d+))? :((?: +-?\\d+)+) *$");
    private static final Pattern CONNECTION = Pattern.compile(
            "^(?:Channel|Ring) (\\d+)(?:/(\\d+))? : (\\d+)\\[[^\\]]*\\] -> (\\d+)\\[[^\\]]*\\](?: \\[(send|receive)\\])?"
                    + " via (.+)$");

    private final NcclLogReader r;

    ConnectorLines(NcclLogReader r) {
        this.r = r;
    }

    /**
     * Connector lines: p2p.cc:365-385@v2.22.3-1 (P2P/direct pointer, P2P/CUMEM|MNNVL, P2P/IPC, P2P/indirect, with
     * "/read" and "/CE"), shm.cc:96@v2.22.3-1 (SHM/%s/%s), net.cc:196-236@v2.22.3-1 and net.cc:313@v2.28.9-1
     * (NET/%s/%d then "/GDRDMA", "(PCI)", "/Shared"); 2.5 printed "Ring %02d : … via …" (p2p.cc:158@v2.5.7-1,
     * shm.cc:78@v2.5.7-1 "via direct shared memory"). P2P never carries GDR: GDR is a NET property.
     */
    void connection(Matcher m) {
        long channel = Long.parseLong(m.group(1).length() > 9 ? "-1" : m.group(1));
        long from = m.group(3).length() > 10 ? Long.MAX_VALUE : Long.parseLong(m.group(3));
        long to = m.group(4).length() > 10 ? Long.MAX_VALUE : Long.parseLong(m.group(4));
        classify(m.group(6).strip());
        connection(channel, from, to, m.group(5) == null ? 0 : m.group(5).equals("send") ? 1 : 2);
    }

    private String viaTransport;
    /** A small number per transport name of this file, for the packed connection keys. */
    private int viaTransportId;

    private final java.util.Map<String, Integer> transportIds = new java.util.HashMap<>();
    private boolean viaRead;
    private boolean viaGdr;
    private boolean viaShared;
    /** The PXN proxy rank of the last "via" text, or null (see {@link #classify}). */
    private Integer viaPxn;

    private final byte[] lastVia = new byte[128];
    private int lastViaLen = -1;

    static final byte[] CHANNEL_ = Bytes.ascii("Channel ");
    private static final byte[] COLON_SEP = Bytes.ascii(" : ");
    static final byte[] ARROW = Bytes.ascii(" -> ");
    private static final byte[] SEND = Bytes.ascii(" [send]");
    private static final byte[] RECEIVE = Bytes.ascii(" [receive]");
    private static final byte[] VIA = Bytes.ascii(" via ");

    /**
     * The connector line ("Channel %02d/%d : %d[%x] -> %d[%x] [send] via NET/IB/0", see {@link #connection(Matcher)})
     * read on the bytes, the transport classified once per distinct "via" text; false when the line has another shape
     * (then the regex path decides).
     */
    boolean fastConnection(byte[] b, int s, int e) {
        int p = s + CHANNEL_.length;
        int q = Bytes.digitsEnd(b, p, e);
        if (q == p || q - p > 9) {
            return false;
        }
        long channel = Bytes.parseLong(b, p, q);
        if (q < e && b[q] == '/') {
            q = Bytes.digitsEnd(b, q + 1, e);
        }
        if (!Bytes.startsWith(b, q, e, COLON_SEP)) {
            return false;
        }
        q += COLON_SEP.length;
        int r = Bytes.digitsEnd(b, q, e);
        if (r == q || r - q > 10 || r >= e || b[r] != '[') {
            return false;
        }
        long from = Bytes.parseLong(b, q, r);
        r = Bytes.indexOfByte(b, r, e, (byte) ']');
        if (r < 0 || !Bytes.startsWith(b, r + 1, e, ARROW)) {
            return false;
        }
        q = r + 1 + ARROW.length;
        r = Bytes.digitsEnd(b, q, e);
        if (r == q || r - q > 10 || r >= e || b[r] != '[') {
            return false;
        }
        long to = Bytes.parseLong(b, q, r);
        r = Bytes.indexOfByte(b, r, e, (byte) ']');
        if (r < 0) {
            return false;
        }
        r++;
        int dir = 0;
        if (Bytes.startsWith(b, r, e, SEND)) {
            r += SEND.length;
            dir = 1;
        } else if (Bytes.startsWith(b, r, e, RECEIVE)) {
            r += RECEIVE.length;
            dir = 2;
        }
        if (!Bytes.startsWith(b, r, e, VIA)) {
            return false;
        }
        int v = r + VIA.length;
        int ve = e;
        while (ve > v && (b[ve - 1] == ' ' || b[ve - 1] == '\t')) {
            ve--;
        }
        while (v < ve && b[v] == ' ') {
            v++;
        }
        if (v == ve) {
            return false;
        }
        int n = ve - v;
        if (n != lastViaLen || !java.util.Arrays.equals(b, v, ve, lastVia, 0, n)) {
            classify(Bytes.string(b, v, ve));
            if (n <= lastVia.length) {
                System.arraycopy(b, v, lastVia, 0, n);
                lastViaLen = n;
            } else {
                lastViaLen = -1;
            }
        }
        connection(channel, from, to, dir);
        return true;
    }

    /**
     * "Channel %02d/%02d : r r r …" (rings.cc:47@v2.28.9-1, :41@v2.26.2-1 and @v2.27.5-1 with {@code " %*d"};
     * rings.cc:18,35@v2.21.5-1 with {@code " %3d"}) on the bytes; false for any other shape.
     */
    boolean fastRingOrder(byte[] b, int s, int e) {
        int p = s + CHANNEL_.length;
        int q = Bytes.digitsEnd(b, p, e);
        if (q == p || q - p > 9 || q >= e || b[q] != '/') {
            return false;
        }
        int t = Bytes.digitsEnd(b, q + 1, e);
        if (t == q + 1 || t - q > 10 || !Bytes.startsWith(b, t, e, RING_COLON)) {
            return false;
        }
        int i = t + RING_COLON.length;
        int items = 0;
        while (i < e) {
            if (b[i] == ' ') {
                i++;
            } else if (Bytes.isDigit(b[i]) || (b[i] == '-' && i + 1 < e && Bytes.isDigit(b[i + 1]))) {
                i = Bytes.digitsEnd(b, i + 1, e);
                items++;
            } else {
                return false;
            }
        }
        if (items == 0) {
            return false;
        }
        int ch = (int) Bytes.parseLong(b, p, q);
        CommRank cr = r.context();
        if (!cr.rings.containsKey(ch)) {
            StringBuilder order = new StringBuilder();
            for (int k = t + RING_COLON.length; k < e; ) {
                if (b[k] == ' ') {
                    k++;
                    continue;
                }
                int end = Bytes.digitsEnd(b, k + 1, e);
                if (order.length() > 0) {
                    order.append(' ');
                }
                order.append(new String(b, k, end - k, java.nio.charset.StandardCharsets.ISO_8859_1));
                k = end;
            }
            cr.rings.put(ch, order.toString());
        }
        if (cr.ringsSource == null) {
            cr.ringsSource = Source.line(r.file, r.lineNo);
        }
        if (cr.ringTotal == null) {
            cr.ringTotal = (int) Bytes.parseLong(b, q + 1, t);
            cr.ringTotalSource = Source.line(r.file, r.lineNo);
        }
        r.counted();
        return true;
    }

    private static final byte[] RING_COLON = Bytes.ascii(" :");

    /**
     * The start of a connector line ("Channel %02d/%d : %d[%d] -> …", see {@link #connection(Matcher)}) up to the
     * first rank: a line that has it but not the rest was cut short (wrapped when the log was posted).
     */
    private static final Pattern CONNECTION_START = Pattern.compile("^(?:Channel|Ring) \\d+(?:/\\d+)? : \\d+\\[");

    /**
     * Whether {@code msg} is a whole connector line through a transport NCCL names: P2P/ (p2p.cc:386@v2.28.9-1), SHM/
     * (shm.cc:128@v2.28.9-1), NET/ (net.cc:313,359@v2.28.9-1), COLLNET/ ("CollNet" lines, coll_net.cc:182@v2.28.9-1,
     * are not Channel lines; older ones were), "direct shared memory" (shm.cc:78@v2.5.7-1). The regex of
     * {@link #CONNECTION} takes any text after "via"; a line joined to its continuation must name one of these.
     */
    static boolean isConnection(String msg) {
        Matcher m = CONNECTION.matcher(msg);
        return m.find() && KNOWN_VIA.matcher(m.group(6)).lookingAt();
    }

    private static final Pattern KNOWN_VIA = Pattern.compile("(?:P2P|SHM|NET|COLLNET)/|direct shared memory");

    /**
     * A Channel/Ring line not read on the bytes: connector or ring order by the regexes, else no fact. Returns true
     * when it is a connector line cut short (its start without its "via" transport), which the next physical line
     * may complete.
     */
    boolean channelLine(String msg) {
        Matcher m = CONNECTION.matcher(msg);
        if (m.find()) {
            connection(m);
            return false;
        }
        m = RING_ORDER.matcher(msg);
        if (m.find()) {
            int ch = Integer.parseInt(m.group(1));
            String order = m.group(3).strip().replaceAll(" +", " ");
            CommRank cr = r.context();
            cr.rings.putIfAbsent(ch, order);
            if (cr.ringsSource == null) {
                cr.ringsSource = Source.line(r.file, r.lineNo);
            }
            // "Channel %02d/%02d :" with nrings = the channels being connected (rings.cc:47@v2.28.9-1, connect.cc:508;
            // rings.cc:35@v2.5.7-1): the channel count of logs without the "coll channels" line.
            if (m.group(2) != null && cr.ringTotal == null) {
                try {
                    cr.ringTotal = Integer.valueOf(m.group(2));
                    cr.ringTotalSource = Source.line(r.file, r.lineNo);
                } catch (NumberFormatException ex) {
                    r.out.problem(r.lineNo, "ring line has a channel total out of range");
                }
            }
            r.counted();
            return false;
        }
        // Other Channel/Ring lines (e.g. the GRAPH "Ring %02d : %d -> %d -> %d" neighbours) carry no fact kept here.
        return CONNECTION_START.matcher(msg).find();
    }

    private void classify(String via) {
        // Some NCCL builds append the communicator ("via P2P/IPC comm 0x5609… nRanks 32", seen in a Ray job's log):
        // not part of the transport. A network's name may hold a space ("NET/AWS Libfabric/0"), so only this is cut.
        int comm = via.indexOf(" comm 0x");
        if (comm > 0) {
            via = via.substring(0, comm);
        }
        String transport;
        boolean gdr = false;
        boolean shared = false;
        Integer pxn = null;
        if (via.startsWith("P2P/")) {
            String rest = via.substring(4);
            if (rest.startsWith("direct pointer")) {
                transport = "P2P/direct pointer";
            } else if (rest.startsWith("common device")) {
                transport = "P2P/common device";
            } else {
                int slash = rest.indexOf('/');
                transport = "P2P/" + (slash < 0 ? rest : rest.substring(0, slash));
            }
        } else if (via.startsWith("SHM") || via.startsWith("direct shared memory")) {
            transport = "SHM";
        } else if (via.startsWith("NET/")) {
            String rest = via.substring(4);
            int slash = rest.indexOf('/');
            transport = "NET/" + (slash < 0 ? rest : rest.substring(0, slash));
            gdr = via.contains("/GDRDMA");
            shared = via.contains("/Shared");
            pxn = slash < 0 ? null : pxnProxyRank(rest, slash + 1);
        } else {
            int sp = via.indexOf(' ');
            transport = sp < 0 ? via : via.substring(0, sp);
        }
        viaTransport = transport;
        viaTransportId = transportIds.computeIfAbsent(transport, t -> transportIds.size());
        viaRead = via.contains("/read");
        viaGdr = gdr;
        viaShared = shared;
        viaPxn = pxn;
    }

    /**
     * "NET/%s/%d(%d)%s%s%s" (net.cc:317@v2.28.9-1, net.cc:187@v2.12.7-1): when PXN makes another rank's proxy send
     * for this one (proxyRank != myInfo->rank), NCCL prints that rank in parentheses right after the NIC index; the
     * "(PCI)" of GDR comes only after "/GDRDMA". Returns the number in "(%d)" after the digits at {@code from}, or null.
     */
    private static Integer pxnProxyRank(String rest, int from) {
        int d = from;
        while (d < rest.length() && Character.isDigit(rest.charAt(d))) {
            d++;
        }
        if (d == from || d >= rest.length() || rest.charAt(d) != '(') {
            return null;
        }
        int close = rest.indexOf(')', d + 1);
        if (close < 0 || close == d + 1 || close - d > 11) {
            return null;
        }
        for (int i = d + 1; i < close; i++) {
            if (!Character.isDigit(rest.charAt(i))) {
                return null;
            }
        }
        long v = Long.parseLong(rest.substring(d + 1, close));
        return v > Integer.MAX_VALUE ? null : (int) v;
    }

    private void connection(long channel, long from, long to, int dir) {
        if (channel < 0 || from > Integer.MAX_VALUE || to > Integer.MAX_VALUE) {
            r.out.problem(r.lineNo, "connection line names a channel or rank out of range");
            return;
        }
        CommRank cr = r.context();
        // A connection printed again (a log concatenated, a communicator re-initialised) is kept once: the first. The
        // key
        // is packed into a long when its fields fit (channel < 4096, ranks < 2^20, < 128 transports in this file): a
        // HashSet of records cost 12 % of the reading time on init-heavy logs. Same fields, so the same set either way.
        boolean added;
        if (channel < 1 << 12 && from < 1 << 20 && to < 1 << 20 && viaTransportId < 1 << 7) {
            long key = channel
                    | from << 12
                    | to << 32
                    | (long) viaTransportId << 52
                    | (viaShared ? 1L << 59 : 0)
                    | (viaRead ? 1L << 60 : 0)
                    | (viaGdr ? 1L << 61 : 0)
                    | (long) dir << 62;
            added = cr.connPacked.putIfAbsent(key, Boolean.TRUE);
        } else {
            added = cr.connSeen.add(new CommRank.ConnKey(
                    (int) channel, (int) from, (int) to, viaTransport, viaRead, viaGdr, viaShared, dir));
        }
        if (added) {
            cr.connections.add(new Evidence.Connection(
                    (int) channel,
                    (int) from,
                    (int) to,
                    viaTransport,
                    viaRead,
                    viaGdr,
                    Source.line(r.file, r.lineNo),
                    viaShared,
                    viaPxn));
        }
        cr.facts++;
        r.counted();
    }
}
