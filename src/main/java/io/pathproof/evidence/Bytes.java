package io.pathproof.evidence;

import java.nio.charset.StandardCharsets;

/** Byte-level helpers for the line readers: no regex and no String on the hot path. */
final class Bytes {
  static final long NONE = Long.MIN_VALUE;

  private Bytes() {}

  static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  /** Index of {@code needle} in {@code b[from, to)}, or -1. */
  static int indexOf(byte[] b, int from, int to, byte[] needle) {
    int n = needle.length;
    if (n == 0) {
      return from;
    }
    byte first = needle[0];
    int last = to - n;
    outer:
    for (int i = from; i <= last; i++) {
      if (b[i] != first) {
        continue;
      }
      for (int j = 1; j < n; j++) {
        if (b[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
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
    while (from < to && b[from] != ' ') {
      from++;
    }
    return from;
  }

  static String string(byte[] b, int from, int to) {
    return new String(b, from, to - from, StandardCharsets.UTF_8);
  }
}
