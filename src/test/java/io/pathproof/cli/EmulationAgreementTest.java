package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The agreement table of docs/emulation.md, kept by CI: for every AllReduce that NCCL's rank 0 logged in a committed
 * sweep (samples/emulation-sweep/nccl*: real NCCL on emulated machines), {@code predict} on the same topology file,
 * environment, rank count and NCCL version must say the same algorithm, protocol, channels (the tuner's time where the
 * TUNING line of that version prints no channels), gridX and blockX, the same AllReduce row of the tuning table, and
 * every rank's trees (its {@code Trees} INIT line, where the log has one).
 * This is scripts/emulation-agreement.py in process (that script starts one JVM per prediction); the prediction never
 * sees NCCL's answer.
 */
class EmulationAgreementTest {
    static final Path SWEEPS = Path.of("samples/emulation-sweep");

    // enqueue.cc 2.24+: "%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}"
    static final Pattern DECISION = Pattern.compile(
            "NCCL INFO AllReduce: (\\d+) Bytes -> Algo (\\w+) proto (\\w+) channel\\{Lo\\.\\.Hi\\}=\\{(\\d+)\\.\\.(\\d+)\\}");
    // enqueue.cc@v2.23.4-1:1855 "%s: %ld Bytes -> Algo %d proto %d time %f"; @v2.22.3-1:1613, @v2.21.5-1:1534 without
    // "%s: "
    static final Pattern DECISION_TIME =
            Pattern.compile("NCCL INFO (?:AllReduce: )?(\\d+) Bytes -> Algo (\\d+) proto (\\d+) time ([\\d.]+)");
    static final Pattern VERSION = Pattern.compile("NCCL version (\\d+\\.\\d+\\.\\d+)");
    static final Pattern LAUNCH =
            Pattern.compile("NCCL INFO (?:EMULATOR|ORACLE) launch: (?:rank \\d+ )?grid (\\d+) block (\\d+)");
    static final Pattern TABLE_ROW = Pattern.compile("NCCL INFO\\s+AllReduce \\|((?:\\s*[\\d.]+/\\s*[\\d.]+ \\|)+)");
    static final Pattern CELL = Pattern.compile("([\\d.]+)/\\s*([\\d.]+)");
    static final Map<String, String> ALGOS = Map.of(
            "RING",
            "Ring",
            "TREE",
            "Tree",
            "COLLNET_DIRECT",
            "CollNetDirect",
            "COLLNET_CHAIN",
            "CollNetChain",
            "NVLS",
            "NVLS",
            "NVLS_TREE",
            "NVLSTree",
            "PAT",
            "PAT");
    static final List<String> ALGO_IDS =
            List.of("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT");
    static final Map<String, String> PROTOS = Map.of("LL", "LL", "LL128", "LL128", "SIMPLE", "Simple");
    static final List<String> PROTO_IDS = List.of("LL", "LL128", "Simple");

    /** One AllReduce as NCCL decided it: channels or time (whichever its TUNING line prints), the launch shape. */
    record Decision(
            long bytes, String algorithm, String protocol, Integer channels, BigDecimal time, int gridX, int blockX) {
        String show() {
            return algorithm + "/" + protocol + (channels != null ? " ch " + channels : " time " + time) + " grid "
                    + gridX + " block " + blockX;
        }
    }

    record Log(String version, List<Decision> decisions, List<double[]> table) {}

    static Log read(Path log) throws Exception {
        String version = null;
        List<Decision> out = new ArrayList<>();
        List<double[]> table = null;
        Decision pending = null;
        for (String line : Files.readAllLines(log)) {
            Matcher m;
            if (version == null && (m = VERSION.matcher(line)).find()) {
                version = m.group(1);
            }
            if ((m = DECISION.matcher(line)).find()) {
                pending = new Decision(
                        Long.parseLong(m.group(1)),
                        ALGOS.getOrDefault(m.group(2), m.group(2)),
                        PROTOS.getOrDefault(m.group(3), m.group(3)),
                        Integer.parseInt(m.group(5)) - Integer.parseInt(m.group(4)) + 1,
                        null,
                        0,
                        0);
            } else if ((m = DECISION_TIME.matcher(line)).find()) {
                pending = new Decision(
                        Long.parseLong(m.group(1)),
                        ALGO_IDS.get(Integer.parseInt(m.group(2))),
                        PROTO_IDS.get(Integer.parseInt(m.group(3))),
                        null,
                        new BigDecimal(m.group(4)).setScale(6, RoundingMode.HALF_EVEN),
                        0,
                        0);
            } else if ((m = LAUNCH.matcher(line)).find() && pending != null) {
                out.add(new Decision(
                        pending.bytes(),
                        pending.algorithm(),
                        pending.protocol(),
                        pending.channels(),
                        pending.time(),
                        Integer.parseInt(m.group(1)),
                        Integer.parseInt(m.group(2))));
                pending = null;
            } else if (table == null && (m = TABLE_ROW.matcher(line)).find()) {
                table = new ArrayList<>();
                Matcher c = CELL.matcher(m.group(1));
                while (c.find() && table.size() < 6) { // Tree LL/LL128/Simple, Ring LL/LL128/Simple
                    table.add(new double[] {Double.parseDouble(c.group(1)), Double.parseDouble(c.group(2))});
                }
            }
        }
        return new Log(version, out, table);
    }

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"nccl", "nccl-2.22.3", "nccl-2.21.5", "nccl-2.26.2", "nccl-2.27.5"})
    void predictSaysWhatNcclDecidedOnEveryEmulatedMachine(String sweep) throws Exception {
        Path root = SWEEPS.resolve(sweep);
        JsonNode cases = Json.mapper().readTree(root.resolve("cases.json").toFile());
        assertThat(cases.size()).isPositive();
        List<String> differences = new ArrayList<>();
        int fields = 0;
        int tables = 0;
        int cells = 0;
        for (JsonNode c : cases) {
            String name = c.path("case").asText();
            Path caseDir = root.resolve(name);
            long ranks;
            try (Stream<Path> s = Files.list(caseDir)) {
                ranks = s.filter(p -> p.getFileName().toString().startsWith("nccl-rank"))
                        .count();
            }
            Log log = read(caseDir.resolve("nccl-rank0.log"));
            assertThat(log.decisions())
                    .as(name + ": NCCL's AllReduce decisions with their launches")
                    .isNotEmpty();
            assertThat(log.version())
                    .as(name + ": the NCCL version the log names")
                    .isNotNull();
            List<String> env = new ArrayList<>();
            c.path("env")
                    .fields()
                    .forEachRemaining(
                            e -> env.add(e.getKey() + "=" + e.getValue().asText()));
            boolean first = true;
            for (Decision d : log.decisions()) {
                JsonNode p = predict(
                        SWEEPS.resolve("topologies").resolve(c.path("topology").asText()),
                        env,
                        d.bytes(),
                        ranks,
                        log.version());
                JsonNode col = p.at("/collectives").get(p.at("/collectives").size() - 1);
                Decision ours = new Decision(
                        d.bytes(),
                        col.path("algorithm").asText(),
                        col.path("protocol").asText(),
                        d.channels() == null ? null : col.path("channels").asInt(),
                        d.time() == null
                                ? null
                                : col.path("tunerTimeUs").decimalValue().setScale(6, RoundingMode.HALF_EVEN),
                        col.path("gridX").asInt(),
                        col.path("blockX").asInt());
                fields += 5;
                if (!ours.show().equals(d.show())) {
                    differences.add(name + " " + d.bytes() + " B: NCCL " + log.version() + " " + d.show()
                            + ", pathproof " + ours.show());
                }
                if (first) {
                    fields += trees(caseDir, p.at("/communicator/trees"), name, differences);
                }
                if (first && log.table() != null) {
                    first = false;
                    // accept's tuning-table row: every printed AllReduce cell and Max NThreads.
                    io.pathproof.accept.AcceptanceRow row = TuningTableRow.judge(p, caseDir.resolve("nccl-rank0.log"));
                    int[] n = TuningTableRow.counts(row);
                    tables++;
                    cells += n[1] + n[3];
                    if (row.verdict() != io.pathproof.accept.Verdict.PASS) {
                        differences.add(name + ": tuning-table " + row.verdict() + ": " + row.observed());
                    }
                    JsonNode rows = col.path("tuningTable");
                    for (int i = 0; i < log.table().size() && i < rows.size(); i++) {
                        double[] theirs = log.table().get(i);
                        JsonNode r = rows.get(i);
                        if (Math.abs(theirs[0] - r.path("latencyUs").asDouble()) > 0.05
                                || Math.abs(theirs[1] - r.path("bandwidthGBs").asDouble()) > 0.05) {
                            differences.add(name + ": tuning table cell " + i + " NCCL " + theirs[0] + "/" + theirs[1]
                                    + ", pathproof " + r.path("latencyUs").asDouble() + "/"
                                    + r.path("bandwidthGBs").asDouble());
                        }
                    }
                }
            }
        }
        assertThat(fields).isPositive();
        assertThat(tables).as(sweep + ": tuning tables judged").isEqualTo(cases.size());
        System.out.println(sweep + ": " + tables + " tuning tables, " + cells + " cells judged by accept");
        assertThat(differences).as(sweep + ": " + fields + " fields compared").isEmpty();
    }

    /** Every rank's {@code Trees} INIT line against the predicted trees of that rank; the number of lines compared. */
    static int trees(Path caseDir, JsonNode predicted, String name, List<String> differences) throws Exception {
        int n = 0;
        try (Stream<Path> s = Files.list(caseDir)) {
            for (Path l : s.filter(p -> p.getFileName().toString().matches("nccl-rank\\d+\\.log"))
                    .toList()) {
                int r = Integer.parseInt(l.getFileName().toString().replaceAll("\\D", ""));
                for (String line : Files.readAllLines(l)) {
                    int i = line.indexOf("NCCL INFO Trees ");
                    if (i >= 0) {
                        n++;
                        String theirs =
                                line.substring(i + "NCCL INFO Trees ".length()).trim();
                        String ours = predicted.path(r).asText();
                        if (!theirs.equals(ours)) {
                            differences.add(name + " rank " + r + ": Trees NCCL " + theirs + ", pathproof " + ours);
                        }
                        break;
                    }
                }
            }
        }
        return n;
    }

    JsonNode predict(Path topology, List<String> env, long bytes, long ranks, String nccl) throws Exception {
        Path wl = ClusterAgreementTest.workload(dir, bytes);
        List<String> args = new ArrayList<>(List.of(
                "predict",
                "--topology",
                topology.toString(),
                "--workload",
                wl.toString(),
                "--nccl",
                nccl,
                "--torch",
                "2.11.0",
                "--ranks",
                Long.toString(ranks),
                "--format",
                "json",
                "--env",
                "NCCL_NVLS_ENABLE=0"));
        for (String e : env) {
            args.add("--env");
            args.add(e);
        }
        return PredictCommandTest.json(MainTest.run(args.toArray(String[]::new)));
    }
}
