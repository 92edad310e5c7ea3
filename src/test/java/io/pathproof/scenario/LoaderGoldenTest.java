package io.pathproof.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Golden files of the loaders: every {@code testdata/*.input} is read by the loader its name starts with
 * ({@code workload-}, {@code topology-}, {@code scenario-}) and the result — the canonical JSON of the record, or
 * {@code exit N} and the error line — must equal {@code *.expected}. Run with {@code -Dpathproof.golden.update=true}
 * to rewrite the expected files after a deliberate change (then read the diff).
 */
class LoaderGoldenTest {
    static final String DIR = "/io/pathproof/scenario/testdata";

    static String render(Path input) throws IOException {
        String file = input.getFileName().toString();
        String base = file.substring(0, file.length() - ".input".length());
        String text = Files.readString(input, StandardCharsets.UTF_8);
        try {
            Object value;
            if (file.startsWith("workload-")) {
                value = WorkloadReader.read(text, file, base);
            } else if (file.startsWith("topology-")) {
                value = Scenarios.parseTopology(text, file, base, TopologyHints.NONE);
            } else if (file.startsWith("scenario-")) {
                value = ScenarioReader.read(text, file, input.getParent(), base);
            } else {
                throw new IllegalStateException("golden input with no loader prefix: " + file);
            }
            return Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(value) + "\n";
        } catch (PathproofException e) {
            return "exit " + e.exitCode() + "\n" + e.getMessage() + "\n";
        }
    }

    @TestFactory
    Stream<DynamicTest> everyInputMatchesItsExpectedOutput() throws IOException, URISyntaxException {
        Path dir = Path.of(LoaderGoldenTest.class.getResource(DIR).toURI());
        List<Path> inputs;
        try (Stream<Path> s = Files.list(dir)) {
            inputs = s.filter(p -> p.toString().endsWith(".input")).sorted().toList();
        }
        assertThat(inputs).hasSizeGreaterThan(20);
        boolean update = Boolean.getBoolean("pathproof.golden.update");
        return inputs.stream()
                .map(in -> DynamicTest.dynamicTest(in.getFileName().toString(), () -> {
                    String actual = render(in);
                    String name = in.getFileName().toString().replaceFirst("\\.input$", ".expected");
                    if (update) {
                        Path src = Path.of("src/test/resources" + DIR, name);
                        Files.writeString(src, actual, StandardCharsets.UTF_8);
                        return;
                    }
                    Path expected = in.resolveSibling(name);
                    assertThat(Files.exists(expected)).as("%s exists", name).isTrue();
                    assertThat(actual).isEqualTo(Files.readString(expected, StandardCharsets.UTF_8));
                }));
    }
}
