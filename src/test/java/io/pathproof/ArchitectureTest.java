package io.pathproof;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every room imports only the rooms docs/architecture.md lets it use: the table is read, every main source file's
 * {@code io.pathproof.X} references (imports and qualified names) are checked against its room's row.
 */
class ArchitectureTest {
    private static final Path MAIN = Path.of("src/main/java/io/pathproof");
    private static final Pattern ROW = Pattern.compile("^\\| `([a-z]+)` \\|[^|]*\\| ([^|]*) \\|$");
    private static final Pattern USE = Pattern.compile("\\bio\\.pathproof\\.([a-z]+)\\.[A-Z*]");

    /** Room → the rooms it may use, as the table says ("all rooms" and "all rooms but `x`" spelled out). */
    static Map<String, Set<String>> table() throws IOException {
        Map<String, String> raw = new LinkedHashMap<>();
        for (String line : Files.readAllLines(Path.of("docs/architecture.md"))) {
            Matcher m = ROW.matcher(line.strip());
            if (m.matches() && !m.group(1).equals("room")) {
                raw.put(m.group(1), m.group(2).strip());
            }
        }
        Map<String, Set<String>> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> e : raw.entrySet()) {
            Set<String> may = new TreeSet<>();
            String v = e.getValue();
            if (v.startsWith("all rooms")) {
                may.addAll(raw.keySet());
                Matcher but = Pattern.compile("but `([a-z]+)`").matcher(v);
                while (but.find()) {
                    may.remove(but.group(1));
                }
            } else if (!v.equals("—")) {
                for (String r : v.split(",\\s*")) {
                    may.add(r.strip());
                }
            }
            may.remove(e.getKey());
            out.put(e.getKey(), may);
        }
        return out;
    }

    @Test
    void everyRoomUsesOnlyWhatItsRowAllows() throws IOException {
        Map<String, Set<String>> table = table();
        List<String> rooms;
        try (Stream<Path> s = Files.list(MAIN)) {
            rooms = s.filter(Files::isDirectory)
                    .map(p -> p.getFileName().toString())
                    .sorted()
                    .toList();
        }
        assertThat(table.keySet())
                .as("every room has a row, every row a room")
                .containsExactlyInAnyOrderElementsOf(rooms);
        List<String> arrows = new ArrayList<>();
        for (String room : rooms) {
            try (Stream<Path> files = Files.walk(MAIN.resolve(room))) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    String text = Files.readString(f).replaceAll("\"(\\\\.|[^\"\\\\])*\"", "\"\"");
                    Matcher m = USE.matcher(text);
                    while (m.find()) {
                        String used = m.group(1);
                        if (!used.equals(room)
                                && table.containsKey(used)
                                && !table.get(room).contains(used)) {
                            arrows.add(room + " → " + used + " (" + MAIN.relativize(f) + ")");
                        }
                    }
                }
            }
        }
        assertThat(arrows).as("imports the table does not allow").isEmpty();
    }

    @Test
    void theTableIsReadAsWritten() throws IOException {
        Map<String, Set<String>> t = table();
        assertThat(t.get("core")).isEmpty();
        assertThat(t.get("evidence")).containsExactlyInAnyOrder("core", "nccl", "rundir");
        assertThat(t.get("prove")).contains("run", "report").doesNotContain("cli", "prove");
        assertThat(t.get("cli")).contains("prove", "core").doesNotContain("cli");
    }
}
