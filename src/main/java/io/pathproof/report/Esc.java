package io.pathproof.report;

import io.pathproof.core.Xml;

/** Escaping for each place text lands: HTML text and attributes, JSON inside a script element, Markdown cells, XML. */
final class Esc {
    private Esc() {}

    static String html(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(s.length() + 16);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> b.append("&lt;");
                case '>' -> b.append("&gt;");
                case '&' -> b.append("&amp;");
                case '"' -> b.append("&quot;");
                case '\'' -> b.append("&#39;");
                default -> {
                    if (c < 0x20 && c != '\n' && c != '\t') {
                        b.append("&#xFFFD;"); // control characters (ANSI colours of nvidia-smi) are not text
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.toString();
    }

    /**
     * JSON text made safe inside {@code <script type="application/json">}: '<', '>' and '&' only occur inside JSON
     * strings, where their \\u escapes mean the same, so no "</script>" or "<!--" can close or bend the element.
     */
    static String scriptJson(String json) {
        return json.replace("<", "\\u003c")
                .replace(">", "\\u003e")
                .replace("&", "\\u0026")
                .replace("\u2028", "\\u2028")
                .replace("\u2029", "\\u2029");
    }

    /** One Markdown table cell: pipes and newlines would split it; HTML in it must stay text where Markdown is rendered. */
    static String md(String s) {
        return s == null ? "" : html(s).replace("|", "\\|").replace("\n", " ");
    }

    /** XML attribute or text; a character XML 1.0 cannot hold shows as U+FFFD, as on the page. */
    static String xml(String s) {
        return Xml.escape(s, "\uFFFD");
    }
}
