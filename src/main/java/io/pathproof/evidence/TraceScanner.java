package io.pathproof.evidence;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * Walks the structure of a JSON chrome trace on bytes (strings, escapes and bracket depth only), so that an event can
 * be looked at before it is parsed: most events of a Kineto trace (cpu_op, cuda_runtime, flows) carry no fact pathproof
 * keeps and are skipped at memory speed; the others are handed to Jackson as a byte range. Lines are counted for
 * problems. A value may grow the buffer up to {@link #MAX_VALUE}.
 */
final class TraceScanner {
    static final int MAX_VALUE = 64 << 20;

    /** The JSON structure is broken at {@code line}. */
    static final class Broken extends Exception {
        private static final long serialVersionUID = 1L;
        final long line;

        Broken(String message, long line) {
            super(message, null, false, false);
            this.line = line;
        }
    }

    private final InputStream in;
    byte[] buf = new byte[1 << 20];
    int pos;
    private int lim;
    private int mark = -1;
    long line = 1;
    private boolean eof;

    TraceScanner(InputStream in) {
        this.in = in;
    }

    private boolean more() throws IOException, Broken {
        if (pos < lim) {
            return true;
        }
        if (eof) {
            return false;
        }
        int keep = mark >= 0 ? mark : pos;
        if (keep > 0) {
            System.arraycopy(buf, keep, buf, 0, lim - keep);
            lim -= keep;
            pos -= keep;
            if (mark >= 0) {
                mark = 0;
            }
        }
        if (lim == buf.length) {
            if (buf.length >= MAX_VALUE) {
                throw new Broken("a single value longer than " + (MAX_VALUE >> 20) + " MiB", line);
            }
            buf = Arrays.copyOf(buf, buf.length * 2);
        }
        int n = in.read(buf, lim, buf.length - lim);
        if (n < 0) {
            eof = true;
            return false;
        }
        lim += n;
        return true;
    }

    /** The next byte that is not white space (not consumed), or -1 at the end. */
    int peekNonWs() throws IOException, Broken {
        while (more()) {
            byte c = buf[pos];
            if (c == '\n') {
                line++;
            } else if (c != ' ' && c != '\t' && c != '\r') {
                return c & 0xff;
            }
            pos++;
        }
        return -1;
    }

    /** Reads a member name (at its opening quote) as a String. */
    String key() throws IOException, Broken {
        mark = pos;
        pos++;
        skipStringBody();
        String k = Bytes.string(buf, mark + 1, pos - 1);
        mark = -1;
        return k;
    }

    /**
     * Skips one value. With {@code keep} the value stays in {@code buf[rangeStart(), pos)} until the next call.
     */
    void value(boolean keep) throws IOException, Broken {
        int c = peekNonWs();
        if (c < 0) {
            throw new Broken("trace ends where a value was expected", line);
        }
        mark = keep ? pos : -1;
        if (c == '"') {
            pos++;
            skipStringBody();
        } else if (c == '{' || c == '[') {
            int depth = 0;
            while (true) {
                if (!more()) {
                    throw new Broken("trace ends inside an " + (c == '{' ? "object" : "array"), line);
                }
                byte b = buf[pos++];
                switch (b) {
                    case '"' -> skipStringBody();
                    case '{', '[' -> depth++;
                    case '}', ']' -> {
                        if (--depth == 0) {
                            return;
                        }
                    }
                    case '\n' -> line++;
                    default -> {}
                }
            }
        } else {
            while (more()) {
                byte b = buf[pos];
                if (b == ',' || b == '}' || b == ']' || b == ' ' || b == '\n' || b == '\r' || b == '\t') {
                    break;
                }
                pos++;
            }
        }
    }

    int rangeStart() {
        return mark;
    }

    void release() {
        mark = -1;
    }

    /** After an opening quote: finds the closing one, eight bytes at a time, stepping over escapes. */
    private void skipStringBody() throws IOException, Broken {
        while (true) {
            if (!more()) {
                throw new Broken("trace ends inside a string", line);
            }
            int i = Bytes.indexOfEither(buf, pos, lim, (byte) '"', (byte) '\\');
            if (i < 0) {
                pos = lim;
                continue;
            }
            pos = i + 1;
            if (buf[i] == '"') {
                return;
            }
            if (!more()) {
                throw new Broken("trace ends inside a string", line);
            }
            pos++; // the escaped byte
        }
    }
}
