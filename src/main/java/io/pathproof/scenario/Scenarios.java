package io.pathproof.scenario;

import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The public entry of the scenario room: presets (JSON resources) and files. Each {@code load} takes a preset name or
 * a file path; the format of a file is told by its content, not its name:
 *
 * <ul>
 *   <li>workload: workload JSON or a parameter dump (one JSON object per line);
 *   <li>topology: topology JSON, NCCL's topology dump (XML), or the text of {@code nvidia-smi topo -m};
 *   <li>scenario: scenario JSON.
 * </ul>
 *
 * Errors: an unknown name that is not a file either is a usage error (exit 2) listing the presets; a file that
 * cannot be read or is wrong is bad input (exit 3) naming the file and the line or field.
 */
public final class Scenarios {
    private Scenarios() {}

    public static Scenario load(String nameOrFile) {
        String preset = Presets.text(Presets.Kind.SCENARIO, nameOrFile);
        if (preset != null) {
            return ScenarioReader.read(preset, "preset scenario " + nameOrFile, null, nameOrFile);
        }
        Path p = file(Presets.Kind.SCENARIO, nameOrFile);
        return ScenarioReader.read(read(p), nameOrFile, p.toAbsolutePath().getParent(), baseName(p));
    }

    /**
     * The scenario a prediction was made for, from the prediction's {@code inputs} (the scenario as the prediction
     * wrote it: versions as objects with their text, workload and topology inline). Keys a scenario file does not have
     * ({@code addendumOf}) are ignored.
     */
    public static Scenario fromPredictionInputs(com.fasterxml.jackson.databind.JsonNode inputs, String source) {
        if (inputs == null || !inputs.isObject()) {
            throw io.pathproof.core.PathproofException.badInput(source + ": the prediction holds no inputs");
        }
        com.fasterxml.jackson.databind.node.ObjectNode o = inputs.deepCopy();
        com.fasterxml.jackson.databind.node.ObjectNode v = o.putObject("versions");
        inputs.path("versions").fields().forEachRemaining(e -> {
            if (e.getValue().hasNonNull("text")) {
                v.put(e.getKey(), e.getValue().get("text").asText());
            }
        });
        o.remove("addendumOf");
        return ScenarioReader.read(o.toString(), source, null, o.path("name").asText("scenario"));
    }

    public static Workload workload(String nameOrFile) {
        String preset = Presets.text(Presets.Kind.WORKLOAD, nameOrFile);
        if (preset != null) {
            return WorkloadReader.read(preset, "preset workload " + nameOrFile, nameOrFile);
        }
        Path p = file(Presets.Kind.WORKLOAD, nameOrFile);
        return WorkloadReader.read(read(p), nameOrFile, baseName(p));
    }

    /**
     * {@code --topology NODE --nodes N}: a cluster of {@code nodes} identical copies of a one-node topology (an NCCL dump,
     * JSON, preset or nvidia-smi text of one machine), host names suffixed {@code -0 … -(N-1)}; ranks then go node by
     * node as on any cluster. A topology that already has {@code nodes} nodes is returned as it is; one with another
     * count of nodes is a usage error (it is not one node to copy).
     */
    public static Topology cluster(Topology perNode, int nodes) {
        if (nodes < 1) {
            throw PathproofException.usage("--nodes " + nodes + ": at least 1");
        }
        int have = perNode.nodes().size();
        if (have == nodes) {
            return perNode;
        }
        if (have != 1) {
            throw PathproofException.usage("--nodes " + nodes + ": topology '" + perNode.name() + "' already has "
                    + have + " nodes; --nodes copies a topology of one node");
        }
        Topology.Node one = perNode.nodes().get(0);
        java.util.List<Topology.Node> copies = new java.util.ArrayList<>(nodes);
        for (int i = 0; i < nodes; i++) {
            copies.add(new Topology.Node(
                    one.hostname() + "-" + i,
                    one.cpus(),
                    one.pciSwitches(),
                    one.gpus(),
                    one.nvlinks(),
                    one.nics(),
                    one.p2pDenied()));
        }
        java.util.List<String> inferred = new java.util.ArrayList<>(perNode.inferred());
        inferred.add(nodes + " identical nodes from the one-node topology '" + perNode.name() + "' (--nodes " + nodes
                + "): each with its CPUs, PCIe, NVLinks and NICs as given");
        if (nodes > 1 && one.nics().isEmpty()) {
            inferred.add(
                    "'" + perNode.name() + "' has no NIC: how its nodes reach each other is unknown (give a topology"
                            + " with its NICs, or nvidia-smi text with --nic-speed)");
        }
        return new Topology(perNode.name() + "-x" + nodes + "-nodes", copies, inferred);
    }

    /**
     * The cluster NCCL sees when {@code cluster} (several nodes) is emulated on one GPU with {@code ranksPerNode} ranks
     * per node: each node keeps its first {@code ranksPerNode} GPUs; without {@code netPlugin} its network becomes the
     * one NIC of NCCL's Socket transport over loopback ({@code lo}, no GPUDirect) at the node's NIC speed, or at
     * {@code nicSpeedMbps} for a node that lists none. A node of several NICs or with GPUDirect is refused (exit 3)
     * unless {@code netPlugin}; a node without NIC and no {@code nicSpeedMbps} is a usage error (exit 2).
     */
    public static Topology emulatedCluster(Topology cluster, int ranksPerNode, Long nicSpeedMbps, boolean netPlugin) {
        return EmulatedCluster.of(cluster, ranksPerNode, nicSpeedMbps, netPlugin);
    }

    /** A topology preset, a topology JSON, an NCCL topology dump (XML) or {@code nvidia-smi topo -m} text. */
    public static Topology topology(String nameOrFile) {
        return topology(nameOrFile, TopologyHints.NONE);
    }

    /** As {@link #topology(String)}, with facts the input may lack (used by the nvidia-smi importer). */
    public static Topology topology(String nameOrFile, TopologyHints hints) {
        String preset = Presets.text(Presets.Kind.TOPOLOGY, nameOrFile);
        if (preset != null) {
            return parseTopology(preset, "preset topology " + nameOrFile, nameOrFile, hints);
        }
        Path p = file(Presets.Kind.TOPOLOGY, nameOrFile);
        return parseTopology(read(p), nameOrFile, baseName(p), hints);
    }

    /**
     * A scenario from its parts, as the command line gives them ({@code --workload … --topology … --torch V --nccl V
     * --ranks N --env K=V}). {@code nccl} may be null only for a CPU-only topology (backend gloo); {@code ranks} null
     * means one rank per GPU. Errors name the option at fault.
     */
    public static Scenario compose(
            String workload,
            String topology,
            TopologyHints hints,
            String torch,
            String nccl,
            String cuda,
            Integer ranks,
            java.util.Map<String, String> env) {
        Workload w = workload(workload);
        Topology t = topology(topology, hints);
        Version vt = option("--torch", torch, true);
        Version vn = option("--nccl", nccl, false);
        Version vc = option("--cuda", cuda, false);
        int r;
        if (ranks != null) {
            r = ranks;
        } else if (t.gpuCount() > 0) {
            r = t.gpuCount();
        } else {
            throw PathproofException.usage("--ranks: required, topology '" + t.name() + "' has no GPUs to count");
        }
        String name = w.name() + "@" + t.name();
        return new Scenario(name, w, t, new Versions(vt, vn, vc), r, env, null);
    }

    private static Version option(String flag, String value, boolean required) {
        if (value == null || value.isBlank()) {
            if (required) {
                throw PathproofException.usage(flag + ": required");
            }
            return null;
        }
        try {
            return Version.parse(value);
        } catch (PathproofException e) {
            throw PathproofException.usage(flag + ": cannot read version '" + value + "' (expected e.g. 2.28.9)");
        }
    }

    public static List<String> workloadPresets() {
        return Presets.names(Presets.Kind.WORKLOAD);
    }

    public static List<String> topologyPresets() {
        return Presets.names(Presets.Kind.TOPOLOGY);
    }

    public static List<String> scenarioPresets() {
        return Presets.names(Presets.Kind.SCENARIO);
    }

    static Topology parseTopology(String text, String source, String name, TopologyHints hints) {
        String t = text.stripLeading();
        Topology topo;
        if (t.startsWith("<")) {
            topo = NcclTopoXmlReader.read(text, source, name);
        } else if (t.startsWith("{")) {
            topo = TopologyJsonReader.read(new JsonInput.Obj(JsonInput.parse(text, source), "topology", source), name);
        } else if (NvidiaSmiTopoReader.looksLike(text)) {
            topo = NvidiaSmiTopoReader.read(text, source, name, hints == null ? TopologyHints.NONE : hints);
        } else {
            throw PathproofException.badInput(
                    source + ":1: not a topology (expected topology JSON, an NCCL topology dump"
                            + " <system>, or nvidia-smi topo -m text)");
        }
        TopologyChecks.check(topo, source);
        return topo;
    }

    private static Path file(Presets.Kind kind, String nameOrFile) {
        if (nameOrFile == null || nameOrFile.isBlank()) {
            throw PathproofException.usage(kind.word + ": no name or file given");
        }
        Path p = Path.of(nameOrFile);
        if (!Files.isRegularFile(p)) {
            throw Presets.unknown(kind, nameOrFile);
        }
        return p;
    }

    /** A text file a flag names ({@code flag} says which, in the message when it cannot be read). */
    public static String readFile(String file, String flag) {
        Path p = Path.of(file);
        if (!Files.isRegularFile(p)) {
            throw PathproofException.badInput(flag + " " + file + ": no such file");
        }
        return read(p);
    }

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (MalformedInputException e) {
            throw PathproofException.badInput(p + ": not UTF-8 text");
        } catch (IOException e) {
            throw PathproofException.badInput(p + ": cannot read: " + io.pathproof.core.Messages.io(e, p));
        }
    }

    private static String baseName(Path p) {
        String f = p.getFileName().toString();
        int dot = f.indexOf('.');
        return dot > 0 ? f.substring(0, dot) : f;
    }
}
