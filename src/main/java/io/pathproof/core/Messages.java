package io.pathproof.core;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The words a user reads when a library fails under pathproof: one line that says what is wrong with the input, never
 * the library's own notes (Jackson's {@code [Source: REDACTED (`StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION`
 * disabled)]}, its Java type names, a reference chain) and never an exception's class name. The file and line are
 * the caller's to add: it knows which file it was reading.
 */
public final class Messages {
    private Messages() {}

    /** A file or directory the user named does not exist. */
    public static String noSuchFile(Path p) {
        return noSuchFile(String.valueOf(p));
    }

    /** As {@link #noSuchFile(Path)}, for a name that was never made a path (it may not be a valid one). */
    public static String noSuchFile(String name) {
        return "no such file: " + name;
    }

    private static final Pattern START_MARKER = Pattern.compile("\\s*\\(start marker at .*$");
    private static final Pattern SOURCE = Pattern.compile("\\s*\\[Source: [^\\]]*\\]");
    private static final Pattern TYPE = Pattern.compile("`([A-Za-z_$][\\w$]*(?:\\.[A-Za-z_$][\\w$]*)*)(?:\\[\\])?`");
    private static final Map<String, String> TYPE_WORDS = Map.ofEntries(
            Map.entry("int", "an integer"),
            Map.entry("long", "an integer"),
            Map.entry("short", "an integer"),
            Map.entry("java.lang.Integer", "an integer"),
            Map.entry("java.lang.Long", "an integer"),
            Map.entry("java.lang.Short", "an integer"),
            Map.entry("java.math.BigInteger", "an integer"),
            Map.entry("double", "a number"),
            Map.entry("float", "a number"),
            Map.entry("java.lang.Double", "a number"),
            Map.entry("java.lang.Float", "a number"),
            Map.entry("java.math.BigDecimal", "a number"),
            Map.entry("boolean", "true or false"),
            Map.entry("java.lang.Boolean", "true or false"),
            Map.entry("java.lang.String", "a string"),
            Map.entry("char", "a character"));

    /**
     * What a JSON parser or binder found wrong, in its own first line without its notes: "Unexpected end-of-input:
     * expected close marker for Object", "Cannot deserialize value of type an integer from String "x"".
     */
    public static String json(JsonProcessingException e) {
        String m = e.getOriginalMessage();
        if (m == null || m.isBlank()) {
            return "malformed JSON";
        }
        m = firstLine(m);
        m = START_MARKER.matcher(m).replaceFirst("");
        m = SOURCE.matcher(m).replaceAll("");
        Matcher t = TYPE.matcher(m);
        StringBuilder sb = new StringBuilder();
        while (t.find()) {
            String name = t.group(1);
            String word = TYPE_WORDS.get(name);
            if (word == null) {
                // A class of ours or of a library: its simple name says no more to a user than "a value of this field".
                word = name.contains(".") ? "a value of this field" : name;
            }
            t.appendReplacement(sb, Matcher.quoteReplacement(word));
        }
        t.appendTail(sb);
        return sb.toString().strip();
    }

    /** An I/O failure on {@code p}, as a user would say it: "no such file: p", "permission denied: p", …. */
    public static String io(IOException e, Path p) {
        if (e instanceof NoSuchFileException) {
            return noSuchFile(p);
        }
        if (e instanceof AccessDeniedException) {
            return "permission denied: " + p;
        }
        if (e instanceof NotDirectoryException) {
            return "not a directory: " + p;
        }
        if (e instanceof JsonProcessingException j) {
            return json(j);
        }
        String m = e.getMessage();
        if (m == null || m.isBlank()) {
            return "cannot read " + p;
        }
        // java.io's FileNotFoundException says "p (No such file or directory)"; keep the reason, not the path twice.
        m = firstLine(m);
        if (m.endsWith("(No such file or directory)")) {
            return noSuchFile(p);
        }
        return m;
    }

    static String firstLine(String s) {
        int i = s.indexOf('\n');
        return i < 0 ? s : s.substring(0, i);
    }
}
