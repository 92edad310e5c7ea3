package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import io.pathproof.nccl.NcclModel;
import io.pathproof.scenario.Scenario;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The cluster rows of docs/emulation.md's agreement table, kept by CI: real NCCL 2.28.9 on emulated 2-node clusters
 * (samples/emulated-clusters-net-emu: every rank on one H200, inter-node bytes through the emu net plugin) against
 * {@code predict --topology <NCCL's own dump of node 0> --nodes 2}. Compared field by field: nNodes, both GRAPH
 * {@code Pattern} lines (crossNic, channels, bandwidths, path types), the INIT channel and threadThresholds lines, the
 * tuning table's AllReduce row, every rank's rings ({@code Ring NN : prev -> r -> next}) and trees ({@code Trees …}),
 * rank 0's ring orders ({@code Channel NN/MM : …}), the NET transport's GPUDirect, and for every AllReduce the
 * algorithm, protocol, channels, gridX and blockX; and every rank's channel lines under each GRAPH line (the NET each
 * channel enters and leaves by, its GPUs in order: {@code NcclModel.graphListing}). The prediction never sees NCCL's
 * answer.
 *
 * <p>The same comparison holds for every run directory of {@code pathproof run --emulate TOPOLOGY --nodes N}
 * (samples/emulated-clusters-socket: 8 shapes, nodes joined by NET/Socket; samples/emulated-clusters-net-variables:
 * 2 x 8 HGX nodes through the emu net plugin, each run with one network variable injected), predicted from the
 * cluster the run asked NCCL about and with the injected variable.
 */
class ClusterAgreementTest {
    static final Path ROOT = Path.of("samples/emulated-clusters-net-emu");
    /** Run directories of {@code pathproof run --emulate}: Socket between nodes, and the emu net plugin per variable. */
    static final List<Path> RUNS =
            List.of(Path.of("samples/emulated-clusters-socket"), Path.of("samples/emulated-clusters-net-variables"));

    static final Pattern GRAPH = Pattern.compile("NCCL INFO (Pattern \\d+, crossNic \\d+, nChannels \\d+, "
            + "bw [\\d.]+/[\\d.]+, type \\w+/\\w+, sameChannels \\d)");
    static final Pattern NNODES = Pattern.compile("NCCL INFO comm \\S+ rank \\d+ nRanks \\d+ nNodes (\\d+) ");
    static final Pattern RING = Pattern.compile("NCCL INFO Ring (\\d+) : (-?\\d+) -> (\\d+) -> (-?\\d+)$");
    static final Pattern TREES = Pattern.compile("NCCL INFO Trees (.*)$");
    static final Pattern CHANNEL = Pattern.compile("NCCL INFO Channel (\\d+)/(\\d+) :((?: +\\d+)+)$");
    static final Pattern NET = Pattern.compile("NCCL INFO Channel \\d+/\\d+ : .* via (NET/\\S+)");
    static final Pattern INIT = Pattern.compile("NCCL INFO (\\d+ coll channels, .*)$");
    static final Pattern ENV_SET = Pattern.compile("NCCL INFO (NCCL_\\w+ set by environment to .*)$");
    static final Pattern THRESHOLDS = Pattern.compile("NCCL INFO (threadThresholds .*)$");
    /** A channel line of ncclTopoPrintGraph (search.cc@v2.28.9-1:1206-1224): {@code "%2d :"} then NET and GPU ids. */
    static final Pattern GRAPH_CHANNEL = Pattern.compile("NCCL INFO ([ \\d]\\d : (?:NET|GPU)/.*)$");

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"hgx-2x8-8nic-gdr", "hgx-2x4-4nic-gdr", "hgx-2x8-8nic-nogdr", "hgx-2x8-2nic-gdr"})
    void predictSaysWhatNcclDecidedOnEveryEmulatedCluster(String name) throws Exception {
        Path caseDir = ROOT.resolve(name);
        // --nodes 2 copies node 0: NCCL's dump of node 1 must be the same node (host hash and ranks aside).
        assertThat(sameNode(caseDir.resolve("nccl-topo-node0.xml"), caseDir.resolve("nccl-topo-node1.xml")))
                .as(name + ": node 1 as NCCL read it is node 0's twin")
                .isTrue();
        agree(name, caseDir, caseDir.resolve("nccl-topo-node0.xml"), 2, Map.of());
    }

    /**
     * Every shape {@code pathproof run --emulate TOPOLOGY --nodes N} ran: the cluster it asked NCCL about
     * (emulated-cluster.json, each node with its own GPUs and NICs) is the topology, and a variable the run injected
     * (fault.sealed.json) is in the prediction's environment too.
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("emulatedRuns")
    void predictSaysWhatNcclDecidedOnEveryEmulatedRun(String name) throws Exception {
        Path caseDir = Path.of("samples").resolve(name);
        assertThat(caseDir.resolve("fault.sealed.json")).isRegularFile();
        Map<String, String> env = injected(caseDir);
        // What the prediction is told is what NCCL ran with: each variable as rank 0 logged it ("K set by environment
        // to
        // V", a number read through NCCL_PARAM with a full stop after it).
        List<String> set = all(Files.readAllLines(caseDir.resolve("nccl-rank0.log")), ENV_SET).stream()
                .map(l -> l.replaceAll("\\.$", ""))
                .toList();
        Map<String, String> told = new TreeMap<>(env);
        told.putAll(Map.of("NCCL_NVLS_ENABLE", "0", "NCCL_MNNVL_ENABLE", "0"));
        told.forEach((k, v) -> assertThat(set)
                .as(name + ": NCCL's rank 0 ran with " + k + "=" + v)
                .contains(k + " set by environment to " + v));
        agree(name, caseDir, caseDir.resolve("emulated-cluster.json"), null, env);
    }

    static Stream<String> emulatedRuns() throws Exception {
        List<String> out = new ArrayList<>();
        for (Path sample : RUNS) {
            try (Stream<Path> s = Files.list(sample)) {
                s.filter(d -> Files.isRegularFile(d.resolve("emulated-cluster.json")))
                        .sorted()
                        .forEach(d -> out.add(sample.getFileName() + "/" + d.getFileName()));
            }
        }
        return out.stream();
    }

    /** The Socket sweep (scripts/emulated-cluster-gpu.sh … sweep) under every NCCL a torch wheel ships: one tgz each. */
    static final Path VERSIONS = Path.of("samples/emulated-clusters-socket-versions");
    /**
     * The HGX shapes through the emu net plugin (… plugin, then … network: 8 GPUDirect or plain NICs per node, and the
     * network variables prove draws) under the same NCCLs: one txz each.
     */
    static final Path NET_EMU_VERSIONS = Path.of("samples/emulated-clusters-net-emu-versions");
    /**
     * Clusters whose nodes differ (scripts/emulated-cluster-gpu.sh … slow and … network: one node's NICs slowed with
     * run's node_nic_mbps, and one p2p channel per net peer) under NCCL 2.28.9 and 2.30.7: one txz each.
     */
    static final Path SLOW_NODE = Path.of("samples/emulated-clusters-slow-node");
    /**
     * Each packed sweep folder and the fewest shapes each of its packs holds (2.24.3: five Socket shapes, 2.23.4 and
     * 2.25.1: four).
     */
    static final Map<Path, Integer> PACKS = Map.of(VERSIONS, 4, NET_EMU_VERSIONS, 7, SLOW_NODE, 9);

    /**
     * The same shapes under NCCL 2.21.5, 2.23.4, 2.24.3, 2.25.1, 2.26.2, 2.27.3, 2.27.5, 2.29.7 and 2.30.7 (and the slowed-node
     * shapes under 2.28.9 and 2.30.7), each predicted with the version
     * the log names. Each version's run directories are kept packed (about 170 kB each) and unpacked here.
     */
    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("versionedRuns")
    void predictSaysWhatEveryNcclVersionDecidedOnEveryShape(String pack, String shape) throws Exception {
        Path tgz = Path.of("samples").resolve(pack);
        String version = tgz.getFileName().toString().replaceAll("\\.t[gx]z$", "");
        Process tar = new ProcessBuilder("tar", "-xf", tgz.toString(), "-C", dir.toString(), "./" + shape)
                .redirectErrorStream(true)
                .start();
        String out = new String(tar.getInputStream().readAllBytes());
        assertThat(tar.waitFor()).as("tar -xzf " + tgz + ": " + out).isZero();
        Path caseDir = dir.resolve(shape);
        assertThat(all(Files.readAllLines(caseDir.resolve("nccl-rank0.log")), NCCL_VERSION))
                .as(version + " " + shape + ": the NCCL that ran")
                .first()
                .isEqualTo(version.substring("nccl-".length()));
        agree(version + " " + shape, caseDir, caseDir.resolve("emulated-cluster.json"), null, injected(caseDir));
    }

    /** The variables a run injected (its fault.sealed.json), which the prediction is told too; none without one. */
    static Map<String, String> injected(Path caseDir) throws Exception {
        Map<String, String> env = new TreeMap<>();
        Path sealed = caseDir.resolve("fault.sealed.json");
        if (Files.isRegularFile(sealed)) {
            Json.mapper()
                    .readTree(sealed.toFile())
                    .path("env")
                    .fields()
                    .forEachRemaining(e -> env.put(e.getKey(), e.getValue().asText()));
        }
        return env;
    }

    static final Pattern NCCL_VERSION = Pattern.compile("NCCL INFO NCCL version (\\d+\\.\\d+\\.\\d+)");

    /** A shape's run directory in a version's tgz, by its cluster file. */
    static final Pattern PACKED_RUN = Pattern.compile("^\\./([^/]+)/emulated-cluster\\.json$");

    static Stream<Arguments> versionedRuns() throws Exception {
        List<Arguments> out = new ArrayList<>();
        for (Map.Entry<Path, Integer> folder : new TreeMap<>(PACKS).entrySet()) {
            List<Path> packs;
            try (Stream<Path> s = Files.list(folder.getKey())) {
                packs = s.filter(p -> p.toString().matches(".*\\.t[gx]z$"))
                        .sorted()
                        .toList();
            }
            int before = out.size();
            for (Path tgz : packs) {
                Process tar = new ProcessBuilder("tar", "-tf", tgz.toString()).start();
                for (String entry : new String(tar.getInputStream().readAllBytes()).split("\n")) {
                    Matcher m = PACKED_RUN.matcher(entry);
                    if (m.find()) {
                        out.add(Arguments.of(folder.getKey().getFileName() + "/" + tgz.getFileName(), m.group(1)));
                    }
                }
                assertThat(tar.waitFor()).as("tar -tf " + tgz).isZero();
            }
            assertThat(out.size() - before)
                    .as("shapes in " + folder.getKey())
                    .isGreaterThanOrEqualTo(packs.size() * folder.getValue());
        }
        return out.stream();
    }

    /** Predicts every AllReduce rank 0 logged and compares the whole communicator; {@code nodes} null: a cluster JSON. */
    void agree(String name, Path caseDir, Path topology, Integer nodes, Map<String, String> env) throws Exception {
        List<Path> logs;
        try (Stream<Path> s = Files.list(caseDir)) {
            logs = s.filter(p -> p.getFileName().toString().matches("nccl-rank\\d+\\.log"))
                    .toList();
        }
        int ranks = logs.size();
        assertThat(ranks).as(name + ": rank logs").isGreaterThan(1);

        Path rank0 = caseDir.resolve("nccl-rank0.log");
        EmulationAgreementTest.Log log = EmulationAgreementTest.read(rank0);
        assertThat(log.decisions())
                .as(name + ": NCCL's AllReduce decisions with their launches")
                .isNotEmpty();
        assertThat(log.table()).as(name + ": NCCL's tuning table").isNotNull();
        List<String> rank0Lines = Files.readAllLines(rank0);

        List<String> differences = new ArrayList<>();
        int fields = 0;
        JsonNode first = null;
        for (EmulationAgreementTest.Decision d : log.decisions()) {
            JsonNode p = predict(topology, nodes, env, d.bytes(), ranks, log.version());
            assertThat(p.at("/communicator/cannotPredict").isNull())
                    .as(name + ": " + p.at("/communicator/cannotPredict"))
                    .isTrue();
            JsonNode col = p.at("/collectives").get(p.at("/collectives").size() - 1);
            EmulationAgreementTest.Decision ours = new EmulationAgreementTest.Decision(
                    d.bytes(),
                    col.path("algorithm").asText(),
                    col.path("protocol").asText(),
                    // NCCL before 2.24 prints the tuner's time where later ones print the channel range
                    d.channels() == null ? null : col.path("channels").asInt(),
                    d.time() == null
                            ? null
                            : col.path("tunerTimeUs").decimalValue().setScale(6, java.math.RoundingMode.HALF_EVEN),
                    col.path("gridX").asInt(),
                    col.path("blockX").asInt());
            fields += 5;
            if (!ours.show().equals(d.show())) {
                differences.add(name + " " + d.bytes() + " B: NCCL " + d.show() + ", pathproof " + ours.show());
            }
            first = first == null ? p : first;
        }
        JsonNode c = first.path("communicator");
        // A rank prints its own node's search; where the nodes differ the prediction lists each node's (nodeGraphs),
        // and ringGraph/treeGraph are the minimum the ranks keep (init.cc@v2.28.9-1:1175-1192).
        JsonNode nodeGraphs = c.path("nodeGraphs");
        JsonNode own0 = nodeGraphs.isEmpty() ? c : nodeGraphs.get(0);
        String ringKey = nodeGraphs.isEmpty() ? "ringGraph" : "ring";
        String treeKey = nodeGraphs.isEmpty() ? "treeGraph" : "tree";

        // nNodes, the two GRAPH lines (ring then tree), INIT lines.
        List<String> graphs = all(rank0Lines, GRAPH);
        Map<String, String> theirs = new LinkedHashMap<>();
        theirs.put("nNodes", all(rank0Lines, NNODES).get(0));
        theirs.put("ring graph", graphs.get(0));
        theirs.put("tree graph", graphs.get(1));
        theirs.put("INIT channels", all(rank0Lines, INIT).get(0));
        theirs.put("INIT threadThresholds", all(rank0Lines, THRESHOLDS).get(0));
        Map<String, String> ours = new LinkedHashMap<>();
        ours.put("nNodes", c.path("nNodes").asText());
        ours.put("ring graph", graphLine(own0.path(ringKey)));
        ours.put("tree graph", graphLine(own0.path(treeKey)));
        for (int k = 1; k < nodeGraphs.size(); k++) {
            JsonNode n = nodeGraphs.get(k);
            List<String> printed = all(
                    Files.readAllLines(
                            caseDir.resolve("nccl-rank" + n.path("firstRank").asInt() + ".log")),
                    GRAPH);
            theirs.put("node " + k + " ring graph", printed.get(0));
            theirs.put("node " + k + " tree graph", printed.get(1));
            ours.put("node " + k + " ring graph", graphLine(n.path("ring")));
            ours.put("node " + k + " tree graph", graphLine(n.path("tree")));
        }
        ours.put("INIT channels", c.path("channelsInitLine").asText());
        ours.put("INIT threadThresholds", c.path("threadThresholdsLine").asText());
        for (String k : theirs.keySet()) {
            fields++;
            if (!theirs.get(k).equals(ours.get(k))) {
                differences.add(name + " " + k + ": NCCL '" + theirs.get(k) + "', pathproof '" + ours.get(k) + "'");
            }
        }

        // The tuning table's AllReduce row (Tree and Ring × LL/LL128/Simple, latency/bandwidth).
        JsonNode rows = first.at("/collectives").get(0).path("tuningTable");
        for (int i = 0; i < log.table().size(); i++) {
            fields++;
            double[] t = log.table().get(i);
            JsonNode r = rows.get(i);
            if (r == null
                    || Math.abs(t[0] - r.path("latencyUs").asDouble()) > 0.05
                    || Math.abs(t[1] - r.path("bandwidthGBs").asDouble()) > 0.05) {
                differences.add(name + ": tuning table cell " + i + " NCCL " + t[0] + "/" + t[1] + ", pathproof " + r);
            }
        }

        // accept's tuning-table row: every printed AllReduce cell (all algorithms) and Max NThreads.
        io.pathproof.accept.AcceptanceRow tableRow = TuningTableRow.judge(first, rank0);
        int[] tableCounts = TuningTableRow.counts(tableRow);
        fields += tableCounts[1] + tableCounts[3];
        System.out.println(name + ": tuning-table " + tableRow.verdict() + ": " + tableRow.observed());
        if (tableRow.verdict() != io.pathproof.accept.Verdict.PASS) {
            differences.add(name + ": tuning-table " + tableRow.verdict() + ": " + tableRow.observed());
        }

        // Rank 0's ring orders, exactly as ncclBuildRings prints them from rank 0.
        List<String> orders = new ArrayList<>();
        for (String line : rank0Lines) {
            Matcher m = CHANNEL.matcher(line);
            if (m.find()) {
                orders.add(m.group(3).trim().replaceAll("\\s+", " "));
            }
        }
        fields++;
        List<String> predictedOrders = new ArrayList<>();
        c.path("ringOrders").forEach(o -> predictedOrders.add(o.asText()));
        if (!orders.equals(printedAsNcclPrintsThem(predictedOrders, orders))) {
            differences.add(name + ": ring orders NCCL " + orders + ", pathproof " + predictedOrders);
        }

        // Every rank's own ring neighbours and trees, and every NET connector's GPUDirect.
        List<String> predictedTrees = new ArrayList<>();
        c.path("trees").forEach(t -> predictedTrees.add(t.asText()));
        // "NET/GDRDMA" for a NIC of unknown kind, "NET/IB/GDRDMA" for one the cluster names (CommInit)
        boolean gdrPredicted = c.path("transport").asText().contains("/GDRDMA");
        int netLines = 0;
        for (Path l : logs) {
            int r = Integer.parseInt(l.getFileName().toString().replaceAll("\\D", ""));
            List<String> lines = Files.readAllLines(l);
            List<String> trees = all(lines, TREES);
            fields += 2;
            if (trees.size() != 1 || r >= predictedTrees.size() || !trees.get(0).equals(predictedTrees.get(r))) {
                differences.add(name + " rank " + r + ": Trees NCCL " + trees + ", pathproof "
                        + (r < predictedTrees.size() ? predictedTrees.get(r) : "none"));
            }
            Map<Integer, String> rings = new TreeMap<>();
            for (String line : lines) {
                Matcher m = RING.matcher(line);
                if (m.find()) {
                    rings.put(Integer.parseInt(m.group(1)), m.group(2) + " -> " + m.group(3) + " -> " + m.group(4));
                }
                m = NET.matcher(line);
                if (m.find()) {
                    netLines++;
                    if (m.group(1).endsWith("/GDRDMA") != gdrPredicted) {
                        differences.add(name + " rank " + r + ": " + m.group(1) + ", pathproof "
                                + c.path("transport").asText());
                    }
                }
            }
            Map<Integer, String> predictedRings = new TreeMap<>();
            for (int ch = 0; ch < predictedOrders.size(); ch++) {
                String[] ring = predictedOrders.get(ch).split(" ");
                for (int i = 0; i < ring.length; i++) {
                    if (Integer.parseInt(ring[i]) == r) {
                        predictedRings.put(
                                ch,
                                ring[(i - 1 + ring.length) % ring.length] + " -> " + r + " -> "
                                        + ring[(i + 1) % ring.length]);
                    }
                }
            }
            if (!rings.equals(predictedRings)) {
                differences.add(name + " rank " + r + ": rings NCCL " + rings + ", pathproof " + predictedRings);
            }
        }
        assertThat(netLines).as(name + ": NET connector lines").isPositive();

        // Every rank's channel lines under each GRAPH line: the NIC each channel enters and leaves by, its GPU order.
        NcclModel model = NcclModel.of(scenario(topology, nodes, env, ranks, log.version()));
        int listed = 0;
        for (Path l : logs) {
            int r = Integer.parseInt(l.getFileName().toString().replaceAll("\\D", ""));
            List<List<String>> theirListing = graphListing(Files.readAllLines(l));
            List<List<String>> ourListing = relabel(model.graphListing(r), gpuLabels(caseDir, topology, nodes, r));
            assertThat(theirListing)
                    .as(name + " rank " + r + ": graphs NCCL printed")
                    .hasSize(ourListing.size());
            for (int g = 0; g < theirListing.size(); g++) {
                List<String> t = theirListing.get(g);
                List<String> o = ourListing.get(g);
                for (int i = 0; i < Math.max(t.size(), o.size()); i++) {
                    String tl = i < t.size() ? t.get(i) : "none";
                    String ol = i < o.size() ? o.get(i) : "none";
                    fields++;
                    if (tl.equals(ol)) {
                        listed++;
                    } else {
                        differences.add(
                                name + " rank " + r + " graph " + g + ": NCCL '" + tl + "', pathproof '" + ol + "'");
                    }
                }
            }
        }
        assertThat(differences).as(name + ": " + fields + " fields compared").isEmpty();
        assertThat(listed).as(name + ": graph channel lines agreeing").isPositive();
    }

    /**
     * NCCL before 2.23 prints at most 20 ranks of a ring (graph/rings.cc:9, 18@v2.21.5-1 MAXWIDTH): the predicted
     * orders cut the same way where NCCL's lines were cut.
     */
    static List<String> printedAsNcclPrintsThem(List<String> predicted, List<String> printed) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < predicted.size(); i++) {
            String[] ranks = predicted.get(i).split(" ");
            boolean cut = i < printed.size() && printed.get(i).split(" ").length == 20 && ranks.length > 20;
            out.add(cut ? String.join(" ", List.of(ranks).subList(0, 20)) : predicted.get(i));
        }
        return out;
    }

    static final Pattern XML_GPU = Pattern.compile("<pci busid=\"([^\"]+)\"[^>]*>\\s*<gpu dev=\"(\\d+)\"[^>]*>");

    /**
     * How NCCL was told each GPU's bus id, where that is not the topology's: a run's node XML
     * (emulated-topo-node&lt;N&gt;.xml, NcclTopoXmlWriter) gives the first GPU the real device's bus id and a GPU without a
     * valid, distinct one a made-up one. Topology id of the cluster's GPU to the one NCCL printed, on the node of
     * {@code rank}; none for NCCL's own dumps (the net-emu cases), whose bus ids are NCCL's.
     */
    static Map<String, String> gpuLabels(Path caseDir, Path topology, Integer nodes, int rank) throws Exception {
        Map<String, String> labels = new TreeMap<>();
        if (nodes != null) {
            return labels;
        }
        JsonNode cluster = Json.mapper().readTree(topology.toFile()).path("nodes");
        for (int n = 0; n < cluster.size(); n++) {
            String xml = Files.readString(caseDir.resolve("emulated-topo-node" + n + ".xml"));
            if (!Pattern.compile("<gpu [^>]*rank=\"" + rank + "\"").matcher(xml).find()) {
                continue;
            }
            Map<Integer, String> ncclBus = new TreeMap<>();
            Matcher m = XML_GPU.matcher(xml);
            while (m.find()) {
                ncclBus.put(Integer.parseInt(m.group(2)), m.group(1));
            }
            for (JsonNode g : cluster.get(n).path("gpus")) {
                String ours = g.path("busId").asText(null);
                String theirs = ncclBus.get(g.path("index").asInt());
                if (ours != null && theirs != null) {
                    labels.put(gpuId(ours), gpuId(theirs));
                }
            }
        }
        return labels;
    }

    /** A GPU's topology id as ncclTopoPrintGraph prints it: system 0, the bus id's hex digits as a number. */
    static String gpuId(String busId) {
        return "GPU/0-" + Long.toHexString(Long.parseLong(busId.replaceAll("[:.]", ""), 16));
    }

    static List<List<String>> relabel(List<List<String>> listing, Map<String, String> labels) {
        return listing.stream()
                .map(lines -> lines.stream()
                        .map(line -> Stream.of(line.split(" "))
                                .map(w -> labels.getOrDefault(w, w))
                                .collect(java.util.stream.Collectors.joining(" ")))
                        .toList())
                .toList();
    }

    /** The channel lines under each GRAPH ({@code Pattern …}) line of one rank's log, graph by graph. */
    static List<List<String>> graphListing(List<String> lines) {
        List<List<String>> graphs = new ArrayList<>();
        for (String line : lines) {
            if (GRAPH.matcher(line).find()) {
                graphs.add(new ArrayList<>());
                continue;
            }
            Matcher m = GRAPH_CHANNEL.matcher(line);
            if (m.find() && !graphs.isEmpty()) {
                graphs.get(graphs.size() - 1).add(m.group(1));
            }
        }
        return graphs;
    }

    /** The GRAPH line NCCL prints for a graph (search.cc@v2.28.9-1:1201). */
    static String graphLine(JsonNode g) {
        return String.format(
                Locale.ROOT,
                "Pattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s, sameChannels %d",
                g.path("pattern").asInt(),
                g.path("crossNic").asInt(0),
                g.path("nChannels").asInt(),
                g.path("bwIntra").asDouble(),
                g.path("bwInter").asDouble(),
                g.path("typeIntra").asText(),
                g.path("typeInter").asText(),
                g.path("sameChannels").asBoolean() ? 1 : 0);
    }

    static List<String> all(List<String> lines, Pattern p) {
        List<String> out = new ArrayList<>();
        for (String line : lines) {
            Matcher m = p.matcher(line);
            if (m.find()) {
                out.add(m.group(1));
            }
        }
        return out;
    }

    static boolean sameNode(Path a, Path b) throws Exception {
        return strip(Files.readString(a)).equals(strip(Files.readString(b)));
    }

    private static String strip(String xml) {
        return xml.replaceAll(" host_hash=\"[^\"]*\"", "").replaceAll(" rank=\"\\d+\"", "");
    }

    /** The scenario {@code predict} is given below, without a workload that matters: for {@link NcclModel} queries. */
    Scenario scenario(Path topology, Integer nodes, Map<String, String> env, int ranks, String nccl) throws Exception {
        List<String> e = new ArrayList<>(List.of("NCCL_NVLS_ENABLE=0", "NCCL_MNNVL_ENABLE=0"));
        env.forEach((k, v) -> e.add(k + "=" + v));
        return new ScenarioChoice(
                        null,
                        workload(4).toString(),
                        topology.toString(),
                        null,
                        null,
                        null,
                        null,
                        nodes,
                        nccl,
                        "2.11.0",
                        ranks,
                        e)
                .resolve();
    }

    JsonNode predict(Path topology, Integer nodes, Map<String, String> env, long bytes, int ranks, String nccl)
            throws Exception {
        Path wl = workload(bytes);
        // The emulation set NCCL_NVLS_ENABLE=0 and NCCL_MNNVL_ENABLE=0 (each log's ENV lines); the rest is NCCL's
        // default
        // but for what the run injected.
        List<String> args = new ArrayList<>(List.of("predict", "--topology", topology.toString()));
        if (nodes != null) {
            args.addAll(List.of("--nodes", nodes.toString()));
        }
        args.addAll(List.of(
                "--workload",
                wl.toString(),
                "--nccl",
                nccl,
                "--torch",
                "2.11.0",
                "--ranks",
                Integer.toString(ranks),
                "--format",
                "json",
                "--env",
                "NCCL_NVLS_ENABLE=0",
                "--env",
                "NCCL_MNNVL_ENABLE=0"));
        env.forEach((k, v) -> args.addAll(List.of("--env", k + "=" + v)));
        return PredictCommandTest.json(MainTest.run(args.toArray(String[]::new)));
    }

    /** A workload of one float32 AllReduce of {@code bytes}, in one bucket. */
    Path workload(long bytes) throws Exception {
        return workload(dir, bytes);
    }

    /** The same, written once into {@code dir} (EmulationAgreementTest's predictions use it too). */
    static Path workload(Path dir, long bytes) throws Exception {
        Path wl = dir.resolve("allreduce-" + bytes + ".json");
        if (!Files.exists(wl)) {
            Files.writeString(
                    wl,
                    "{\"name\": \"allreduce-" + bytes + "\", \"parameters\": [{\"name\": \"p\", \"shape\": ["
                            + bytes / 4 + "], \"dtype\": \"float32\", \"requiresGrad\": true}], \"bucketCapMb\": "
                            + Math.max(64, bytes / (1 << 20) + 1)
                            + ", \"findUnusedParameters\": false, \"staticGraph\": false, \"gradientAsBucketView\": false}");
        }
        return wl;
    }
}
