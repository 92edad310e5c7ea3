package io.pathproof.core;

/**
 * Text for an XML 1.0 document (attribute values and character data): the JUnit XML of accept and of report. HTML
 * is not XML here: the report's page escapes with its own rules (an apostrophe as {@code &#39;}, which HTML 4 knows
 * and {@code &apos;} is not part of).
 */
public final class Xml {
    private Xml() {}

    /**
     * {@code s} with {@code < > & " '} as XML's predefined entities and every code point outside XML 1.0's Char
     * production (control characters other than tab, newline and return; U+FFFE, U+FFFF; unpaired surrogates) written
     * as {@code forbidden}; null is the empty string.
     */
    public static String escape(String s, String forbidden) {
        if (s == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(s.length());
        s.codePoints().forEach(cp -> {
            switch (cp) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&apos;");
                default -> {
                    if (cp == 0x9
                            || cp == 0xA
                            || cp == 0xD
                            || (cp >= 0x20 && cp <= 0xD7FF)
                            || (cp >= 0xE000 && cp <= 0xFFFD)
                            || cp > 0xFFFF) {
                        b.appendCodePoint(cp);
                    } else {
                        b.append(forbidden);
                    }
                }
            }
        });
        return b.toString();
    }
}
