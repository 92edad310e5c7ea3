package io.pathproof.scenario;

import io.pathproof.core.PathproofException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A dotted version as printed by the tools ({@code 2.22.3}, {@code 2.5.0a0+872d972e41.nv24.08}, {@code 2.28.9+cuda13.0}).
 * Only major.minor.patch take part in comparisons; the rest is kept as text.
 */
public record Version(int major, int minor, int patch, String text) implements Comparable<Version> {
    private static final Pattern P = Pattern.compile("^v?(\\d+)\\.(\\d+)(?:\\.(\\d+))?.*$");

    public static Version parse(String s) {
        if (s == null) {
            throw PathproofException.badInput("version: missing");
        }
        Matcher m = P.matcher(s.trim());
        if (!m.matches()) {
            throw PathproofException.badInput("version: cannot read '" + s + "' (expected e.g. 2.22.3)");
        }
        int patch = m.group(3) == null ? 0 : Integer.parseInt(m.group(3));
        return new Version(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)), patch, s.trim());
    }

    public static Version of(int major, int minor, int patch) {
        return new Version(major, minor, patch, major + "." + minor + "." + patch);
    }

    @Override
    public int compareTo(Version o) {
        int c = Integer.compare(major, o.major);
        if (c == 0) {
            c = Integer.compare(minor, o.minor);
        }
        if (c == 0) {
            c = Integer.compare(patch, o.patch);
        }
        return c;
    }

    public boolean atLeast(int ma, int mi, int pa) {
        return compareTo(of(ma, mi, pa)) >= 0;
    }

    @Override
    public String toString() {
        return text;
    }
}
