package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import io.pathproof.rundir.Vocabulary;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * vocabulary.json is what the Java side and the Python instrumentation share (the fault knobs, the hook period, the
 * variables every rank gets): each side reads it, and these checks fail when a side names something else.
 */
class VocabularyTest {
    private static final Path FILE = Path.of("python", "pathproof_torch", "vocabulary.json");
    private static final Path HARNESS =
            Path.of("src", "main", "resources", "io", "pathproof", "run", RunDirectory.HARNESS);
    private static final Path PACKAGE = Path.of("python", "pathproof_torch");

    private static JsonNode file() throws IOException {
        return Json.mapper().readTree(FILE.toFile());
    }

    @Test
    void theJarCarriesThePythonPackagesOwnFile() throws IOException {
        try (InputStream in = Vocabulary.class.getResourceAsStream(Vocabulary.RESOURCE)) {
            assertThat(in).as(Vocabulary.RESOURCE).isNotNull();
            assertThat(in.readAllBytes()).isEqualTo(Files.readAllBytes(FILE));
        }
    }

    @Test
    void theJavaSideTakesEveryPartFromIt() throws IOException {
        JsonNode v = file();
        List<String> knobs = new ArrayList<>();
        v.path("knobs").fieldNames().forEachRemaining(knobs::add);
        Map<String, String> rankEnv = new LinkedHashMap<>();
        v.path("rankEnv")
                .fields()
                .forEachRemaining(e -> rankEnv.put(e.getKey(), e.getValue().asText()));
        assertThat(knobs).isNotEmpty();
        assertThat(Injection.KNOBS).isEqualTo(knobs);
        assertThat(Runner.Instrumentation.DEFAULT_HOOK_EVERY)
                .isEqualTo(v.path("hookEvery").asInt(-1));
        assertThat(HarnessInvocation.NCCL_DEFAULTS).isEqualTo(rankEnv).containsKey("NCCL_DEBUG_SUBSYS");
    }

    /** A knob added to the file but not taught to one of its readers would be accepted and then silently ignored. */
    @Test
    void everyKnobHasItsReaderOnEachSide() throws IOException {
        String injection = Files.readString(Path.of("src", "main", "java", "io", "pathproof", "run", "Injection.java"));
        String harness = Files.readString(HARNESS);
        String instrumentation = Files.readString(PACKAGE.resolve("_run.py"));
        for (var it = file().path("knobs").fieldNames(); it.hasNext(); ) {
            String k = it.next();
            assertThat(injection).as("Injection.checkKnob reads " + k).contains("case \"" + k + "\":");
            assertThat(harness).as("harness.py parse_knobs reads " + k).contains("\"" + k + "\"");
            assertThat(instrumentation).as("pathproof_torch/_run.py reads " + k).contains("\"" + k + "\"");
        }
    }

    /**
     * Where a source still writes a shared value out (a remedy's advice, a comment), it must be the file's: a
     * {@code NAME=VALUE} of a rank variable, or a hook period given as a number. A source that reads the file instead
     * passes by construction; one that copies it passes only while the copy is right.
     */
    @Test
    void noSourceWritesASharedValueOtherwise() throws IOException {
        JsonNode v = file();
        List<String> drift = new ArrayList<>();
        List<Path> sources = sources();
        assertThat(sources).contains(HARNESS, PACKAGE.resolve("_run.py"));
        for (var it = v.path("rankEnv").fields(); it.hasNext(); ) {
            var e = it.next();
            Pattern p = Pattern.compile("\\b" + e.getKey() + "=([A-Za-z0-9_]+(?:,[A-Za-z0-9_]+)*)");
            for (Path f : sources) {
                Matcher m = p.matcher(Files.readString(f));
                while (m.find()) {
                    // One subsystem of a list (NCCL_DEBUG_SUBSYS=TUNING) names where a line comes from, not what a run
                    // sets.
                    boolean oneOfTheList =
                            e.getValue().asText().contains(",") && !m.group(1).contains(",");
                    if (!oneOfTheList && !m.group(1).equals(e.getValue().asText())) {
                        drift.add(f + ": " + m.group());
                    }
                }
            }
        }
        Pattern period = Pattern.compile("(?i)\\bhook_?every\\w*\\s*[=:]\\s*(\\d+)");
        List<String> periods =
                List.of(v.path("hookEvery").asText(), v.path("hookEveryNccl").asText());
        for (Path f : sources) {
            Matcher m = period.matcher(Files.readString(f));
            while (m.find()) {
                if (!periods.contains(m.group(1))) {
                    drift.add(f + ": " + m.group());
                }
            }
        }
        assertThat(drift).as("values vocabulary.json holds, written otherwise").isEmpty();
    }

    private static List<Path> sources() throws IOException {
        List<Path> out = new ArrayList<>();
        for (Path root : List.of(Path.of("src", "main"), PACKAGE)) {
            try (Stream<Path> s = Files.walk(root)) {
                s.filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".py"))
                        .sorted()
                        .forEach(out::add);
            }
        }
        return out;
    }
}
