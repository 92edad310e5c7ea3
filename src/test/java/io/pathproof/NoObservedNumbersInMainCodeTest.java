package io.pathproof;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Seed common error 1 (a prediction written after the run): the numbers the seed reports as observations must be
 * derived by the model, so none of them may be written into main code or its resources.
 */
class NoObservedNumbersInMainCodeTest {
    private static final List<String> OBSERVED = List.of("867.66", "245.93", "8.060", "2.330", "48.3");

    @Test
    void noObservedNumberIsWrittenIntoMainCode() throws IOException {
        List<String> hits = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main"))) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)::iterator) {
                // Latin-1 reads any file (a binary resource too); the numbers sought are ASCII.
                String text = Files.readString(f, java.nio.charset.StandardCharsets.ISO_8859_1);
                for (String n : OBSERVED) {
                    if (text.contains(n)) {
                        hits.add(f + " contains " + n);
                    }
                }
            }
        }
        assertThat(hits).isEmpty();
    }
}
