package io.pathproof.scenario;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.pathproof.core.PathproofException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The machines a job runs on, at the level of detail NCCL's topology detection sees (graph/topo.cc, xml.cc): per
 * node its CPU sockets, PCIe switches, GPUs (model, compute capability, PCIe parent), NVLinks (per GPU pair, or per
 * GPU to the node's NVSwitch fabric) and NICs. Ranks are assigned node by node, GPU by GPU, in list order.
 * {@code inferred} lists, in words, every fact an importer did not read but inferred (a compute capability from a
 * model name, a PCIe switch from an {@code nvidia-smi topo -m} relation); empty when everything was given.
 */
public record Topology(String name, List<Node> nodes, List<String> inferred) {
    public Topology {
        if (nodes == null || nodes.isEmpty()) {
            throw PathproofException.badInput("topology.nodes: empty; at least one node is needed");
        }
        nodes = List.copyOf(nodes);
        name = name == null ? "topology" : name;
        inferred = inferred == null ? List.of() : List.copyOf(inferred);
    }

    /** A topology whose every fact was given, none inferred. */
    public Topology(String name, List<Node> nodes) {
        this(name, nodes, List.of());
    }

    /**
     * This cluster with every NIC of node {@code index} at {@code mbps}: the node as NCCL would see it when its links
     * trained at another speed than the description says (an HDR port come up at EDR, a degraded cable). Nothing else
     * of the node changes: the NICs keep their names, PCI places and GPUDirect.
     */
    public Topology withNodeNicSpeed(int index, long mbps) {
        if (index < 0 || index >= nodes.size()) {
            throw PathproofException.usage("node " + index + ": the topology has nodes 0.." + (nodes.size() - 1));
        }
        Node n = nodes.get(index);
        if (n.nics().isEmpty()) {
            throw PathproofException.usage("node " + index + " (" + n.hostname() + "): no NIC to slow down");
        }
        List<Nic> nics = n.nics().stream().map(c -> c.atSpeed(mbps)).toList();
        List<Node> all = new ArrayList<>(nodes);
        all.set(index, new Node(n.hostname(), n.cpus(), n.pciSwitches(), n.gpus(), n.nvlinks(), nics, n.p2pDenied()));
        return new Topology(name, all, inferred);
    }

    /**
     * This topology with every node's GPU peer access as NVML reported it on one of them ({@code denied}: GPU index
     * pairs; see {@link Node#p2pDenied}): {@code nvidia-smi topo -p2p r} of a node, for a machine of identical nodes.
     */
    public Topology withP2pDenied(List<List<Integer>> denied, String source) {
        List<Node> all = new ArrayList<>();
        for (Node n : nodes) {
            all.add(n.withP2pDenied(denied));
        }
        List<String> notes = new ArrayList<>(inferred);
        notes.add("peer access from " + source + ": "
                + (denied.isEmpty()
                        ? "every GPU pair OK"
                        : "denied between GPUs "
                                + denied.stream()
                                        .map(p -> p.get(0) + "-" + p.get(1))
                                        .toList())
                + (nodes.size() > 1 ? ", on every node" : ""));
        return new Topology(name, all, notes);
    }

    private static final Pattern PER_GPU = Pattern.compile("^(\\S+) GPU(\\d+): (.*)$");
    private static final Pattern PER_NIC = Pattern.compile("^NIC (\\S+?)(:? .*)$");

    /**
     * {@link #inferred()} as a reader of a prediction wants it: notes that differ only in the GPU they name ("host0
     * GPU3: model …" for each of eight GPUs) said once with the GPUs listed ("host0 GPU0-7: model …"), and likewise
     * notes that differ only in the NIC they name ("NIC mlx5_1 left out: …" → "NICs mlx5_1, mlx5_2 left out: …").
     */
    public List<String> inferredGrouped() {
        Map<String, List<String>> groups = new LinkedHashMap<>();
        for (String note : inferred) {
            Matcher g = PER_GPU.matcher(note);
            Matcher n = PER_NIC.matcher(note);
            if (g.matches()) {
                groups.computeIfAbsent("G" + g.group(1) + "\u0000" + g.group(3), k -> new ArrayList<>())
                        .add(g.group(2));
            } else if (n.matches()) {
                groups.computeIfAbsent("N" + n.group(2), k -> new ArrayList<>()).add(n.group(1));
            } else {
                groups.computeIfAbsent("=" + note, k -> new ArrayList<>());
            }
        }
        List<String> out = new ArrayList<>();
        for (Map.Entry<String, List<String>> e : groups.entrySet()) {
            String k = e.getKey().substring(1);
            List<String> who = e.getValue();
            switch (e.getKey().charAt(0)) {
                case 'G' -> {
                    int cut = k.indexOf('\u0000');
                    out.add(k.substring(0, cut) + " GPU"
                            + ranges(who.stream().map(Integer::valueOf).toList()) + ": " + k.substring(cut + 1));
                }
                case 'N' -> out.add((who.size() == 1 ? "NIC " : "NICs ") + String.join(", ", who) + k);
                default -> out.add(k);
            }
        }
        return out;
    }

    /** 0,1,2,3,5 as "0-3, 5". */
    private static String ranges(List<Integer> xs) {
        StringBuilder b = new StringBuilder();
        int i = 0;
        while (i < xs.size()) {
            int j = i;
            while (j + 1 < xs.size() && xs.get(j + 1) == xs.get(j) + 1) {
                j++;
            }
            b.append(b.length() == 0 ? "" : ", ").append(xs.get(i));
            if (j > i) {
                b.append('-').append(xs.get(j));
            }
            i = j + 1;
        }
        return b.toString();
    }

    public int gpuCount() {
        int n = 0;
        for (Node node : nodes) {
            n += node.gpus().size();
        }
        return n;
    }

    /**
     * One host. {@code p2pDenied}: the GPU pairs (by index, each pair once, smaller first) whose peer access the driver
     * denies, as NVML reports it (`nvidia-smi topo -p2p r` / `w`: anything but OK); empty: every pair allowed; null:
     * not known (NCCL's topology dump and `topo -m` do not say).
     */
    public record Node(
            String hostname,
            List<Cpu> cpus,
            List<PciSwitch> pciSwitches,
            List<Gpu> gpus,
            List<NvLink> nvlinks,
            List<Nic> nics,
            @JsonInclude(JsonInclude.Include.NON_NULL) List<List<Integer>> p2pDenied) {
        /** A host whose GPUs' peer access is not known. */
        public Node(
                String hostname,
                List<Cpu> cpus,
                List<PciSwitch> pciSwitches,
                List<Gpu> gpus,
                List<NvLink> nvlinks,
                List<Nic> nics) {
            this(hostname, cpus, pciSwitches, gpus, nvlinks, nics, null);
        }

        /** This host with its GPUs' peer access as NVML reports it ({@code denied}: see {@link #p2pDenied}). */
        public Node withP2pDenied(List<List<Integer>> denied) {
            return new Node(hostname, cpus, pciSwitches, gpus, nvlinks, nics, denied);
        }

        /** Whether the driver denies peer access between GPUs {@code a} and {@code b}; null when not known. */
        public Boolean p2pDenied(int a, int b) {
            if (p2pDenied == null) {
                return null;
            }
            List<Integer> pair = List.of(Math.min(a, b), Math.max(a, b));
            return p2pDenied.contains(pair);
        }

        public Node {
            hostname = hostname == null ? "node" : hostname;
            cpus = cpus == null ? List.of() : List.copyOf(cpus);
            pciSwitches = pciSwitches == null ? List.of() : List.copyOf(pciSwitches);
            gpus = gpus == null ? List.of() : List.copyOf(gpus);
            nvlinks = nvlinks == null ? List.of() : List.copyOf(nvlinks);
            nics = nics == null ? List.of() : List.copyOf(nics);
            Set<String> ids = new HashSet<>();
            for (Cpu c : cpus) {
                if (!ids.add(c.id())) {
                    throw PathproofException.badInput("topology." + hostname + ": duplicate id '" + c.id() + "'");
                }
            }
            for (PciSwitch p : pciSwitches) {
                if (!ids.add(p.id())) {
                    throw PathproofException.badInput("topology." + hostname + ": duplicate id '" + p.id() + "'");
                }
            }
            Set<Integer> gpuIdx = new HashSet<>();
            for (Gpu g : gpus) {
                if (!gpuIdx.add(g.index())) {
                    throw PathproofException.badInput("topology." + hostname + ".gpus: duplicate index " + g.index());
                }
                if (g.pciParent() != null && !ids.contains(g.pciParent())) {
                    throw PathproofException.badInput("topology." + hostname + ".gpus[" + g.index()
                            + "].pciParent: unknown '" + g.pciParent() + "'");
                }
            }
            for (PciSwitch p : pciSwitches) {
                if (p.parent() != null && !ids.contains(p.parent())) {
                    throw PathproofException.badInput("topology." + hostname + ".pciSwitches[" + p.id()
                            + "].parent: unknown '" + p.parent() + "'");
                }
            }
            for (Nic n : nics) {
                if (n.pciParent() != null && !ids.contains(n.pciParent())) {
                    throw PathproofException.badInput("topology." + hostname + ".nics[" + n.name()
                            + "].pciParent: unknown '" + n.pciParent() + "'");
                }
            }
            for (NvLink l : nvlinks) {
                if (!gpuIdx.contains(l.gpuA()) || !gpuIdx.contains(l.gpuB()) || l.gpuA() == l.gpuB()) {
                    throw PathproofException.badInput(
                            "topology." + hostname + ".nvlinks: impossible link " + l.gpuA() + "-" + l.gpuB());
                }
            }
            if (p2pDenied != null) {
                Set<List<Integer>> pairs =
                        new java.util.TreeSet<>(java.util.Comparator.<List<Integer>>comparingInt(x -> x.get(0))
                                .thenComparingInt(x -> x.get(1)));
                for (List<Integer> pr : p2pDenied) {
                    if (pr == null
                            || pr.size() != 2
                            || pr.get(0) == null
                            || pr.get(1) == null
                            || pr.get(0).equals(pr.get(1))
                            || !gpuIdx.contains(pr.get(0))
                            || !gpuIdx.contains(pr.get(1))) {
                        throw PathproofException.badInput("topology." + hostname + ".p2pDenied: " + pr
                                + " is not a pair of two of this node's GPU indices "
                                + new java.util.TreeSet<>(gpuIdx));
                    }
                    pairs.add(List.of(Math.min(pr.get(0), pr.get(1)), Math.max(pr.get(0), pr.get(1))));
                }
                p2pDenied = List.copyOf(pairs);
            }
        }
    }

    /** A CPU socket (NUMA node). {@code vendor} is "intel", "amd", "arm" …: it sets NCCL's inter-socket bandwidth. */
    public record Cpu(String id, int numaId, String arch, String vendor) {
        public Cpu {
            if (id == null || id.isBlank()) {
                throw PathproofException.badInput("topology.cpus[].id: missing");
            }
        }
    }

    /**
     * A PCIe switch (or root port) between a CPU and devices. {@code gen} is the PCIe generation (3, 4, 5, 6) and
     * {@code width} the lane count of its upstream link.
     */
    public record PciSwitch(String id, String parent, int gen, int width) {
        public PciSwitch {
            if (id == null || id.isBlank()) {
                throw PathproofException.badInput("topology.pciSwitches[].id: missing");
            }
        }
    }

    /**
     * A GPU. {@code computeCapability} as an integer (70 for V100, 80 for A100, 90 for H100/H200). {@code nvswitchLinks}
     * is the number of NVLinks from this GPU into the node's NVSwitch fabric (0 when there is none). {@code pciGen} and
     * {@code pciWidth} describe the GPU's own upstream PCIe link.
     */
    public record Gpu(
            int index,
            String model,
            int computeCapability,
            String busId,
            String pciParent,
            int pciGen,
            int pciWidth,
            int nvswitchLinks) {
        public Gpu {
            if (index < 0) {
                throw PathproofException.badInput("topology.gpus[].index: negative");
            }
            if (computeCapability < 30 || computeCapability > 200) {
                throw PathproofException.badInput("topology.gpus[" + index + "].computeCapability: " + computeCapability
                        + " is not a CUDA capability (e.g. 70, 90)");
            }
            if (nvswitchLinks < 0) {
                throw PathproofException.badInput("topology.gpus[" + index + "].nvswitchLinks: negative");
            }
        }
    }

    /** {@code count} NVLinks directly between two GPUs of the node (an NV2 pair has count 2). */
    public record NvLink(int gpuA, int gpuB, int count) {
        public NvLink {
            if (count <= 0) {
                throw PathproofException.badInput("topology.nvlinks: count must be > 0");
            }
        }
    }

    /**
     * A network port. {@code speedMbps} as NCCL reports it (400 Gb/s = 400000); {@code gdr}: GPUDirect RDMA possible;
     * {@code pciGen}/{@code pciWidth}: the NIC's own PCIe link where known (an NCCL dump's {@code <pci>} around the
     * {@code <nic>}), else null: as wide as the switch it hangs off.
     */
    public record Nic(
            String name, String pciParent, long speedMbps, boolean gdr, String kind, Integer pciGen, Integer pciWidth) {
        public Nic {
            if (name == null || name.isBlank()) {
                throw PathproofException.badInput("topology.nics[].name: missing");
            }
            if (speedMbps <= 0) {
                throw PathproofException.badInput("topology.nics[" + name + "].speedMbps: must be > 0");
            }
            if ((pciGen == null) != (pciWidth == null)) {
                throw PathproofException.badInput(
                        "topology.nics[" + name + "]: pciGen and pciWidth are given together or not at all");
            }
            if (pciGen != null && (pciGen < 1 || pciGen > 7 || pciWidth < 1)) {
                throw PathproofException.badInput(
                        "topology.nics[" + name + "]: PCIe gen " + pciGen + " x" + pciWidth + " does not exist");
            }
        }

        /** A NIC whose own PCIe link is not known: the model takes its switch's (see TopoBuilder.addNets). */
        public Nic(String name, String pciParent, long speedMbps, boolean gdr, String kind) {
            this(name, pciParent, speedMbps, gdr, kind, null, null);
        }

        /** This NIC at another speed, everything else kept. */
        public Nic atSpeed(long mbps) {
            return new Nic(name, pciParent, mbps, gdr, kind, pciGen, pciWidth);
        }
    }
}
