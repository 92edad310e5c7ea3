package io.pathproof.nccl;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.reflect.Array;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads {@code versions.txt}, the NCCL version families as data: one {@code [family]} section per family, {@code key =
 * value} lines named as {@link NcclVersionTable}'s components, {@code #} comments citing NCCL's source, and
 * {@code like = family} to start from an earlier section. The file's own header describes the values.
 */
final class VersionTableFile {
    private static final String RESOURCE = "versions.txt";
    /** A family "2.M.x" covers every patch of 2.M. */
    private static final int ANY_PATCH = 999;

    private static final Set<String> FROM_THE_NAME =
            Set.of("family", "firstMinor", "lastMinor", "firstPatch", "lastPatch");

    private VersionTableFile() {}

    static List<NcclVersionTable> read() {
        List<NcclVersionTable> out = new ArrayList<>();
        sections().forEach((family, values) -> out.add(table(family, values)));
        return List.copyOf(out);
    }

    /** The sections in file order, each with its own values and those it takes from the section it is like. */
    private static Map<String, Map<String, String>> sections() {
        Map<String, Map<String, String>> sections = new LinkedHashMap<>();
        Map<String, String> current = null;
        String key = null;
        StringBuilder pending = null;
        int depth = 0;
        for (String raw : lines()) {
            int hash = raw.indexOf('#');
            String line = (hash < 0 ? raw : raw.substring(0, hash)).strip();
            if (pending != null) {
                pending.append(' ').append(line);
                depth += depth(line);
                if (depth == 0) {
                    current.put(key, pending.toString());
                    pending = null;
                }
            } else if (line.startsWith("[") && line.endsWith("]")) {
                current = new LinkedHashMap<>();
                sections.put(line.substring(1, line.length() - 1), current);
            } else if (!line.isEmpty()) {
                int eq = line.indexOf('=');
                if (current == null || eq < 0) {
                    throw malformed(raw);
                }
                key = line.substring(0, eq).strip();
                String value = line.substring(eq + 1).strip();
                depth = depth(value);
                if (key.equals("like")) {
                    Map<String, String> base = sections.get(value);
                    if (base == null || !current.isEmpty()) {
                        throw malformed(raw + " (like names an earlier section, first in a section)");
                    }
                    current.putAll(base);
                } else if (depth > 0) {
                    pending = new StringBuilder(value);
                } else {
                    current.put(key, value);
                }
            }
        }
        if (pending != null) {
            throw malformed(key + " = " + pending + " (unclosed {)");
        }
        return sections;
    }

    private static NcclVersionTable table(String family, Map<String, String> values) {
        Set<String> unknown = new HashSet<>(values.keySet());
        String[] ends = family.split("-");
        int[] first = point(ends[0], 0);
        int[] last = point(ends[ends.length - 1], ANY_PATCH);
        Map<String, Object> fromName = Map.of(
                "family",
                family,
                "firstMinor",
                first[0],
                "firstPatch",
                first[1],
                "lastMinor",
                last[0],
                "lastPatch",
                last[1]);
        NcclVersionTable t = Records.build(NcclVersionTable.class, c -> {
            if (FROM_THE_NAME.contains(c.getName())) {
                return fromName.get(c.getName());
            }
            unknown.remove(c.getName());
            String text = values.get(c.getName());
            if (text == null) {
                throw new IllegalStateException(RESOURCE + " [" + family + "]: no " + c.getName());
            }
            return value(c, c.getType(), text);
        });
        if (!unknown.isEmpty()) {
            throw new IllegalStateException(RESOURCE + " [" + family + "]: unknown keys " + unknown);
        }
        return t;
    }

    /** "2.27.5" is minor 27, patch 5; "2.28.x" minor 28 and the patch given for x. */
    private static int[] point(String version, int patchOfX) {
        String[] p = version.split("\\.");
        if (p.length != 3 || !p[0].equals("2")) {
            throw new IllegalStateException(
                    RESOURCE + ": a family is named 2.M.x, 2.M.P or 2.M.P-2.M.P, not " + version);
        }
        return new int[] {Integer.parseInt(p[1]), p[2].equals("x") ? patchOfX : Integer.parseInt(p[2])};
    }

    private static Object value(RecordComponent c, Class<?> type, String text) {
        try {
            if (type.isArray()) {
                return text.equals("none") ? null : array(c, type, text);
            }
            if (type == String.class) {
                return text;
            }
            if (type == boolean.class) {
                if (!text.equals("true") && !text.equals("false")) {
                    throw new IllegalArgumentException("not true or false");
                }
                return Boolean.parseBoolean(text);
            }
            if (type == int.class) {
                return Math.toIntExact(integer(text));
            }
            if (type == long.class) {
                return integer(text);
            }
            if (type == float.class) {
                return Float.parseFloat(text);
            }
            if (type == double.class) {
                return real(text);
            }
            if (type.isEnum()) {
                return enumConstant(type, text);
            }
        } catch (IllegalArgumentException | ArithmeticException e) {
            throw new IllegalStateException(RESOURCE + ": " + c.getName() + " = " + text + ": " + e.getMessage(), e);
        }
        throw new IllegalStateException(RESOURCE + ": no reading for " + type + " (" + c.getName() + ")");
    }

    private static Object array(RecordComponent c, Class<?> type, String text) {
        if (!text.startsWith("{") || !text.endsWith("}")) {
            throw new IllegalArgumentException("a list is written {a, b, ...}");
        }
        List<String> items = new ArrayList<>();
        int depth = 0;
        int from = 1;
        for (int i = 1; i < text.length() - 1; i++) {
            char ch = text.charAt(i);
            depth += ch == '{' ? 1 : ch == '}' ? -1 : 0;
            if (ch == ',' && depth == 0) {
                items.add(text.substring(from, i).strip());
                from = i + 1;
            }
        }
        String lastItem = text.substring(from, text.length() - 1).strip();
        if (!lastItem.isEmpty()) {
            items.add(lastItem);
        }
        Class<?> element = type.getComponentType();
        Object array = Array.newInstance(element, items.size());
        for (int i = 0; i < items.size(); i++) {
            Array.set(array, i, value(c, element, items.get(i)));
        }
        return array;
    }

    /** An integer: a number, a named constant, {@code a * b} or {@code a << b}. */
    private static long integer(String text) {
        String[] shift = text.split("<<");
        if (shift.length == 2) {
            return integer(shift[0]) << integer(shift[1]);
        }
        String[] product = text.split("\\*");
        if (product.length == 2) {
            return integer(product[0]) * integer(product[1]);
        }
        Integer named = named(text.strip());
        return named != null ? named : Long.parseLong(text.strip());
    }

    /** A double: a number or {@code a * b}, computed as Java computes {@code 2 * 36.7}. */
    private static double real(String text) {
        String[] product = text.split("\\*");
        if (product.length == 2) {
            return real(product[0]) * real(product[1]);
        }
        return Double.parseDouble(text.strip());
    }

    private static Object enumConstant(Class<?> type, String name) {
        for (Object constant : type.getEnumConstants()) {
            if (((Enum<?>) constant).name().equals(name)) {
                return constant;
            }
        }
        throw new IllegalArgumentException("not a constant of " + type.getSimpleName());
    }

    /** A path type by name (graph/topo.h), or a thread constant the launch rules are written in; null otherwise. */
    private static Integer named(String name) {
        for (int i = 0; i < NcclVersionTable.PATH_NAMES.length; i++) {
            if (NcclVersionTable.PATH_NAMES[i].equals(name)) {
                return i;
            }
        }
        return name.equals("WARP_SIZE")
                ? Integer.valueOf(NcclVersionTable.WARP_SIZE)
                : name.equals("NCCL_MIN_NTHREADS") ? Integer.valueOf(NcclVersionTable.NCCL_MIN_NTHREADS) : null;
    }

    private static int depth(String s) {
        int d = 0;
        for (int i = 0; i < s.length(); i++) {
            d += s.charAt(i) == '{' ? 1 : s.charAt(i) == '}' ? -1 : 0;
        }
        return d;
    }

    private static List<String> lines() {
        try (InputStream in = VersionTableFile.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException(RESOURCE + " is missing beside " + VersionTableFile.class.getName());
            }
            return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))
                    .lines()
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static IllegalStateException malformed(String line) {
        return new IllegalStateException(RESOURCE + ": malformed line: " + line);
    }
}
