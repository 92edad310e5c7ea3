package io.pathproof.evidence;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The lines of DDP's own debug log ({@code TORCH_DISTRIBUTED_DEBUG=INFO} or {@code DETAIL}), one family of
 * {@link NcclLogReader}: a rank's stderr may hold NCCL's lines and DDP's, and this family reads the lines that are not
 * NCCL's. Each message becomes an {@link Evidence.DdpLogMessage} with its file and line. Format strings, read in the
 * torch sources at v1.13.1 (Debian's pytorch_1.13.1+dfsg.orig.tar.xz, the upstream tree; its Debian build prints these
 * very line numbers):
 *
 * <ul>
 *   <li>{@code debug-level}: {@code "[c10d] The debug level is set to {}."} (debug.cpp:49@v1.13.1, C10D_INFO, printed
 *       once a process reads TORCH_DISTRIBUTED_DEBUG).
 *   <li>{@code reducer-initialized}: {@code "Reducer initialized with bucket_bytes_cap: " << bucket_bytes_cap_ << "
 *       first_bucket_bytes_cap: " << first_bucket_bytes_cap} (reducer.cpp:125-129@v1.13.1, debug level INFO or
 *       DETAIL).
 *   <li>{@code ddp-initialized}: {@code "[Rank {}]: DDP Initialized with: \n"}, then one {@code "key: value\n"} line
 *       per entry of DDP's logging data, integers first, then strings, each in key order (logger.cpp:202-213@v1.13.1,
 *       INFO or DETAIL): the construction-time data, {@code bucket_sizes} (bytes per bucket at construction),
 *       {@code world_size}, {@code rank}, {@code backend_name}, {@code total_parameter_size_bytes},
 *       {@code bucket_cap_bytes} among them.
 *   <li>{@code runtime-stats}: {@code "[Rank {} / {}] [before iteration {}] Training {} unused_parameter_size={} \n
 *       Avg forward compute time: {} \n Avg backward compute time: {} \nAvg backward comm. time: {} \n Avg backward
 *       comm/comp overlap time: {}"}, then {@code "\n Gradient comm. hook: {}"} where a hook is set and {@code "\n Uneven
 *       input detection with join() enabled."} (logger.cpp:23-49, printed at logger.cpp:377@v1.13.1, DETAIL only, in
 *       each forward that collects runtime stats).
 *   <li>{@code buckets-rebuilt}: {@code rebuilt_bucket_indices.size() << " buckets rebuilt with size limits: " <<
 *       c10::Join(", ", per_bucket_size_limits) << " bytes."} (reducer.cpp:1722-1726@v1.13.1, INFO or DETAIL): how many
 *       buckets the rebuild made and the size limit of each, not their sizes.
 *   <li>{@code buckets-rebuilt-notice}: {@code logger.info("Reducer buckets have been rebuilt in this iteration.")}
 *       (torch/nn/parallel/distributed.py:1027@v1.13.1), Python's own logging: printed only where the script set up
 *       logging at INFO, in whatever format it chose; the message is matched anywhere on the line.
 * </ul>
 *
 * <p>torch 2.11.0 prints the same format strings (found in its own libtorch_cpu.so, 2.11.0+cu130, git 70d99e9) from
 * debug.cpp:48, reducer.cpp:129, logger.cpp:223 and reducer.cpp:1980 (the lines its log names, and so those of the
 * v2.11.0 tree it was built from; its C++ sources themselves were not read), and the Python line from
 * distributed.py:1585@v2.11.0 (read in the wheel). On gloo, DETAIL crashed 2.11 inside
 * {@code set_construction_data_and_log} (distributed.py:1294@v2.11.0), before "DDP Initialized"; under DETAIL 1.13
 * printed a garbage {@code gloo_num_threads} there, so the runtime stats of 2.11 were read in its binary's format
 * string only.
 *
 * <p>The C++ lines carry the logging library's prefix: glog's {@code I20261203 11:17:51.774408 11611 reducer.cpp:126] }
 * (Debian's build; the number before the file is the thread id), c10's own {@code [I reducer.cpp:126] }
 * (c10/util/Logging.cpp:329-338@v1.13.1, builds without glog) or, in 2.11, {@code [I1203 12:07:52.916453843
 * reducer.cpp:129] } with a time and no thread. Before it, torch 2.11 itself puts the rank of the process group
 * ({@code [rank0]:}), on the first line of a message only: the lines after it continue it. A message's rank is the
 * one it names ({@code [Rank 0]}), else the {@code [rankN]:} tag, else the rank that a message of the same thread
 * named, else the rank in the file's name, else the only rank the file's messages name when they all come from one
 * thread; else it is unknown (null). Messages of several ranks in one file are told apart by thread and tag, never by
 * order.
 */
final class DdpLines {
    /** The messages this family reads, each by the name its {@link Evidence.DdpLogMessage#message} has. */
    enum Message {
        DEBUG_LEVEL("debug-level"),
        REDUCER_INITIALIZED("reducer-initialized"),
        DDP_INITIALIZED("ddp-initialized"),
        RUNTIME_STATS("runtime-stats"),
        BUCKETS_REBUILT("buckets-rebuilt"),
        BUCKETS_REBUILT_NOTICE("buckets-rebuilt-notice");

        final String label;

        Message(String label) {
            this.label = label;
        }
    }

    private static final byte[] CPP = Bytes.ascii(".cpp:");
    private static final byte[] NOTICE_BYTES = Bytes.ascii("Reducer buckets have been rebuilt");
    private static final String NOTICE = "Reducer buckets have been rebuilt in this iteration.";

    /** A rank's tag: torch 2.x's own {@code [rank3]:} (a rank), a launcher's {@code [default3]:} or {@code [1,3]<stderr>:}. */
    private static final Pattern TAG =
            Pattern.compile("^\\[(?:(rank)(\\d+)|[A-Za-z]*\\d+|\\d+,\\d+)\\](?:<std(?:out|err)>)?:\\s?");
    /** glog's or c10's prefix, then torch's source file and line: {@code I… tid file.cpp:123] } or {@code [I… file.cpp:123] }. */
    private static final Pattern CPP_LINE = Pattern.compile(
            "^\\[?[IWEF](?:\\d{4,8} \\d{2}:\\d{2}:\\d{2}\\.\\d+)?\\s+(?:(\\d+)\\s+)?([\\w.\\-]+\\.(?:cpp|cc|hpp|h)):(\\d+)\\] ?(.*)$");

    private static final Pattern DEBUG = Pattern.compile("^\\[c10d\\] The debug level is set to (\\w+)\\.");
    private static final Pattern REDUCER =
            Pattern.compile("^Reducer initialized with bucket_bytes_cap: (-?\\d+) first_bucket_bytes_cap: (-?\\d+)");
    private static final Pattern DDP_INIT = Pattern.compile("^\\[Rank (\\d+)\\]: DDP Initialized with:\\s*$");
    private static final Pattern RUNTIME = Pattern.compile(
            "^\\[Rank (\\d+) / (\\d+)\\] \\[before iteration (\\d+)\\] Training (.*?) unused_parameter_size=(-?\\d+)\\s*$");
    private static final Pattern REBUILT =
            Pattern.compile("^(\\d+) buckets rebuilt with size limits: ([0-9, ]*?) bytes\\.\\s*$");
    private static final Pattern KEY_VALUE = Pattern.compile("^([a-z_][a-z0-9_]*): ?(.*?)\\s*$");
    private static final Pattern AVG = Pattern.compile(
            "^\\s*Avg (forward compute|backward compute|backward comm\\.|backward comm/comp overlap) time: (-?\\d+)\\s*$");
    private static final Pattern HOOK = Pattern.compile("^\\s*Gradient comm\\. hook: (.*?)\\s*$");
    private static final Pattern JOIN = Pattern.compile("^\\s*Uneven input detection with join\\(\\) enabled\\.\\s*$");
    private static final Map<String, String> AVG_KEYS = Map.of(
            "forward compute",
            "avg_forward_compute_time",
            "backward compute",
            "avg_backward_compute_time",
            "backward comm.",
            "avg_backward_comm_time",
            "backward comm/comp overlap",
            "avg_backward_compute_comm_overlap_time");

    /** A message read, its rank not yet decided. */
    private static final class Pending {
        final Message message;
        final Map<String, String> values = new LinkedHashMap<>();
        final String printedAt;
        final Source source;
        final String thread;
        final Integer named;
        final Integer tagged;

        Pending(Message message, String printedAt, Source source, String thread, Integer named, Integer tagged) {
            this.message = message;
            this.printedAt = printedAt;
            this.source = source;
            this.thread = thread;
            this.named = named;
            this.tagged = tagged;
        }
    }

    private final NcclLogReader r;
    private final List<Pending> read = new ArrayList<>();
    /** The message whose continuation lines may follow, by launcher tag ("" for none). */
    private final Map<String, Pending> open = new HashMap<>();
    /**
     * The message opened last: torch 2.x prefixes a message with its rank ({@code [rank0]:}) on its first line only, so
     * the untagged lines that follow it continue it (one message is one write).
     */
    private Pending last;

    DdpLines(NcclLogReader r) {
        this.r = r;
    }

    /** A line that is not an NCCL line; only lines that may be DDP's are turned into text. */
    void line(byte[] b, int s, int e) {
        if (open.isEmpty() && Bytes.indexOf(b, s, e, CPP) < 0 && Bytes.indexOf(b, s, e, NOTICE_BYTES) < 0) {
            return;
        }
        line(new String(b, s, e - s, StandardCharsets.UTF_8));
    }

    /** An NCCL line ends every message still open (their continuation lines come without NCCL's prefix). */
    void interrupted() {
        if (!open.isEmpty()) {
            open.clear();
            last = null;
        }
    }

    private void line(String text) {
        String tag = "";
        Integer tagged = null;
        Matcher t = TAG.matcher(text);
        if (t.find()) {
            tag = t.group();
            tagged = t.group(1) != null ? Integer.valueOf(t.group(2)) : null;
            text = text.substring(t.end());
        }
        Pending o = open.containsKey(tag)
                ? open.get(tag)
                : tag.isEmpty() && last != null && open.containsValue(last) ? last : null;
        if (o != null && continuation(o, text)) {
            return;
        }
        if (o != null) {
            open.values().remove(o);
        }
        Matcher c = CPP_LINE.matcher(text);
        if (c.matches()) {
            cpp(c.group(2) + ":" + c.group(3), c.group(4), c.group(1), tag, tagged);
        } else if (text.contains(NOTICE)) {
            add(new Pending(Message.BUCKETS_REBUILT_NOTICE, null, here(), null, null, tagged));
        }
    }

    private void cpp(String at, String m, String thread, String tag, Integer tagged) {
        Matcher x;
        if ((x = REDUCER.matcher(m)).find()) {
            Pending p = add(new Pending(Message.REDUCER_INITIALIZED, at, here(), thread, null, tagged));
            p.values.put("bucket_bytes_cap", x.group(1));
            p.values.put("first_bucket_bytes_cap", x.group(2));
        } else if ((x = DDP_INIT.matcher(m)).matches()) {
            Pending p =
                    add(new Pending(Message.DDP_INITIALIZED, at, here(), thread, Integer.valueOf(x.group(1)), tagged));
            open.put(tag, p);
            last = p;
        } else if ((x = RUNTIME.matcher(m)).matches()) {
            Pending p =
                    add(new Pending(Message.RUNTIME_STATS, at, here(), thread, Integer.valueOf(x.group(1)), tagged));
            p.values.put("rank", x.group(1));
            p.values.put("world_size", x.group(2));
            p.values.put("iteration", x.group(3));
            p.values.put("module_name", x.group(4));
            p.values.put("unused_parameter_size", x.group(5));
            open.put(tag, p);
            last = p;
        } else if ((x = REBUILT.matcher(m)).matches()) {
            Pending p = add(new Pending(Message.BUCKETS_REBUILT, at, here(), thread, null, tagged));
            p.values.put("buckets", x.group(1));
            p.values.put("size_limits", x.group(2).strip());
        } else if ((x = DEBUG.matcher(m)).find()) {
            Pending p = add(new Pending(Message.DEBUG_LEVEL, at, here(), thread, null, tagged));
            p.values.put("level", x.group(1));
        } else if (m.contains(NOTICE)) {
            add(new Pending(Message.BUCKETS_REBUILT_NOTICE, at, here(), thread, null, tagged));
        }
    }

    /** True when {@code text} continues the open message {@code o} (and was read into it). */
    private static boolean continuation(Pending o, String text) {
        if (o.message == Message.DDP_INITIALIZED) {
            Matcher kv = KEY_VALUE.matcher(text);
            if (kv.matches() && !CPP_LINE.matcher(text).matches()) {
                o.values.put(kv.group(1), kv.group(2));
                return true;
            }
            return false;
        }
        Matcher x;
        if ((x = AVG.matcher(text)).matches()) {
            o.values.put(AVG_KEYS.get(x.group(1)), x.group(2));
        } else if ((x = HOOK.matcher(text)).matches()) {
            o.values.put("comm_hook", x.group(1));
        } else if (JOIN.matcher(text).matches()) {
            o.values.put("join_uneven_inputs", "1");
        } else {
            return false;
        }
        return true;
    }

    private Source here() {
        return Source.line(r.file, r.lineNo);
    }

    private Pending add(Pending p) {
        read.add(p);
        r.counted();
        return p;
    }

    /** Decides each message's rank (see the class comment) and hands the messages to the file's facts. */
    void finish() {
        open.clear();
        last = null;
        Map<String, Integer> rankOfThread = new HashMap<>();
        Set<Integer> named = new TreeSet<>();
        Set<String> threads = new TreeSet<>();
        for (Pending p : read) {
            if (p.thread != null) {
                threads.add(p.thread);
            }
            if (p.named != null) {
                named.add(p.named);
                if (p.thread != null) {
                    rankOfThread.putIfAbsent(p.thread, p.named);
                }
            }
        }
        Integer sole =
                named.size() == 1 && threads.size() <= 1 ? named.iterator().next() : null;
        for (Pending p : read) {
            Integer rank = p.named != null
                    ? p.named
                    : p.tagged != null
                            ? p.tagged
                            : p.thread != null && rankOfThread.containsKey(p.thread)
                                    ? rankOfThread.get(p.thread)
                                    : r.fileRank != null ? r.fileRank : sole;
            if (p.message == Message.DDP_INITIALIZED
                    && p.values.containsKey("rank")
                    && !p.values.get("rank").equals(String.valueOf(p.named))) {
                r.out.problem(
                        p.source.line(),
                        "DDP Initialized names rank " + p.named + " but its rank line says " + p.values.get("rank"));
            }
            r.ddpLog.add(new Evidence.DdpLogMessage(rank, p.message.label, p.values, p.printedAt, p.source));
        }
    }
}
