package io.pathproof.evidence;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/** Byte-level helpers for the line readers: no regex and no String on the hot path. */
final class Bytes {
    static final long NONE = Long.MIN_VALUE;

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long ONES = 0x0101010101010101L;
    private static final long HIGHS = 0x8080808080808080L;

    private Bytes() {}

    /**
     * Index of byte {@code v} in {@code b[from, to)}, or -1; eight bytes at a time (the lowest set bit of
     * {@code (x - 0x01..) & ~x & 0x80..} marks the first zero byte of {@code x} exactly).
     */
    static int indexOfByte(byte[] b, int from, int to, byte v) {
        long pattern = ONES * (v & 0xff);
        int i = from;
        for (; i + 8 <= to; i += 8) {
            long x = (long) LONGS.get(b, i) ^ pattern;
            long t = (x - ONES) & ~x & HIGHS;
            if (t != 0) {
                return i + (Long.numberOfTrailingZeros(t) >>> 3);
            }
        }
        for (; i < to; i++) {
            if (b[i] == v) {
                return i;
            }
        }
        return -1;
    }

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** Index of the first {@code v1} or {@code v2} in {@code b[from, to)}, or -1; eight bytes at a time. */
    static int indexOfEither(byte[] b, int from, int to, byte v1, byte v2) {
        long p1 = ONES * (v1 & 0xff);
        long p2 = ONES * (v2 & 0xff);
        int i = from;
        for (; i + 8 <= to; i += 8) {
            long w = (long) LONGS.get(b, i);
            long x = w ^ p1;
            long y = w ^ p2;
            long t = ((x - ONES) & ~x & HIGHS) | ((y - ONES) & ~y & HIGHS);
            if (t != 0) {
                return i + (Long.numberOfTrailingZeros(t) >>> 3);
            }
        }
        for (; i < to; i++) {
            if (b[i] == v1 || b[i] == v2) {
                return i;
            }
        }
        return -1;
    }

    /** Index of {@code needle} in {@code b[from, to)}, or -1, searching for its second byte (when its first is common). */
    static int indexOfBySecond(byte[] b, int from, int to, byte[] needle) {
        int n = needle.length;
        int i = from + 1;
        while (i <= to - n + 1) {
            i = indexOfByte(b, i, to - n + 2, needle[1]);
            if (i < 0) {
                return -1;
            }
            if (b[i - 1] == needle[0]) {
                int j = 2;
                while (j < n && b[i - 1 + j] == needle[j]) {
                    j++;
                }
                if (j == n) {
                    return i - 1;
                }
            }
            i++;
        }
        return -1;
    }

    /** Index of {@code needle} in {@code b[from, to)}, or -1. */
    static int indexOf(byte[] b, int from, int to, byte[] needle) {
        int n = needle.length;
        if (n == 0) {
            return from;
        }
        byte first = needle[0];
        int last = to - n;
        int i = from;
        while (i <= last) {
            i = indexOfByte(b, i, last + 1, first);
            if (i < 0) {
                return -1;
            }
            int j = 1;
            while (j < n && b[i + j] == needle[j]) {
                j++;
            }
            if (j == n) {
                return i;
            }
            i++;
        }
        return -1;
    }

    static boolean startsWith(byte[] b, int from, int to, byte[] prefix) {
        if (to - from < prefix.length) {
            return false;
        }
        for (int j = 0; j < prefix.length; j++) {
            if (b[from + j] != prefix[j]) {
                return false;
            }
        }
        return true;
    }

    static boolean isDigit(byte c) {
        return c >= '0' && c <= '9';
    }

    /** Parses an unsigned decimal in {@code b[from, to)} exactly (no sign, no spaces); NONE if not one or too long. */
    static long parseLong(byte[] b, int from, int to) {
        if (from >= to || to - from > 18) {
            return NONE;
        }
        long v = 0;
        for (int i = from; i < to; i++) {
            byte c = b[i];
            if (c < '0' || c > '9') {
                return NONE;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }

    /** End of the run of decimal digits starting at {@code from} (optionally one leading '-'). */
    static int digitsEnd(byte[] b, int from, int to) {
        int i = from;
        if (i < to && b[i] == '-') {
            i++;
        }
        while (i < to && isDigit(b[i])) {
            i++;
        }
        return i;
    }

    /** Parses a signed decimal in {@code b[from, to)}; NONE if not one. */
    static long parseSigned(byte[] b, int from, int to) {
        if (from < to && b[from] == '-') {
            long v = parseLong(b, from + 1, to);
            return v == NONE ? NONE : -v;
        }
        return parseLong(b, from, to);
    }

    /** Parses {@code 0x…} (or bare) hex of at most 16 digits; NONE if not one. */
    static long parseHex(byte[] b, int from, int to) {
        if (to - from >= 2 && b[from] == '0' && (b[from + 1] == 'x' || b[from + 1] == 'X')) {
            from += 2;
        }
        if (from >= to || to - from > 16) {
            return NONE;
        }
        long v = 0;
        for (int i = from; i < to; i++) {
            int c = b[i];
            int d;
            if (c >= '0' && c <= '9') {
                d = c - '0';
            } else if (c >= 'a' && c <= 'f') {
                d = c - 'a' + 10;
            } else if (c >= 'A' && c <= 'F') {
                d = c - 'A' + 10;
            } else {
                return NONE;
            }
            v = (v << 4) | d;
        }
        return v;
    }

    static int skipSpaces(byte[] b, int from, int to) {
        while (from < to && b[from] == ' ') {
            from++;
        }
        return from;
    }

    static int tokenEnd(byte[] b, int from, int to) {
        int i = indexOfByte(b, from, to, (byte) ' ');
        return i < 0 ? to : i;
    }

    static String string(byte[] b, int from, int to) {
        return new String(b, from, to - from, StandardCharsets.UTF_8);
    }
}
