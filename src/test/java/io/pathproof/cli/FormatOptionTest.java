package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * {@code --format} is one option ({@link FormatOption}) for every verb that prints a result: each verb's help names
 * exactly the formats it prints, and any other name is refused before the verb reads anything, in one message.
 */
class FormatOptionTest {
    /** Every verb with --format, with the formats it prints. */
    static final Map<String, List<String>> PRINTS = Map.of(
            "accept", List.of("table", "json", "markdown"),
            "diagnose", List.of("table", "json", "markdown"),
            "verify-fix", List.of("table", "json", "markdown"),
            "predict", List.of("table", "json"),
            "explain", List.of("table", "json"),
            "ingest", List.of("table", "json"));

    @Test
    void exactlyTheseVerbsHaveFormatAndEachHelpNamesWhatItPrints() {
        CommandLine cl = new CommandLine(new PathproofCommand());
        for (Map.Entry<String, CommandLine> verb : cl.getSubcommands().entrySet()) {
            OptionSpec o = verb.getValue().getCommandSpec().findOption("--format");
            if (!PRINTS.containsKey(verb.getKey())) {
                assertThat(o)
                        .as(verb.getKey() + " has --format, but this test does not know what it prints")
                        .isNull();
                continue;
            }
            assertThat(o).as(verb.getKey()).isNotNull();
            String help = String.join(" ", o.description()).replace("${DEFAULT-VALUE}", "table");
            String expected = PRINTS.get(verb.getKey()).size() == 3
                    ? "table, json or markdown (default table)"
                    : "table or json (default table)";
            assertThat(help).as(verb.getKey()).isEqualTo(expected);
        }
    }

    @Test
    void aFormatAVerbDoesNotPrintIsRefusedBeforeAnythingIsReadWithOneMessage() {
        for (Map.Entry<String, List<String>> verb : PRINTS.entrySet()) {
            for (String wrong : List.of("yaml", "markdown", "JSON")) {
                if (verb.getValue().contains(wrong)) {
                    continue;
                }
                // The run directories do not exist: a verb that read them first would exit 3, not 2.
                MainTest.Result r = MainTest.run(args(verb.getKey(), wrong));
                assertThat(r.code)
                        .as(verb.getKey() + " " + wrong + ": " + r.err)
                        .isEqualTo(2);
                assertThat(r.err)
                        .as(verb.getKey())
                        .startsWith("pathproof: --format: '" + wrong + "' is not one of "
                                + String.join(", ", verb.getValue()) + "\n");
                assertThat(r.out).isEmpty();
            }
        }
    }

    @Test
    void eachFormatAVerbPrintsIsTaken() {
        for (String f : List.of("table", "json")) {
            MainTest.Result r = MainTest.run("predict", "--scenario", "seed", "--format", f);
            assertThat(r.code).as(r.err).isZero();
            assertThat(r.out.startsWith("{")).as(f).isEqualTo(f.equals("json"));
        }
        MainTest.Result md = MainTest.run(
                "diagnose",
                "--baseline",
                "samples/emulated-h200-x4/run",
                "--variant",
                "samples/emulated-h200-x4/variant-channels",
                "--format",
                "markdown");
        assertThat(md.code).as(md.err).isZero();
        assertThat(md.out).startsWith("### ");
    }

    private static String[] args(String verb, String format) {
        return switch (verb) {
            case "accept" ->
                new String[] {verb, "--prediction", "no-such.json", "--run", "no-such-run", "--format", format};
            case "diagnose" ->
                new String[] {verb, "--baseline", "no-such-a", "--variant", "no-such-b", "--format", format};
            case "verify-fix" ->
                new String[] {verb, "--baseline", "no-such-a", "--fixed", "no-such-b", "--format", format};
            case "predict", "explain" -> new String[] {verb, "--scenario", "seed", "--format", format};
            case "ingest" -> new String[] {verb, "no-such-file", "--format", format};
            default -> throw new IllegalArgumentException(verb);
        };
    }
}
