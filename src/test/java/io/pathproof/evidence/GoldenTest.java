package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.core.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Fixture → expected JSON of every fact (canonical JSON of the whole Evidence). The expected files were produced by
 * this reader and then checked by hand against the fixtures' READMEs (e.g. the H200 log's 64 coll channels, file
 * 25's NCCL_MAX_NCHANNELS=2 and P2P/CUMEM/read, file 21's NET/IB GDRDMA and WARN). Regenerate deliberately with
 * {@code -Dpathproof.updateGolden=true}; review the diff.
 */
class GoldenTest {
    static final Path GOLDEN = Read.RES.resolve("testdata");

    static Stream<String> fixtures() throws IOException {
        try (Stream<Path> s = Files.list(Read.RES.resolve("public-nccl-logs"))) {
            List<String> logs = s.map(p -> "public-nccl-logs/" + p.getFileName())
                    .filter(n -> n.endsWith(".log"))
                    .sorted()
                    .toList();
            return Stream.concat(
                    logs.stream(),
                    Stream.of(
                            "h200-1rank/nccl-debug.log",
                            "h200-1rank/kineto-trace.json",
                            "h200-1rank/flight-recorder.json",
                            "h200-1rank/ncu-raw.csv",
                            "h200-1rank/ncu-details.csv"));
        }
    }

    @ParameterizedTest
    @MethodSource("fixtures")
    void factsMatchTheGoldenFile(String fixture) throws IOException {
        Evidence ev = Ingest.read(List.of(Read.res(fixture)));
        String actual = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(ev) + "\n";
        Path golden = GOLDEN.resolve(fixture.replace('/', '_') + ".json");
        if (Boolean.getBoolean("pathproof.updateGolden")) {
            Files.createDirectories(GOLDEN);
            Files.writeString(golden, actual, StandardCharsets.UTF_8);
        }
        assertThat(golden).exists();
        assertThat(actual).isEqualTo(Files.readString(golden, StandardCharsets.UTF_8));
        assertThat(ev.files()).allMatch(f -> f.facts() > 0);
    }
}
