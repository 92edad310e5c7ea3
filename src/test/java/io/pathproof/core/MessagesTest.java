package io.pathproof.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A library's failure told in the user's words: no Jackson notes, no Java type names, "no such file: PATH". */
class MessagesTest {
    @TempDir
    Path tmp;

    record Point(int x, int y) {}

    @Test
    void aLineCutMidObjectSaysSoWithoutJacksonsNotes() {
        JsonProcessingException e = catchThrowableOfType(
                () -> Json.mapper().readTree("{\"rank\": 2, \"iteration\": 7"), JsonProcessingException.class);
        // What Jackson itself says, and what leaked into ingest's problems before.
        assertThat(e.getOriginalMessage()).contains("StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION");
        String m = Messages.json(e);
        assertThat(m)
                .startsWith("Unexpected end-of-input")
                .doesNotContain("Source", "REDACTED", "StreamReadFeature", "`", "\n");
    }

    @Test
    void aValueOfTheWrongTypeIsNamedInWordsNotJavaTypes() {
        JsonProcessingException e = catchThrowableOfType(
                () -> Json.mapper().readValue("{\"x\": \"seven\", \"y\": 1}", Point.class),
                JsonProcessingException.class);
        String m = Messages.json(e);
        assertThat(m).contains("an integer").doesNotContain("`", "java.lang", "io.pathproof", "reference chain", "\n");
    }

    @Test
    void aMissingFileIsNoSuchFile() {
        Path nope = tmp.resolve("nope.json");
        IOException e = catchThrowableOfType(() -> Files.readAllBytes(nope), IOException.class);
        assertThat(Messages.io(e, nope)).isEqualTo("no such file: " + nope);
        IOException old = catchThrowableOfType(() -> Json.mapper().readTree(nope.toFile()), IOException.class);
        assertThat(Messages.io(old, nope)).isEqualTo("no such file: " + nope);
    }
}
