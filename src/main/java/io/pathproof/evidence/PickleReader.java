package io.pathproof.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigInteger;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A pickle reader for plain data only: the opcodes torch's flight recorder writes (torch::jit::Pickler with
 * tag_aggregates off, protocol 2: dicts, lists, tuples, strings, ints, floats, bools, None, memo) and those Python's
 * own pickle protocols 3 to 5 use for the same data (FRAME, SHORT_BINUNICODE, MEMOIZE). Any opcode that names a class
 * or a function, builds an object or calls something (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, EXT*,
 * PERSID) is refused: nothing from the stream is ever executed or loaded. The result is a Jackson tree.
 */
final class PickleReader {
    private static final JsonNodeFactory F = JsonNodeFactory.instance;
    private static final Object MARK = new Object();

    /** Input that is not a pickle of plain data, with the byte offset where reading stopped. */
    static final class Refused extends Exception {
        final long offset;

        Refused(String message, long offset) {
            super(message);
            this.offset = offset;
        }
    }

    private final byte[] b;
    private int pos;
    private final List<Object> stack = new ArrayList<>();
    private final List<Integer> marks = new ArrayList<>();
    private final Map<Long, JsonNode> memo = new HashMap<>();

    private PickleReader(byte[] b) {
        this.b = b;
    }

    static JsonNode read(byte[] bytes) throws Refused {
        return new PickleReader(bytes).run();
    }

    /** Runs the opcodes to STOP: each is a value pushed, a memo access or a container built; anything else refused. */
    private JsonNode run() throws Refused {
        while (true) {
            if (pos >= b.length) {
                throw new Refused("pickle ends before its STOP opcode", pos);
            }
            int at = pos;
            int op = b[pos++] & 0xff;
            if (op == '.') {
                if (stack.size() != 1 || !marks.isEmpty()) {
                    throw new Refused("pickle stops with " + stack.size() + " values on its stack", at);
                }
                return node(stack.get(0), at);
            }
            if (!value(op, at) && !memo(op, at) && !container(op, at)) {
                throw new Refused(refusal(op), at);
            }
        }
    }

    /** Framing (PROTO, FRAME), a MARK, or a plain value pushed; false for any other opcode. */
    private boolean value(int op, int at) throws Refused {
        switch (op) {
            case 0x80 -> u(1); // PROTO
            case 0x95 -> u(8); // FRAME: a length hint only
            case '(' -> {
                marks.add(stack.size());
                stack.add(MARK);
            }
            case '}' -> stack.add(F.objectNode());
            case ']' -> stack.add(F.arrayNode());
            case ')' -> stack.add(F.arrayNode());
            case 'N' -> stack.add(F.nullNode());
            case 0x88 -> stack.add(F.booleanNode(true));
            case 0x89 -> stack.add(F.booleanNode(false));
            case 'K' -> stack.add(F.numberNode(u(1)));
            case 'M' -> stack.add(F.numberNode(u(2)));
            case 'J' -> stack.add(F.numberNode((int) u(4)));
            case 0x8a -> stack.add(longOf((int) u(1), at));
            case 0x8b -> stack.add(longOf(length(u(4), at), at));
            case 'G' -> {
                long bits = 0;
                for (int i = 0; i < 8; i++) {
                    bits = (bits << 8) | (byte1(at) & 0xffL);
                }
                stack.add(F.numberNode(Double.longBitsToDouble(bits)));
            }
            case 'X' -> stack.add(text(length(u(4), at), at));
            case 0x8c -> stack.add(text((int) u(1), at));
            case 0x8d -> stack.add(text(length(u(8), at), at));
            default -> {
                return false;
            }
        }
        return true;
    }

    /** The memo: PUT, LONG_BINPUT, MEMOIZE, GET, LONG_BINGET; false for any other opcode. */
    private boolean memo(int op, int at) throws Refused {
        switch (op) {
            case 'q' -> memo.put(u(1), top(at));
            case 'r' -> memo.put(u(4), top(at));
            case 0x94 -> memo.put((long) memo.size(), top(at));
            case 'h' -> stack.add(get(u(1), at));
            case 'j' -> stack.add(get(u(4), at));
            default -> {
                return false;
            }
        }
        return true;
    }

    /** Lists, dicts and tuples filled from the stack (APPEND(S), SETITEM(S), TUPLE, TUPLE1..3); false for others. */
    private boolean container(int op, int at) throws Refused {
        switch (op) {
            case 'a' -> {
                JsonNode v = pop(at);
                array(peek(at), at).add(v);
            }
            case 'e' -> {
                List<Object> items = popMark(at);
                ArrayNode list = array(peek(at), at);
                for (Object o : items) {
                    list.add(node(o, at));
                }
            }
            case 's' -> {
                JsonNode v = pop(at);
                JsonNode k = pop(at);
                object(peek(at), at).set(key(k, at), v);
            }
            case 'u' -> setItems(at);
            case 't' -> {
                ArrayNode t = F.arrayNode();
                for (Object o : popMark(at)) {
                    t.add(node(o, at));
                }
                stack.add(t);
            }
            case 0x85, 0x86, 0x87 -> {
                int n = op - 0x84;
                ArrayNode t = F.arrayNode();
                JsonNode[] items = new JsonNode[n];
                for (int i = n - 1; i >= 0; i--) {
                    items[i] = pop(at);
                }
                for (JsonNode item : items) {
                    t.add(item);
                }
                stack.add(t);
            }
            default -> {
                return false;
            }
        }
        return true;
    }

    private void setItems(int at) throws Refused {
        List<Object> items = popMark(at);
        if (items.size() % 2 != 0) {
            throw new Refused("SETITEMS with an odd number of values", at);
        }
        ObjectNode d = object(peek(at), at);
        for (int i = 0; i < items.size(); i += 2) {
            d.set(key(node(items.get(i), at), at), node(items.get(i + 1), at));
        }
    }

    private static String refusal(int op) {
        String name =
                switch (op) {
                    case 'c' -> "GLOBAL";
                    case 0x93 -> "STACK_GLOBAL";
                    case 'R' -> "REDUCE";
                    case 'b' -> "BUILD";
                    case 'i' -> "INST";
                    case 'o' -> "OBJ";
                    case 0x81 -> "NEWOBJ";
                    case 0x92 -> "NEWOBJ_EX";
                    case 'P', 'Q' -> "PERSID";
                    case 0x82, 0x83, 0x84 -> "EXT";
                    default -> null;
                };
        String hex = String.format("0x%02x", op);
        return name != null
                ? "pickle opcode " + hex + " (" + name
                        + ") refused: it names a class or calls a function; a flight-recorder"
                        + " dump holds only dicts, lists, tuples, strings and numbers, and pathproof never loads code from a pickle"
                : "pickle opcode " + hex + " is not one a flight-recorder dump uses: refused";
    }

    private long u(int n) throws Refused {
        if (pos + n > b.length) {
            throw new Refused("pickle ends inside an opcode's argument", pos);
        }
        long v = 0;
        for (int i = n - 1; i >= 0; i--) {
            v = (v << 8) | (b[pos + i] & 0xffL);
        }
        pos += n;
        return v;
    }

    private int byte1(int at) throws Refused {
        if (pos >= b.length) {
            throw new Refused("pickle ends inside an opcode's argument", at);
        }
        return b[pos++];
    }

    private int length(long n, int at) throws Refused {
        if (n < 0 || n > b.length - pos) {
            throw new Refused("a length of " + n + " bytes runs past the end of the pickle", at);
        }
        return (int) n;
    }

    private JsonNode text(int n, int at) throws Refused {
        if (pos + n > b.length) {
            throw new Refused("a string runs past the end of the pickle", at);
        }
        try {
            String s = StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(b, pos, n))
                    .toString();
            pos += n;
            return F.textNode(s);
        } catch (CharacterCodingException e) {
            throw new Refused("a string is not UTF-8", at);
        }
    }

    private JsonNode longOf(int n, int at) throws Refused {
        if (n > 64 || pos + n > b.length) {
            throw new Refused("a LONG of " + n + " bytes is not an integer a dump holds", at);
        }
        byte[] be = new byte[Math.max(n, 1)];
        for (int i = 0; i < n; i++) {
            be[n - 1 - i] = b[pos + i];
        }
        pos += n;
        BigInteger v = n == 0 ? BigInteger.ZERO : new BigInteger(be);
        return v.bitLength() < 64 ? F.numberNode(v.longValue()) : F.numberNode(v);
    }

    private JsonNode top(int at) throws Refused {
        if (stack.isEmpty() || stack.get(stack.size() - 1) == MARK) {
            throw new Refused("memo put with no value", at);
        }
        return (JsonNode) stack.get(stack.size() - 1);
    }

    private JsonNode get(long id, int at) throws Refused {
        JsonNode v = memo.get(id);
        if (v == null) {
            throw new Refused("memo get of " + id + ", which was never put", at);
        }
        return v;
    }

    private JsonNode pop(int at) throws Refused {
        JsonNode v = top(at);
        stack.remove(stack.size() - 1);
        return v;
    }

    private Object peek(int at) throws Refused {
        return top(at);
    }

    private List<Object> popMark(int at) throws Refused {
        if (marks.isEmpty()) {
            throw new Refused("no MARK for this opcode", at);
        }
        int m = marks.remove(marks.size() - 1);
        List<Object> items = new ArrayList<>(stack.subList(m + 1, stack.size()));
        stack.subList(m, stack.size()).clear();
        return items;
    }

    private static JsonNode node(Object o, int at) throws Refused {
        if (o instanceof JsonNode n) {
            return n;
        }
        throw new Refused("a MARK where a value was expected", at);
    }

    private static ArrayNode array(Object o, int at) throws Refused {
        if (o instanceof ArrayNode a) {
            return a;
        }
        throw new Refused("APPEND(S) to something that is not a list", at);
    }

    private static ObjectNode object(Object o, int at) throws Refused {
        if (o instanceof ObjectNode d) {
            return d;
        }
        throw new Refused("SETITEM(S) on something that is not a dict", at);
    }

    private static String key(JsonNode k, int at) throws Refused {
        if (k.isTextual()) {
            return k.textValue();
        }
        if (k.isIntegralNumber()) {
            return k.asText();
        }
        throw new Refused("a dict key that is neither a string nor an integer", at);
    }
}
