package io.pathproof.evidence;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One Kineto event as {@link KinetoReader} keeps it, read field by field with Jackson's parser (one instance, reused
 * for every event of a trace): category and name as constants or canonical Strings, times as exact ns where their
 * text allows ({@link #NO_NS} otherwise, the text kept), and the args of kernels, copies and collective ops.
 */
final class KinetoEvent {
    String cat;
    String name;
    Integer pid;
    Integer tid;
    /** ts and dur as printed, kept only when the fast path could not read them ({@link #tsNs} is then NO_NS). */
    String ts;

    String dur;
    long tsNs;
    long durNs;
    Integer device;
    Integer stream;
    Long bytes;
    int[] grid;
    int[] block;
    Map<String, String> collective;

    /** Reads one event's fields (the parser on its START_OBJECT), forgetting the previous event's. */
    void read(JsonParser p) throws IOException {
        cat = name = ts = dur = null;
        tsNs = durNs = NO_NS;
        pid = tid = device = stream = null;
        bytes = null;
        grid = block = null;
        collective = null;
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken v = p.nextToken();
            switch (field) {
                case "cat" -> cat = v == JsonToken.VALUE_STRING ? category(p) : null;
                case "name" -> {
                    // The name is kept only for kernels, ranges and collective ops; cat precedes name in Kineto's
                    // output, so
                    // most events never make a String of it.
                    if (v == JsonToken.VALUE_STRING && (cat == null || cat != OTHER)) {
                        name = cat == CPU_OP
                                ? (same(p, "record_param_comms") ? "record_param_comms" : null)
                                : canonical(p.getText());
                    }
                }
                case "pid" -> pid = intOrNull(p, v);
                case "tid" -> tid = intOrNull(p, v);
                case "ts" -> {
                    if (v.isNumeric()) {
                        tsNs = fastNs(p);
                        ts = tsNs == NO_NS ? p.getText() : null;
                    }
                }
                case "dur" -> {
                    if (v.isNumeric()) {
                        durNs = fastNs(p);
                        dur = durNs == NO_NS ? p.getText() : null;
                    }
                }
                case "args" -> {
                    if (v == JsonToken.START_OBJECT && interesting()) {
                        args(p);
                    } else {
                        p.skipChildren();
                    }
                }
                default -> p.skipChildren();
            }
        }
    }

    /** A time not read on the fast path (see {@link #fastNs}): its text is in ts/dur. */
    static final long NO_NS = Long.MIN_VALUE;
    /** Any category pathproof keeps nothing of. */
    static final String OTHER = "other";

    private static final String CPU_OP = "cpu_op";
    private static final String[] CATEGORIES = {
        "kernel",
        "Kernel",
        "gpu_memcpy",
        "gpu_memset",
        "Memcpy",
        "Memset",
        "user_annotation",
        "gpu_user_annotation",
        CPU_OP
    };
    private final java.util.Map<String, String> names = new java.util.HashMap<>();

    /** The category as one of a few constants (no String made for the common ones), OTHER for the rest. */
    private static String category(JsonParser p) throws IOException {
        for (String c : CATEGORIES) {
            if (same(p, c)) {
                return c;
            }
        }
        return OTHER;
    }

    private static boolean same(JsonParser p, String s) throws IOException {
        int len = p.getTextLength();
        if (len != s.length()) {
            return false;
        }
        char[] c = p.getTextCharacters();
        int off = p.getTextOffset();
        for (int i = 0; i < len; i++) {
            if (c[off + i] != s.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Kernel names repeat: keep one String per distinct name (bounded), so 100 000 kernels do not hold 100 000 copies.
     */
    private String canonical(String n) {
        String c = names.get(n);
        if (c != null) {
            return c;
        }
        if (names.size() < 50_000) {
            names.put(n, n);
        }
        return n;
    }

    /**
     * Plain decimal µs with at most 3 decimals ("5354382075105.754") → ns in exact long arithmetic; NO_NS when the text
     * has another shape (exponent, more decimals, too long), which then goes through BigDecimal.
     */
    private static long fastNs(JsonParser p) throws IOException {
        char[] c = p.getTextCharacters();
        int off = p.getTextOffset();
        int len = p.getTextLength();
        if (len == 0 || len > 19) {
            return NO_NS;
        }
        long v = 0;
        int frac = -1;
        int i = 0;
        boolean neg = c[off] == '-';
        if (neg) {
            i = 1;
        }
        for (; i < len; i++) {
            char ch = c[off + i];
            if (ch >= '0' && ch <= '9') {
                if (frac >= 0 && ++frac > 3) {
                    return NO_NS;
                }
                v = v * 10 + (ch - '0');
            } else if (ch == '.' && frac < 0) {
                frac = 0;
            } else {
                return NO_NS;
            }
        }
        for (int k = Math.max(frac, 0); k < 3; k++) {
            v *= 10;
        }
        return neg ? -v : v;
    }

    /** Args are read only for kernels, memcpys and collective ops (cat and name come first in Kineto's output). */
    private boolean interesting() {
        return cat == null
                || cat.equalsIgnoreCase("kernel")
                || "record_param_comms".equals(name)
                || cat.equals("gpu_memcpy")
                || cat.equals("gpu_memset")
                || cat.equals("Memcpy")
                || cat.equals("Memset");
    }

    private void args(JsonParser p) throws IOException {
        while (p.nextToken() == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken v = p.nextToken();
            switch (field) {
                case "device" -> device = intOrNull(p, v);
                case "bytes" ->
                    bytes = v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER
                            ? Long.valueOf(p.getLongValue())
                            : null;
                case "stream" -> stream = intOrNull(p, v);
                case "grid" -> grid = dims(p, v);
                case "block" -> block = dims(p, v);
                case "Collective name",
                        "In msg nelems",
                        "Out msg nelems",
                        "Group size",
                        "dtype",
                        "Process Group Name",
                        "Process Group Description",
                        "Process Group Ranks",
                        "In split size",
                        "Out split size",
                        "Rank",
                        "Seq" -> {
                    if (v.isScalarValue()) {
                        if (collective == null) {
                            collective = new LinkedHashMap<>();
                        }
                        collective.put(field, p.getText());
                    } else {
                        p.skipChildren();
                    }
                }
                default -> p.skipChildren();
            }
        }
    }

    private static Integer intOrNull(JsonParser p, JsonToken v) throws IOException {
        if (v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT) {
            return p.getIntValue();
        }
        p.skipChildren();
        return null;
    }

    private int[] dims(JsonParser p, JsonToken v) throws IOException {
        if (v != JsonToken.START_ARRAY) {
            p.skipChildren();
            return null;
        }
        int[] d = new int[3];
        int n = 0;
        JsonToken t;
        boolean ok = true;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t == null) {
                return null;
            }
            if (t == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT && n < 3) {
                d[n++] = p.getIntValue();
            } else {
                ok = false;
                p.skipChildren();
            }
        }
        return ok && n == 3 ? d : null;
    }
}
