package io.pathproof.evidence;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads an NCCL debug log ({@code NCCL_DEBUG=INFO}, any subsystems) from bytes, streaming, in constant memory.
 *
 * <p>Lines are split on '\n' in a 1 MiB buffer; a line is looked at only if it holds {@code "NCCL "} followed by
 * {@code INFO}, {@code WARN} or {@code version}. The hot lines (COLL and TUNING, which repeat every iteration) are
 * parsed from bytes and aggregated; the rare init lines are decoded and matched with regexes. Format strings and
 * their source lines per version are listed in package-info.
 *
 * <p>Attribution of init lines (which carry no comm pointer) to a communicator: NCCL ≥ 2.19 prints
 * {@code … comm %p … - Init START} first, so a line belongs to the communicator whose init is open on that thread
 * (else on that device of that process), else to the one last completed on that device (lazy connection lines,
 * {@code NCCL_RUNTIME_CONNECT}). Older versions print only {@code … - Init COMPLETE} at the end, so lines wait on
 * their device until the comm line that names them.
 */
final class NcclLogReader {
  static final int MAX_LINE = 1 << 16;
  private static final int BUFFER = 1 << 20;

  private static final byte[] NCCL_ = Bytes.ascii("NCCL ");
  private static final byte[] INFO_ = Bytes.ascii("INFO ");
  private static final byte[] WARN_ = Bytes.ascii("WARN ");
  private static final byte[] VERSION_ = Bytes.ascii("version ");
  private static final byte[] OPCOUNT = Bytes.ascii(": opCount ");
  private static final byte[] COUNT = Bytes.ascii(" count ");
  private static final byte[] DATATYPE = Bytes.ascii(" datatype ");
  private static final byte[] OP = Bytes.ascii(" op ");
  private static final byte[] COMM = Bytes.ascii(" comm ");
  private static final byte[] SENDBUFF = Bytes.ascii(" sendbuff ");
  private static final byte[] RECVBUFF = Bytes.ascii(" recvbuff ");
  private static final byte[] ROOT = Bytes.ascii(" root ");
  private static final byte[] NRANKS_SP = Bytes.ascii(" [nranks=");
  private static final byte[] BYTES_ALGO = Bytes.ascii(" Bytes -> Algo ");
  private static final byte[] PROTO = Bytes.ascii(" proto ");
  private static final byte[] TIME = Bytes.ascii(" time ");
  private static final byte[] CHANNEL_LO_HI = Bytes.ascii(" channel{Lo..Hi}={");
  private static final byte[] COLON_SPACE = Bytes.ascii(": ");
  private static final byte[] NIL = Bytes.ascii("(nil)");

  /**
   * Algorithm and protocol names by id: include/nccl_common.h:53-68@v2.22.3-1 and
   * include/plugin/nccl_tuner.h:27-43@v2.30.7-1 (same ids; PAT added in 2.23); the upper-case spelling is the one the
   * ≥ 2.24 TUNING line prints (collectives.cc:95-126@v2.30.7-1).
   */
  static final String[] ALGORITHMS = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};

  static final String[] PROTOCOLS = {"LL", "LL128", "SIMPLE"};

  /** Collective names as ncclFuncToString prints them; interned so that the hot path makes no String. */
  private static final String[] OPS = {
    "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "Send", "Recv", "AllToAll", "Gather", "Scatter",
    "SendRecv", "AlltoAll"
  };

  private static final byte[][] OP_BYTES = new byte[OPS.length][];

  static {
    for (int i = 0; i < OPS.length; i++) {
      OP_BYTES[i] = Bytes.ascii(OPS[i]);
    }
  }

  private static final Pattern SUMMARY =
      Pattern.compile("^comm (0x[0-9a-fA-F]+|\\(nil\\)) rank (\\d+) nRanks (\\d+) nNodes (\\d+) localRanks (\\d+)");
  private static final Pattern INIT =
      Pattern.compile(
          "comm (0x[0-9a-fA-F]+|\\(nil\\)) rank (\\d+) nranks (\\d+) cudaDev (\\d+)(?: nvmlDev (\\d+))? busId"
              + " ([0-9a-fA-F]+)(?: commId (0x[0-9a-fA-F]+))? - Init (START|COMPLETE)");
  static final Pattern CHANNELS =
      Pattern.compile(
          "^(\\d+) coll channels, (?:(\\d+) collnet channels, )?(?:(\\d+) nvls channels, )?(\\d+) p2p channels,"
              + " (\\d+) p2p channels per peer");
  private static final Pattern RING_ORDER = Pattern.compile("^(?:Channel|Ring) (\\d+)(?:/(\\d+))? :((?: +-?\\d+)+) *$");
  private static final Pattern CONNECTION =
      Pattern.compile(
          "^(?:Channel|Ring) (\\d+)(?:/(\\d+))? : (\\d+)\\[[^\\]]*\\] -> (\\d+)\\[[^\\]]*\\](?: \\[(send|receive)\\])?"
              + " via (.+)$");
  /**
   * " [%d] %d/%d/%d->%d->%d" per channel (init.cc:1064@v2.22.3-1); 2.5 adds "|" and the reverse tree. NCCL cuts the
   * line at its buffer size, so a last, incomplete item is not a tree.
   */
  private static final String TREE_SIDE = "-?\\d+(?:/-?\\d+)*->-?\\d+->-?\\d+(?:/-?\\d+)*";

  static final Pattern TREE_ITEM =
      Pattern.compile("\\[(\\d+)\\] (" + TREE_SIDE + "(?:\\|" + TREE_SIDE + ")?)(?=\\s|$)");
  static final Pattern GRAPH =
      Pattern.compile(
          "^Pattern (\\d+), crossNic (\\d+), nChannels (\\d+), (?:bw|speed) ([0-9.]+)/([0-9.]+), type (\\S+)/(\\S+),"
              + " sameChannels (\\d+)");
  static final Pattern ENV = Pattern.compile("^(NCCL_[A-Za-z0-9_]+) set by environment to ?(.*)$");
  static final Pattern INIT_TIMINGS =
      Pattern.compile("^Init timings(?: - [^:]+)?: rank (\\d+) nranks (\\d+) total ([0-9.]+) \\((.*)\\)");
  static final Pattern PHASE = Pattern.compile("([A-Za-z]+) ([0-9.]+)");
  private static final Pattern VERSION = Pattern.compile("^NCCL version ([0-9][0-9A-Za-z.\\-]*)");
  static final Pattern INTEGER = Pattern.compile("-?\\d+");

  final FileFacts out;
  final String file;
  final Integer fileRank;

  // Per-line prefix fields (set by parsePrefix).
  private long processKey;
  long threadKey;
  private long devKey;
  int cudaDev;
  private int hostFrom;
  private int hostTo;
  private long pid;
  /** The launcher's tag of this line ("[rank3]:", "[1,3]<stdout>:", "[155]", "3:"), or null; never an NCCL rank. */
  private String launcherLabel;
  private long launcherKey;
  long lineNo;

  private final Map<Long, CommRank> byPtr = new HashMap<>();
  private final Map<Long, CommRank> openByThread = new HashMap<>();
  private final Map<Long, CommRank> openByDev = new HashMap<>();
  private final Map<Long, CommRank> pendingByDev = new HashMap<>();
  private final Map<Long, CommRank> lastCompletedByDev = new HashMap<>();
  final Map<Long, CommRank> lastCollByThread = new HashMap<>();
  private final Set<Long> startSeen = new HashSet<>();
  private long lastCollThread;
  private CommRank lastCollComm;
  private long lastHostKey;
  private long lastPtrKey;
  private CommRank lastPtrComm;
  private final Map<Long, String> hosts = new HashMap<>();
  private final java.util.List<String> knownHosts = new java.util.ArrayList<>();
  private final CommRank.CollKey collProbe = new CommRank.CollKey();
  private final CommRank.TuneKey tuneProbe = new CommRank.TuneKey();
  private int warnings;

  private final EmulatorLines emulatorLines = new EmulatorLines(this);
  private final ConnectorLines connectors = new ConnectorLines(this);
  private final InitLines initLines = new InitLines(this);

  NcclLogReader(FileFacts out, Integer fileRank) {
    this.out = out;
    this.file = out.file;
    this.fileRank = fileRank;
  }

  /** Reads the whole stream; I/O errors become a problem at the line reached. */
  void read(InputStream in) {
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
    finish();
  }

  private void line(byte[] b, int s, int e) {
    if (e > s && b[e - 1] == '\r') {
      e--;
    }
    int m = marker(b, s, e);
    if (m < 0) {
      return;
    }
    int next = nextFragment(b, m + NCCL_.length + 5, e);
    if (next < 0) {
      fragment(b, s, m, e);
      return;
    }
    // Several processes wrote into one file at once: the line holds pieces of several lines, each with NCCL's own
    // prefix. Each piece is read as a line of its own (its prefix names its process, so no communicator is split).
    int pieces = 0;
    int from = s;
    while (m >= 0) {
      int end = next < 0 ? e : next;
      fragment(b, from, m, end);
      pieces++;
      if (next < 0) {
        break;
      }
      from = next;
      m = marker(b, from, e);
      next = m < 0 ? -1 : nextFragment(b, m + NCCL_.length + 5, e);
    }
    out.problem(lineNo, "torn line: " + pieces + " NCCL lines written into one by several processes at once;"
        + " each piece was read apart");
  }

  /** The first "NCCL " followed by INFO, WARN or version in {@code b[s, e)}, or -1. */
  private static int marker(byte[] b, int s, int e) {
    int from = s;
    while (true) {
      int m = Bytes.indexOf(b, from, e, NCCL_);
      if (m < 0) {
        return -1;
      }
      int after = m + NCCL_.length;
      if (Bytes.startsWith(b, after, e, INFO_) || Bytes.startsWith(b, after, e, WARN_)
          || Bytes.startsWith(b, after, e, VERSION_)) {
        return m;
      }
      from = after;
    }
  }

  private void fragment(byte[] b, int s, int m, int e) {
    int after = m + NCCL_.length;
    parsePrefix(b, s, m);
    if (Bytes.startsWith(b, after, e, INFO_)) {
      info(b, after + INFO_.length, e);
    } else if (Bytes.startsWith(b, after, e, WARN_)) {
      warn(Bytes.string(b, after + WARN_.length, e).strip());
    } else {
      version(Bytes.string(b, m, e));
    }
  }

  /**
   * Where a second line's NCCL prefix ({@code host:pid:tid [dev] NCCL INFO|WARN}, debug.cc:196@v2.22.3-1) starts
   * inside {@code b[from, e)}, or -1. The host may be glued to the end of the piece before it ("0 1vm:472:472"): a
   * host name already seen in this file is preferred as the longest match.
   */
  private int nextFragment(byte[] b, int from, int e) {
    int m = from;
    while ((m = Bytes.indexOf(b, m, e, NCCL_)) >= 0) {
      int after = m + NCCL_.length;
      boolean info = Bytes.startsWith(b, after, e, INFO_);
      if (info || Bytes.startsWith(b, after, e, WARN_)) {
        int start = prefixStart(b, from, m, info);
        if (start >= 0) {
          return start;
        }
      }
      m = after;
    }
    return -1;
  }

  /** The start of {@code host:pid:tid [dev] } (+ "file.cc:123 (func) " for WARN) that ends at {@code m}, or -1. */
  private int prefixStart(byte[] b, int lo, int m, boolean info) {
    int q = m - 1;
    if (q < lo || b[q] != ' ') {
      return -1;
    }
    if (!info) {
      // WARN: "[dev] file.cc:123 " or "[dev] file.cc:123 (func) ": back to the last ']' within 256 bytes.
      int limit = Math.max(lo, m - 256);
      while (q >= limit && b[q] != ']') {
        q--;
      }
      if (q < limit) {
        return -1;
      }
    } else {
      q--;
    }
    if (q < lo || b[q] != ']') {
      return -1;
    }
    int o = q - 1;
    while (o >= lo && Bytes.isDigit(b[o])) {
      o--;
    }
    if (o < lo || b[o] != '[' || o == q - 1) {
      return -1;
    }
    int te = o;
    while (te > lo && b[te - 1] == ' ') {
      te--;
    }
    // tid, pid: digits after the last two ':'.
    int c2 = te - 1;
    while (c2 >= lo && Bytes.isDigit(b[c2])) {
      c2--;
    }
    if (c2 < lo || b[c2] != ':' || c2 == te - 1) {
      return -1;
    }
    int c1 = c2 - 1;
    while (c1 >= lo && Bytes.isDigit(b[c1])) {
      c1--;
    }
    if (c1 < lo || b[c1] != ':' || c1 == c2 - 1) {
      return -1;
    }
    int hs = c1;
    while (hs > lo && b[hs - 1] != ' ' && b[hs - 1] != '\t') {
      hs--;
    }
    if (hs == c1) {
      return -1;
    }
    // The longest known host name that ends the token; else the whole token.
    for (String h : knownHosts) {
      int start = c1 - h.length();
      if (start > hs && start >= lo && Bytes.startsWith(b, start, c1, Bytes.ascii(h))) {
        return start;
      }
    }
    return hs;
  }

  /**
   * Reads what precedes "NCCL INFO": an optional launcher tag ({@code [rank3]:}, {@code [1,3]<stdout>:}, {@code [3] }),
   * timestamps, then NCCL's own {@code host:pid:tid [cudaDev] } (debug.cc:196@v2.22.3-1, debug.cc:330@v2.30.7-1).
   */
  private void parsePrefix(byte[] b, int s, int m) {
    // Consecutive lines mostly share their prefix (same host:pid:tid [dev]): reuse what the last one gave.
    int n = m - s;
    if (n == lastPrefixLen && n <= lastPrefix.length
        && java.util.Arrays.equals(b, s, m, lastPrefix, 0, n)) {
      if (hostFrom >= 0) {
        hostFrom = s + lastHostOffset;
        hostTo = s + lastHostOffset + lastHostLen;
      }
      return;
    }
    parsePrefixFully(b, s, m);
    if (n <= lastPrefix.length) {
      System.arraycopy(b, s, lastPrefix, 0, n);
      lastPrefixLen = n;
      lastHostOffset = hostFrom - s;
      lastHostLen = hostTo - hostFrom;
    } else {
      lastPrefixLen = -1;
    }
  }

  private final byte[] lastPrefix = new byte[256];
  private int lastPrefixLen = -1;
  private int lastHostOffset;
  private int lastHostLen;

  private void parsePrefixFully(byte[] b, int s, int m) {
    launcherLabel = null;
    launcherKey = -1;
    cudaDev = -1;
    pid = -1;
    hostFrom = hostTo = -1;
    long tid = -1;
    int p = Bytes.skipSpaces(b, s, m);
    int tagFrom = p;
    if (p < m && b[p] == '[') {
      int close = p + 1;
      while (close < m && b[close] != ']') {
        close++;
      }
      if (close < m) {
        Integer r = launcherTag(b, p + 1, close, m);
        if (r != null) {
          launcherKey = r;
          p = close + 1;
          if (p < m && b[p] == '<') {
            while (p < m && b[p] != '>') {
              p++;
            }
            p++;
          }
          if (p < m && b[p] == ':') {
            p++;
          }
          launcherLabel = Bytes.string(b, tagFrom, Math.min(p, m)).strip();
        }
      }
    } else if (p < m && Bytes.isDigit(b[p])) {
      // srun --label: "%d: " (the task id, not the communicator's rank), before NCCL's own prefix.
      int d = Bytes.digitsEnd(b, p, m);
      if (d + 1 < m && b[d] == ':' && b[d + 1] == ' ' && d - p < 8) {
        launcherKey = Bytes.parseLong(b, p, d);
        launcherLabel = Bytes.string(b, p, d + 1);
        p = d + 2;
      }
    }
    // [cudaDev]: the last bracket before the marker (for WARN, "file.cc:123 " sits in between).
    int q = m - 1;
    while (q >= p && b[q] != ']') {
      q--;
    }
    int devOpen = -1;
    if (q > p) {
      int o = q - 1;
      while (o >= p && Bytes.isDigit(b[o])) {
        o--;
      }
      if (o >= p && b[o] == '[' && o + 1 < q) {
        long d = Bytes.parseLong(b, o + 1, q);
        if (d != Bytes.NONE && d < 4096) {
          cudaDev = (int) d;
          devOpen = o;
        }
      }
    }
    // host:pid:tid, the token before [cudaDev].
    if (devOpen > p) {
      int te = devOpen;
      while (te > p && b[te - 1] == ' ') {
        te--;
      }
      int ts = te;
      while (ts > p && b[ts - 1] != ' ') {
        ts--;
      }
      int c2 = te - 1;
      while (c2 > ts && Bytes.isDigit(b[c2])) {
        c2--;
      }
      if (c2 > ts && b[c2] == ':' && c2 + 1 < te) {
        int c1 = c2 - 1;
        while (c1 > ts && Bytes.isDigit(b[c1])) {
          c1--;
        }
        if (c1 >= ts && b[c1] == ':' && c1 + 1 < c2) {
          tid = Bytes.parseLong(b, c2 + 1, te);
          pid = Bytes.parseLong(b, c1 + 1, c2);
          hostFrom = ts;
          hostTo = c1;
        }
      }
    }
    long h = 0xcbf29ce484222325L;
    if (hostFrom >= 0) {
      for (int i = hostFrom; i < hostTo; i++) {
        h = (h ^ b[i]) * 0x100000001b3L;
      }
      h = h * 31 + pid;
      if (h != lastHostKey) {
        if (!hosts.containsKey(h)) {
          String host = Bytes.string(b, hostFrom, hostTo);
          hosts.put(h, host);
          if (knownHosts.size() < 64 && !knownHosts.contains(host)) {
            knownHosts.add(host);
            knownHosts.sort((x, y) -> y.length() - x.length());
          }
        }
        lastHostKey = h;
      }
      processKey = h;
    } else if (launcherKey >= 0) {
      processKey = 0x9E3779B97F4A7C15L * (launcherKey + 1L);
    } else {
      processKey = 0;
    }
    threadKey = processKey * 1000003L + tid;
    devKey = processKey * 1031L + cudaDev;
  }

  /** A launcher tag's rank: {@code rank3}, {@code 1,3} (mpirun: job, rank) or {@code 3} when more text follows. */
  private static Integer launcherTag(byte[] b, int from, int to, int m) {
    if (Bytes.startsWith(b, from, to, Bytes.ascii("rank"))) {
      long r = Bytes.parseLong(b, from + 4, to);
      return r == Bytes.NONE || r > Integer.MAX_VALUE ? null : (int) r;
    }
    int comma = -1;
    for (int i = from; i < to; i++) {
      if (b[i] == ',') {
        comma = i;
      }
    }
    if (comma > from) {
      long job = Bytes.parseLong(b, from, comma);
      long r = Bytes.parseLong(b, comma + 1, to);
      return job == Bytes.NONE || r == Bytes.NONE || r > Integer.MAX_VALUE ? null : (int) r;
    }
    // "[155] host:pid:tid [3] NCCL INFO": a bare number is a launcher rank only when NCCL's own prefix follows.
    long r = Bytes.parseLong(b, from, to);
    if (r == Bytes.NONE || r > Integer.MAX_VALUE) {
      return null;
    }
    int next = Bytes.skipSpaces(b, to + 1, m);
    return next < m && b[next] != '[' && hasDevBracket(b, next, m) ? (int) r : null;
  }

  private static boolean hasDevBracket(byte[] b, int from, int m) {
    for (int i = from; i < m; i++) {
      if (b[i] == '[') {
        return true;
      }
    }
    return false;
  }

  private void info(byte[] b, int s, int e) {
    if (s >= e) {
      return;
    }
    byte c = b[s];
    if (c >= 'A' && c <= 'Z') {
      int opEnd = s;
      while (opEnd < e && ((b[opEnd] | 0x20) >= 'a' && (b[opEnd] | 0x20) <= 'z')) {
        opEnd++;
      }
      if (Bytes.startsWith(b, opEnd, e, OPCOUNT)) {
        coll(b, s, opEnd, e);
        return;
      }
      if (Bytes.startsWith(b, opEnd, e, COLON_SPACE) && opEnd + 2 < e && Bytes.isDigit(b[opEnd + 2])) {
        int be = Bytes.digitsEnd(b, opEnd + 2, e);
        if (Bytes.startsWith(b, be, e, BYTES_ALGO)) {
          tuning(b, s, opEnd, opEnd + 2, e);
          return;
        }
      }
    } else if (Bytes.isDigit(c)) {
      int be = Bytes.digitsEnd(b, s, e);
      if (Bytes.startsWith(b, be, e, BYTES_ALGO)) {
        tuning(b, -1, -1, s, e);
        return;
      }
    }
    if (c == 'C' && Bytes.startsWith(b, s, e, ConnectorLines.CHANNEL_) && (connectors.fastConnection(b, s, e) || connectors.fastRingOrder(b, s, e))) {
      return;
    }
    if (mayHoldAFact(b, s, e)) {
      rare(Bytes.string(b, s, e));
    }
  }

  private static final byte[] INIT_MARK = Bytes.ascii(" - Init ");
  private static final byte[] TREES = Bytes.ascii("Trees");

  /**
   * Whether {@link #rare} could take a fact from this line, decided on the bytes: most init lines (NET/…, topology,
   * bootstrap, plugin lines) give none, and making a String of each was most of the time spent on init-heavy logs.
   */
  private static boolean mayHoldAFact(byte[] b, int s, int e) {
    if (s >= e) {
      return false;
    }
    return switch (b[s]) {
      // "Ring %02d : %d -> %d -> %d" (init.cc:1223@v2.28.9-1) and "Tree %d : …" name neighbours, no fact kept.
      case 'R' -> Bytes.indexOfByte(b, s, e, (byte) '[') >= 0 || Bytes.indexOf(b, s, e, ConnectorLines.ARROW) < 0;
      case 'T' -> Bytes.startsWith(b, s, e, TREES);
      case 'C', 'P', 't', 'N', 'I', 'E', 'O', 'c' -> true;
      default -> Bytes.isDigit(b[s]) || Bytes.indexOf(b, s, e, INIT_MARK) >= 0;
    };
  }

  /**
   * {@code %s: opCount %lx sendbuff %p recvbuff %p count %zu datatype %d op %d root %d comm %p [nranks=%d] stream %p}
   * (enqueue.cc:2065@v2.22.3-1, enqueue.cc:3151@v2.30.7-1; the same since 2.5). Walked token by token, no search.
   */
  private void coll(byte[] b, int s, int opEnd, int e) {
    int p = opEnd + OPCOUNT.length;
    int opCountEnd = Bytes.tokenEnd(b, p, e);
    int q = opCountEnd;
    long count = Bytes.NONE;
    long datatype = Bytes.NONE;
    long redOp = Bytes.NONE;
    long ptr = Bytes.NONE;
    long nRanks = Bytes.NONE;
    if (Bytes.startsWith(b, q, e, SENDBUFF)) {
      q = Bytes.tokenEnd(b, q + SENDBUFF.length, e);
      if (Bytes.startsWith(b, q, e, RECVBUFF)) {
        q = Bytes.tokenEnd(b, q + RECVBUFF.length, e);
        if (Bytes.startsWith(b, q, e, COUNT)) {
          int v = q + COUNT.length;
          q = Bytes.tokenEnd(b, v, e);
          count = Bytes.parseLong(b, v, q);
          if (Bytes.startsWith(b, q, e, DATATYPE)) {
            v = q + DATATYPE.length;
            q = Bytes.tokenEnd(b, v, e);
            datatype = Bytes.parseLong(b, v, q);
            if (Bytes.startsWith(b, q, e, OP)) {
              v = q + OP.length;
              q = Bytes.tokenEnd(b, v, e);
              redOp = Bytes.parseLong(b, v, q);
              if (Bytes.startsWith(b, q, e, ROOT)) {
                q = Bytes.tokenEnd(b, q + ROOT.length, e);
                if (Bytes.startsWith(b, q, e, COMM)) {
                  v = q + COMM.length;
                  q = Bytes.tokenEnd(b, v, e);
                  ptr = Bytes.startsWith(b, v, q, NIL) ? 0 : Bytes.parseHex(b, v, q);
                  if (Bytes.startsWith(b, q, e, NRANKS_SP)) {
                    v = q + NRANKS_SP.length;
                    q = Bytes.digitsEnd(b, v, e);
                    nRanks = q < e && b[q] == ']' ? Bytes.parseLong(b, v, q) : Bytes.NONE;
                  }
                }
              }
            }
          }
        }
      }
    }
    if (count == Bytes.NONE || datatype == Bytes.NONE || redOp == Bytes.NONE || ptr == Bytes.NONE
        || nRanks == Bytes.NONE || datatype > Integer.MAX_VALUE || redOp > Integer.MAX_VALUE
        || nRanks > Integer.MAX_VALUE) {
      out.problem(lineNo, "COLL line not understood (expected opCount … count … datatype … op … comm … [nranks=…])");
      return;
    }
    CommRank cr = byPointer(ptr);
    if (cr.nRanks == null) {
      cr.nRanks = (int) nRanks;
    }
    if (threadKey != lastCollThread || cr != lastCollComm) {
      lastCollByThread.put(threadKey, cr);
      lastCollThread = threadKey;
      lastCollComm = cr;
    }
    CommRank.CollKey k = collProbe;
    k.op = op(b, s, opEnd);
    k.count = count;
    k.datatype = (int) datatype;
    k.redOp = (int) redOp;
    k.nRanks = (int) nRanks;
    lastEnqueueThread = threadKey;
    lastEnqueueOp = k.op;
    lastEnqueueCount = count;
    lastEnqueueDatatype = (int) datatype;
    CommRank.Agg a = cr.colls.get(k);
    if (a == null) {
      cr.colls.put(k.copy(), new CommRank.Agg(Source.line(file, lineNo), Bytes.string(b, p, opCountEnd), 1));
    } else {
      a.n++;
    }
    cr.facts++;
    out.facts++;
  }

  /**
   * TUNING, three formats: {@code %ld Bytes -> Algo %d proto %d time %f} (enqueue.cc:1613@v2.22.3-1), the same with
   * {@code %s: } first (enqueue.cc:1855@v2.23.4-1), and {@code %s: %ld Bytes -> Algo %s proto %s
   * channel{Lo..Hi}={%d..%d}} (enqueue.cc:678@v2.24.3-1, enqueue.cc:741@v2.28.9-1, enqueue.cc:822@v2.30.7-1).
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
        if (Bytes.startsWith(b, lEnd, e, Bytes.ascii(".."))) {
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
      out.problem(lineNo, "TUNING line not understood (expected Bytes -> Algo … proto … time|channel{Lo..Hi})");
      return;
    }
    CommRank cr = lastCollByThread.get(threadKey);
    if (cr == null) {
      cr = context();
    }
    cr = rankZero(cr);
    lastTuneOp = k.op;
    lastTuneThread = threadKey;
    CommRank.Agg a = cr.tuning.get(k);
    if (a == null) {
      cr.tuning.put(k.copy(), new CommRank.Agg(Source.line(file, lineNo), null, 1));
    } else {
      a.n++;
    }
    cr.facts++;
    out.facts++;
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
    for (CommRank o : out.commRanks) {
      if (o.rank != null && o.rank == 0 && o != cr
          && (cr.commId != null ? cr.commId.equals(o.commId)
              : o.commId == null && o.processKey == cr.processKey && java.util.Objects.equals(o.nRanks, cr.nRanks))) {
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

  private void warn(String message) {
    CommRank cr = currentOrNull();
    Integer rank = cr != null ? cr.effectiveRank(fileRank) : lineRank();
    if (warnings++ < 1000) {
      out.warnings.add(new Evidence.Warning(rank, message, Source.line(file, lineNo)));
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
    if (out.ncclVersion == null) {
      out.ncclVersion = v;
      out.ncclVersionSource = Source.line(file, lineNo);
    } else if (!out.ncclVersion.equals(v)) {
      out.findings.add(
          new Evidence.Finding(
              "nccl-version-mismatch",
              "NCCL version " + v + " here but " + out.ncclVersion + " earlier in the same file",
              java.util.List.of(out.ncclVersionSource, Source.line(file, lineNo))));
    }
  }

  /** A line outside any communicator has no NCCL rank, unless the file is named after one; a launcher tag is not. */
  private Integer lineRank() {
    return fileRank;
  }

  // ---------------------------------------------------------------- rare lines

  private void rare(String msg) {
    switch (msg.charAt(0)) {
      case 'C' -> {
        if (msg.startsWith("Channel ")) {
          channelLine(msg);
        } else if (msg.startsWith("Connected all rings")) {
          context().connectedRings = true;
          counted();
        } else if (msg.startsWith("Connected all trees")) {
          context().connectedTrees = true;
          counted();
        }
      }
      case 'R' -> {
        if (msg.startsWith("Ring ")) {
          channelLine(msg);
        }
      }
      case 'T' -> {
        if (msg.startsWith("Trees")) {
          initLines.trees(msg);
        }
      }
      case 'P' -> {
        if (msg.startsWith("Pattern ")) {
          initLines.graph(msg);
        }
      }
      case 't' -> {
        if (msg.startsWith("threadThresholds ")) {
          CommRank cr = context();
          cr.threadThresholds = msg.substring("threadThresholds ".length()).strip();
          cr.thresholdsSource = Source.line(file, lineNo);
          counted();
        }
      }
      case 'N' -> {
        if (msg.startsWith("NCCL version ")) {
          version(msg);
        } else if (msg.startsWith("NCCL_")) {
          initLines.env(msg);
        }
      }
      case 'I' -> {
        if (msg.startsWith("Init timings")) {
          initLines.initTimings(msg);
        }
      }
      case 'E', 'O' -> {
        if (msg.startsWith("EMULATOR") || msg.startsWith("ORACLE")) {
          emulatorLines.emulator(msg);
        }
      }
      default -> {}
    }
    if (Bytes.isDigit((byte) msg.charAt(0)) && msg.contains(" coll channels, ")) {
      initLines.channels(msg);
    } else if (msg.startsWith("comm ")) {
      Matcher m = SUMMARY.matcher(msg);
      if (m.find()) {
        summary(m);
      } else {
        initLine(msg);
      }
    } else if (msg.contains(" - Init ")) {
      initLine(msg);
    }
  }

  void counted() {
    out.facts++;
  }

  private void channelLine(String msg) {
    Matcher m = CONNECTION.matcher(msg);
    if (m.find()) {
      connectors.connection(m);
      return;
    }
    m = RING_ORDER.matcher(msg);
    if (m.find()) {
      int ch = Integer.parseInt(m.group(1));
      String order = m.group(3).strip().replaceAll(" +", " ");
      CommRank cr = context();
      cr.rings.putIfAbsent(ch, order);
      if (cr.ringsSource == null) {
        cr.ringsSource = Source.line(file, lineNo);
      }
      // "Channel %02d/%02d :" with nrings = the channels being connected (rings.cc:47@v2.28.9-1, connect.cc:508;
      // rings.cc:35@v2.5.7-1): the channel count of logs without the "coll channels" line.
      if (m.group(2) != null && cr.ringTotal == null) {
        try {
          cr.ringTotal = Integer.valueOf(m.group(2));
          cr.ringTotalSource = Source.line(file, lineNo);
        } catch (NumberFormatException ex) {
          out.problem(lineNo, "ring line has a channel total out of range");
        }
      }
      counted();
    }
    // Other Channel/Ring lines (e.g. the GRAPH "Ring %02d : %d -> %d -> %d" neighbours) carry no fact kept here.
  }

  // ---------------------------------------------------------------- communicator attribution

  private void summary(Matcher m) {
    long ptr = pointer(m.group(1));
    CommRank cr = bind(ptr, false);
    setInt(m.group(2), v -> cr.rank = v);
    setInt(m.group(3), v -> cr.nRanks = v);
    setInt(m.group(4), v -> cr.nNodes = v);
    setInt(m.group(5), v -> cr.localRanks = v);
    cr.facts++;
    counted();
  }

  /**
   * "comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init START|COMPLETE"
   * (init.cc:1434@v2.22.3-1, init.cc:1945@v2.30.7-1 with the API name first); 2.5 has neither nvmlDev nor commId
   * (init.cc:746@v2.5.7-1).
   */
  private void initLine(String msg) {
    Matcher m = INIT.matcher(msg);
    if (!m.find()) {
      if (msg.contains(" - Init COMPLETE") || msg.contains(" - Init START")) {
        out.problem(lineNo, "comm init line not understood");
      }
      return;
    }
    boolean start = m.group(8).equals("START");
    long ptr = pointer(m.group(1));
    if (start) {
      startSeen.add(processKey);
      epoch++;
    }
    CommRank cr = bind(ptr, start);
    setInt(m.group(2), v -> cr.rank = v);
    setInt(m.group(3), v -> cr.nRanks = v);
    setInt(m.group(4), v -> cr.cudaDev = v);
    if (m.group(5) != null) {
      setInt(m.group(5), v -> cr.nvmlDev = v);
    }
    cr.busId = m.group(6);
    if (m.group(7) != null) {
      cr.commId = m.group(7).toLowerCase(java.util.Locale.ROOT);
    }
    if (!start) {
      if (openByThread.get(threadKey) == cr) {
        openByThread.remove(threadKey);
        epoch++;
      }
      if (openByDev.get(devKey) == cr) {
        openByDev.remove(devKey);
        epoch++;
      }
      lastCompletedByDev.put(devKey, cr);
      epoch++;
    }
    cr.facts++;
    counted();
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

  void setInt(String s, java.util.function.IntConsumer c) {
    try {
      c.accept(Integer.parseInt(s));
    } catch (NumberFormatException e) {
      out.problem(lineNo, "number out of range: " + s);
    }
  }

  /** Names the communicator (process, ptr); lines read before on this device join it. */
  private CommRank bind(long ptr, boolean start) {
    long key = ptrKey(ptr);
    CommRank cr = byPtr.get(key);
    CommRank pending = pendingByDev.remove(devKey);
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
      out.commRanks.remove(pending);
    }
    if (start) {
      openByThread.put(threadKey, cr);
      openByDev.put(devKey, cr);
      epoch++;
    }
    decorate(cr);
    return cr;
  }

  private CommRank byPointer(long ptr) {
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
    return processKey * 0x9E3779B97F4A7C15L + ptr;
  }

  private CommRank newRank() {
    CommRank cr = new CommRank(processKey, Source.line(file, lineNo));
    out.commRanks.add(cr);
    return cr;
  }

  private void decorate(CommRank cr) {
    if (cr.host == null && hostFrom >= 0) {
      cr.host = hosts.get(processKey);
      cr.pid = pid > Integer.MAX_VALUE ? null : (int) pid;
    }
    if (cr.cudaDev == null && cudaDev >= 0) {
      cr.cudaDev = cudaDev;
    }
    if (cr.launcherLabel == null) {
      cr.launcherLabel = launcherLabel;
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
    if (cachedEpoch == epoch && cachedThread == threadKey && cachedDev == devKey) {
      return cached;
    }
    CommRank cr = lookUp();
    cachedEpoch = epoch;
    cachedThread = threadKey;
    cachedDev = devKey;
    cached = cr;
    return cr;
  }

  private CommRank lookUp() {
    CommRank cr = openByThread.get(threadKey);
    if (cr == null) {
      cr = openByDev.get(devKey);
    }
    if (cr == null) {
      cr = pendingByDev.get(devKey);
    }
    if (cr == null && startSeen.contains(processKey)) {
      cr = lastCompletedByDev.get(devKey);
    }
    return cr;
  }

  /** The communicator an init line without a comm pointer belongs to (see the class comment). */
  CommRank context() {
    CommRank cr = currentOrNull();
    if (cr == null) {
      cr = newRank();
      pendingByDev.put(devKey, cr);
      epoch++;
    }
    decorate(cr);
    cr.facts++;
    return cr;
  }

  /** Lines that waited for a comm line that never came join the last communicator completed on their device. */
  private void finish() {
    for (Map.Entry<Long, CommRank> e : pendingByDev.entrySet()) {
      CommRank pending = e.getValue();
      CommRank last = lastCompletedByDev.get(e.getKey());
      if (!pending.bound() && last != null) {
        last.absorb(pending);
        out.commRanks.remove(pending);
      }
    }
    out.commRanks.removeIf(cr -> cr.facts == 0 && !cr.bound());
  }
}
