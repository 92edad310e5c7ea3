package io.pathproof.scenario;

import io.pathproof.core.PathproofException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Imports the text of {@code nvidia-smi topo -m} (terminal escape codes allowed). The matrix gives, per device pair,
 * one of X, SYS, NODE, PHB, PXB, PIX, NV#; the columns "CPU Affinity" and "NUMA Affinity" give each GPU's socket; a
 * "NIC Legend" maps NIC0… to device names. Lines of {@code nvidia-smi -L}
 * ({@code GPU 0: NVIDIA H200 (UUID: …)}), of nvidia-smi's table ({@code |   0  NVIDIA L40S   On  | …}) or of an
 * environment report ({@code GPU 0,1,2,3: NVIDIA H20}) in the same file give model names.
 *
 * <p>What it infers, and says so in {@link Topology#inferred()}:
 *
 * <ul>
 *   <li>sockets: one CPU per distinct NUMA affinity (followed where the matrix disagrees, and said); without NUMA
 *       affinity, GPUs joined by SYS are on different sockets and the rest on one;
 *   <li>PCIe: GPUs (and NICs) related by PIX or PXB share a switch; NODE and PHB pairs do not; a GPU whose PCIe
 *       relation to every other GPU is hidden behind NV# gets a switch of its own;
 *   <li>NVLink: NV# between two GPUs is a direct link of # lanes, unless the counts are impossible for direct links
 *       (# × (GPUs − 1) more than the GPU can have, {@link GpuModels#maxNvLinks}), which means an NVSwitch fabric:
 *       then every GPU has # links into the switch;
 *   <li>model, compute capability, PCIe generation: from {@code nvidia-smi -L} lines or the hints, through
 *       {@link GpuModels}; PCIe width 16.
 * </ul>
 */
final class NvidiaSmiTopoReader {
    private static final Pattern ANSI = Pattern.compile("\u001B\\[[0-9;]*[A-Za-z]");
    private static final Pattern GPU_L = Pattern.compile("^GPU (\\d+): (.+?) \\(UUID:.*$");
    /** torch's and vLLM's environment reports: "GPU 0,1,2,3: NVIDIA H20" (several GPUs of one model). */
    private static final Pattern GPU_LIST = Pattern.compile("^GPU ((?:\\d+,)*\\d+): (\\S.*)$");
    /** nvidia-smi's own table: "|   0  NVIDIA L40S                    On  |   00000000:8D:00.0 Off |". */
    private static final Pattern SMI_TABLE = Pattern.compile("^\\|\\s+(\\d+)\\s+(\\S.*?)\\s{2,}(?:On|Off)\\s+\\|.*$");

    private static final Pattern NIC_LEGEND = Pattern.compile("^\\s*(NIC\\d+):\\s*(\\S+)\\s*$");
    private static final Pattern NV = Pattern.compile("^NV(\\d+)$");
    private static final Pattern LEADING_NUMBER = Pattern.compile("^(\\d+)");

    private final String source;
    private final TopologyHints hints;
    private final List<String> inferred = new ArrayList<>();

    // What the text says: the matrix header, its rows by device, and the -L and NIC legend lines.
    private List<String> header;
    private int headerLine = -1;
    private final Map<String, List<String>> rows = new LinkedHashMap<>();
    private final Map<String, Integer> rowLine = new LinkedHashMap<>();
    private final Map<Integer, String> smiModels = new TreeMap<>();
    private final Map<String, String> nicNames = new LinkedHashMap<>();

    // The matrix: the devices of the header (GPUs first, then NICs) and each pair's relation.
    private final List<String> devices = new ArrayList<>();
    private final List<Integer> gpuIdx = new ArrayList<>();
    private final List<String> nicCols = new ArrayList<>();
    private String[][] rel;
    private int n;

    // What is inferred from it, step by step.
    private final Map<Integer, Integer> socketOfGpu = new TreeMap<>();
    private final TreeSet<Integer> sockets = new TreeSet<>();
    private int[] group;
    private final Map<Integer, GpuModels.Known> known = new TreeMap<>();
    private final Map<Integer, String> modelOf = new TreeMap<>();
    private int cc0;
    private boolean nvswitch;
    private int uniform = -1;
    private final List<Topology.PciSwitch> switches = new ArrayList<>();
    private final Map<Integer, String> switchOfGroup = new TreeMap<>();

    private NvidiaSmiTopoReader(String source, TopologyHints hints) {
        this.source = source;
        this.hints = hints;
    }

    static boolean looksLike(String text) {
        String t = ANSI.matcher(text).replaceAll("");
        return t.contains("GPU0") && (t.contains("CPU Affinity") || t.contains("Legend:"));
    }

    static Topology read(String text, String source, String name, TopologyHints hints) {
        NvidiaSmiTopoReader r = new NvidiaSmiTopoReader(source, hints);
        r.scan(ANSI.matcher(text).replaceAll("").split("\r?\n", -1));
        r.relations();
        r.sockets();
        List<Topology.Cpu> cpus = r.cpus();
        r.pcieGroups();
        r.models();
        List<Topology.NvLink> links = r.nvLinks();
        List<Topology.Gpu> gpus = r.gpus();
        List<Topology.Nic> nics = r.nics();
        Topology.Node node =
                JsonInput.build(source, () -> new Topology.Node("node", cpus, r.switches, gpus, links, nics));
        return JsonInput.build(source, () -> new Topology(name, List.of(node), r.inferred));
    }

    /** Sorts the lines: nvidia-smi -L lines, the NIC legend, the matrix header and the matrix rows. */
    private void scan(String[] lines) {
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            Matcher gl = GPU_L.matcher(line.trim());
            if (gl.matches()) {
                smiModels.put(Integer.parseInt(gl.group(1)), gl.group(2).trim());
                continue;
            }
            Matcher list = GPU_LIST.matcher(line.trim());
            if (list.matches() && !list.group(2).contains("Compute Capability")) {
                for (String g : list.group(1).split(",")) {
                    smiModels.putIfAbsent(Integer.parseInt(g), list.group(2).trim());
                }
                continue;
            }
            Matcher table = SMI_TABLE.matcher(line.trim());
            if (table.matches()) {
                smiModels.putIfAbsent(
                        Integer.parseInt(table.group(1)), table.group(2).trim());
                continue;
            }
            if (line.contains("topo -mp")) {
                inferred.add("the matrix is nvidia-smi topo -mp (" + source + ":" + (i + 1) + "): PCIe relations only,"
                        + " NVLinks not shown, so none are predicted");
            }
            Matcher nl = NIC_LEGEND.matcher(line);
            if (nl.matches()) {
                nicNames.put(nl.group(1), nl.group(2));
                continue;
            }
            if (header == null && line.contains("GPU0") && line.startsWith("\t")) {
                header = new ArrayList<>();
                for (String c : line.substring(1).split("\t")) {
                    header.add(c.trim());
                }
                headerLine = i + 1;
                continue;
            }
            if (header != null && !line.isBlank() && !line.startsWith(" ") && line.contains("\t")) {
                String[] cells = line.split("\t", -1);
                String rowName = cells[0].trim();
                if (rowName.equals("Legend:")) {
                    continue;
                }
                List<String> vals = new ArrayList<>();
                for (int c = 1; c < cells.length; c++) {
                    vals.add(cells[c].trim());
                }
                rows.put(rowName, vals);
                rowLine.put(rowName, i + 1);
            }
        }
        if (header == null) {
            throw PathproofException.badInput(source + ": no matrix header (a line starting with a tab and GPU0)");
        }
    }

    /** The devices of the header and the relation of each pair, every cell one nvidia-smi prints. */
    private void relations() {
        for (String h : header) {
            if (h.equals("CPU Affinity") || h.equals("NUMA Affinity") || h.equals("GPU NUMA ID") || h.isEmpty()) {
                break;
            }
            devices.add(h);
        }
        for (String d : devices) {
            if (d.matches("GPU\\d+")) {
                gpuIdx.add(Integer.parseInt(d.substring(3)));
            } else {
                nicCols.add(d);
            }
        }
        n = gpuIdx.size();
        rel = new String[devices.size()][devices.size()];
        for (int r = 0; r < devices.size(); r++) {
            String dev = devices.get(r);
            List<String> vals = rows.get(dev);
            if (vals == null) {
                throw PathproofException.badInput(source + ":" + headerLine + ": column " + dev + " has no row");
            }
            if (vals.size() < devices.size()) {
                throw PathproofException.badInput(source + ":" + rowLine.get(dev) + ": row " + dev + " has "
                        + vals.size() + " cells, the header has " + devices.size() + " devices");
            }
            for (int c = 0; c < devices.size(); c++) {
                String v = vals.get(c);
                if (!(v.equals("X")
                        || v.equals("SYS")
                        || v.equals("NODE")
                        || v.equals("PHB")
                        || v.equals("PXB")
                        || v.equals("PIX")
                        || NV.matcher(v).matches())) {
                    throw PathproofException.badInput(source + ":" + rowLine.get(dev) + ": row " + dev + ", column "
                            + devices.get(c) + ": '" + v + "' is not X, SYS, NODE, PHB, PXB, PIX or NV#");
                }
                rel[r][c] = v;
            }
        }
    }

    /** Each GPU's socket: its NUMA affinity, else one socket more at every SYS; SYS within one socket is refused. */
    private void sockets() {
        int numaCol = header.indexOf("NUMA Affinity");
        boolean numaKnown = numaCol >= 0;
        for (int g = 0; g < n && numaKnown; g++) {
            List<String> vals = rows.get(devices.get(g));
            String v = numaCol < vals.size() ? vals.get(numaCol) : "";
            Matcher m = LEADING_NUMBER.matcher(v);
            if (m.find()) {
                socketOfGpu.put(g, Integer.parseInt(m.group(1)));
            } else {
                numaKnown = false;
            }
        }
        if (!numaKnown) {
            socketOfGpu.clear();
            for (int g = 0; g < n; g++) {
                int s = 0;
                for (int h = 0; h < g; h++) {
                    if (!rel[g][h].equals("SYS")) {
                        s = socketOfGpu.get(h);
                        break;
                    }
                    s = Math.max(s, socketOfGpu.get(h) + 1);
                }
                socketOfGpu.put(g, s);
            }
            inferred.add("sockets: no NUMA affinity column; GPUs joined by SYS put on different sockets");
        }
        // nvidia-smi and the NUMA column can disagree (SYS inside one NUMA node on some AMD and consumer boards, NODE
        // across two). NCCL puts each device under the CPU of its sysfs NUMA node (ncclTopoGetXmlFromSys,
        // graph/xml.cc@v2.28.9-1), which is what the NUMA column says: it is followed, and every disagreement said.
        List<String> disagree = new ArrayList<>();
        for (int g = 0; g < n; g++) {
            for (int h = g + 1; h < n; h++) {
                boolean same = socketOfGpu.get(g).equals(socketOfGpu.get(h));
                boolean sys = rel[g][h].equals("SYS");
                if (sys && same && !numaKnown) {
                    throw PathproofException.badInput(source + ":" + rowLine.get(devices.get(g)) + ": GPU"
                            + gpuIdx.get(g)
                            + " and GPU" + gpuIdx.get(h) + " are SYS (different sockets), but another GPU joins both"
                            + " on one socket; add the NUMA Affinity column (nvidia-smi topo -m of a newer driver)");
                }
                if (sys == same && numaKnown && !rel[g][h].startsWith("NV")) {
                    disagree.add("GPU" + gpuIdx.get(g) + "-GPU" + gpuIdx.get(h) + " " + rel[g][h] + " in NUMA "
                            + socketOfGpu.get(g) + (same ? "" : "/" + socketOfGpu.get(h)));
                }
            }
        }
        if (!disagree.isEmpty()) {
            inferred.add(disagree.size() + " GPU pair(s) where the matrix and the NUMA column disagree ("
                    + String.join(", ", disagree.subList(0, Math.min(4, disagree.size())))
                    + (disagree.size() > 4 ? ", …" : "") + "): the NUMA column followed, as NCCL puts a device under"
                    + " the CPU of its NUMA node; SYS within one node is then a path through that CPU (PHB), and NODE"
                    + " across two a path between sockets (SYS)");
        }
        sockets.addAll(socketOfGpu.values());
        if (sockets.isEmpty()) {
            sockets.add(0);
        }
    }

    private List<Topology.Cpu> cpus() {
        List<Topology.Cpu> cpus = new ArrayList<>();
        for (int s : sockets) {
            cpus.add(new Topology.Cpu("cpu" + s, s, "x86_64", null));
        }
        inferred.add("CPU arch/vendor are not in nvidia-smi topo -m: x86_64 assumed, vendor unknown, so NCCL's choices"
                + " for an unknown vendor: P2P up to PXB (AMD's SYS for 2 GPUs not taken, paths.cc:319-324@v2.28.9-1),"
                + " and an inter-socket link at LOC_BW (topo.cc:70-94); an NCCL topology dump names the vendor");
        return cpus;
    }

    /** PCIe switches: the union of PIX/PXB relations over all devices (GPUs and NICs). */
    private void pcieGroups() {
        int d = devices.size();
        group = new int[d];
        for (int i = 0; i < d; i++) {
            group[i] = i;
        }
        for (int i = 0; i < d; i++) {
            for (int j = 0; j < d; j++) {
                if (i != j && (rel[i][j].equals("PIX") || rel[i][j].equals("PXB"))) {
                    union(group, i, j);
                }
            }
        }
        boolean hidden = false;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (i != j && rel[i][j].startsWith("NV")) {
                    hidden = true;
                }
            }
        }
        if (hidden) {
            inferred.add("PCIe: GPU pairs joined by NVLink show NV# instead of their PCIe relation; such GPUs share a"
                    + " switch only if a NIC or another GPU shows PIX/PXB to both");
        }
    }

    /** Each GPU's model (nvidia-smi -L, else the hint) and the compute capability it gives, unless one is given. */
    private void models() {
        for (int g = 0; g < n; g++) {
            int idx = gpuIdx.get(g);
            String model = smiModels.getOrDefault(idx, hints.gpuModel());
            if (model == null && hints.computeCapability() == null) {
                throw PathproofException.usage(source + ": GPU" + idx + ": model unknown (nvidia-smi topo -m does not"
                        + " print it): give --gpu-model NAME or --gpu-cc CC, or append the output of nvidia-smi -L");
            }
            GpuModels.Known k = GpuModels.lookup(model);
            if (k == null && hints.computeCapability() == null) {
                throw PathproofException.usage(source + ": GPU" + idx + ": model '" + model + "' is not one whose"
                        + " compute capability pathproof knows: give --gpu-cc CC (86 for sm_86)");
            }
            known.put(g, k);
            modelOf.put(g, model == null ? "unknown" : model);
        }
        cc0 = hints.computeCapability() != null
                ? hints.computeCapability()
                : n == 0 ? 0 : known.get(0).computeCapability();
        if (n > 0) {
            inferred.add(
                    hints.computeCapability() != null
                            ? "compute capability " + cc0 + " given as a hint"
                            : "compute capability from the model name ("
                                    + known.get(0).family() + " → " + cc0 + ")");
        }
    }

    /**
     * NVLink: a direct link per NV# pair, unless every pair shows the same NV# and that many links to each other GPU
     * is more than the GPU can have: an NVSwitch fabric, no direct links.
     */
    private List<Topology.NvLink> nvLinks() {
        boolean allPairsNv = n > 1;
        for (int i = 0; i < n && allPairsNv; i++) {
            for (int j = 0; j < n; j++) {
                if (i == j) {
                    continue;
                }
                Matcher m = NV.matcher(rel[i][j]);
                if (!m.matches()) {
                    allPairsNv = false;
                    break;
                }
                int c = Integer.parseInt(m.group(1));
                if (uniform == -1) {
                    uniform = c;
                } else if (uniform != c) {
                    uniform = -2;
                }
            }
        }
        nvswitch = allPairsNv && uniform > 0 && (long) uniform * (n - 1) > GpuModels.maxNvLinks(cc0);
        List<Topology.NvLink> links = new ArrayList<>();
        if (nvswitch) {
            inferred.add("NVLink: every GPU pair shows NV" + uniform + ", more than " + GpuModels.maxNvLinks(cc0)
                    + " links a GPU of sm" + cc0 + " can have directly; read as an NVSwitch fabric with " + uniform
                    + " links per GPU");
            return links;
        }
        for (int i = 0; i < n; i++) {
            for (int j = i + 1; j < n; j++) {
                Matcher m = NV.matcher(rel[i][j]);
                if (m.matches()) {
                    links.add(new Topology.NvLink(gpuIdx.get(i), gpuIdx.get(j), Integer.parseInt(m.group(1))));
                }
            }
        }
        return links;
    }

    /** The GPUs, each under the switch of its PCIe group (one switch a group, on the socket of its first GPU). */
    private List<Topology.Gpu> gpus() {
        List<Topology.Gpu> gpus = new ArrayList<>();
        for (int g = 0; g < n; g++) {
            int root = find(group, g);
            String sw = switchOfGroup.get(root);
            GpuModels.Known k = known.get(g);
            int gen = k != null && k.pciGen() > 0 ? k.pciGen() : 3;
            if (sw == null) {
                sw = "pcisw" + switchOfGroup.size();
                switchOfGroup.put(root, sw);
                switches.add(new Topology.PciSwitch(sw, "cpu" + socketOfGpu.get(g), gen, 16));
            }
            int cc = hints.computeCapability() != null ? hints.computeCapability() : k.computeCapability();
            gpus.add(new Topology.Gpu(gpuIdx.get(g), modelOf.get(g), cc, null, sw, gen, 16, nvswitch ? uniform : 0));
        }
        if (n > 0) {
            GpuModels.Known k = known.get(0);
            inferred.add(
                    k != null && k.pciGen() > 0
                            ? "PCIe gen" + k.pciGen() + " x16 from the model name (" + k.family() + ")"
                            : "PCIe generation unknown: NCCL's fallback 8 GT/s (gen3) x16 taken");
        }
        return gpus;
    }

    /** The NICs, where their speed is given: under a GPU's switch, else on the socket of the nearest GPU. */
    private List<Topology.Nic> nics() {
        List<Topology.Nic> nics = new ArrayList<>();
        for (int c = 0; c < nicCols.size(); c++) {
            int di = n + c;
            String col = nicCols.get(c);
            String nicName = nicNames.getOrDefault(col, col);
            if (hints.nicSpeedMbps() == null) {
                inferred.add(
                        "NIC " + nicName + " left out: the speed is not in nvidia-smi topo -m (give --nic-speed MBPS)");
                continue;
            }
            String parent = switchOfGroup.get(find(group, di));
            if (parent == null) {
                // Not under a GPU's switch: hang it off the socket of the nearest GPU (NODE), else socket 0.
                parent = "cpu" + sockets.first();
                for (int g = 0; g < n; g++) {
                    if (rel[di][g].equals("NODE") || rel[di][g].equals("PHB")) {
                        parent = "cpu" + socketOfGpu.get(g);
                        break;
                    }
                }
            }
            String cpu = parent;
            for (Topology.PciSwitch sw : switches) {
                if (sw.id().equals(parent)) {
                    cpu = sw.parent();
                }
            }
            List<String> across = new ArrayList<>();
            for (int g = 0; g < n; g++) {
                String r = rel[di][g];
                if (!r.equals("SYS") && !("cpu" + socketOfGpu.get(g)).equals(cpu)) {
                    across.add("GPU" + gpuIdx.get(g) + " " + r);
                }
            }
            if (!across.isEmpty()) {
                inferred.add(
                        "NIC " + nicName + " put on " + cpu + " with the GPUs it shares a switch or node with, though"
                                + " the matrix also joins it within one node to GPUs of another NUMA node ("
                                + String.join(", ", across)
                                + "): those paths taken as crossing sockets (SYS)");
            }
            nics.add(new Topology.Nic(nicName, parent, hints.nicSpeedMbps(), false, "net"));
            inferred.add("NIC " + nicName + ": speed " + hints.nicSpeedMbps() + " Mb/s given as a hint; GPUDirect RDMA"
                    + " unknown, taken as off");
        }
        return nics;
    }

    private static int find(int[] g, int i) {
        while (g[i] != i) {
            g[i] = g[g[i]];
            i = g[i];
        }
        return i;
    }

    private static void union(int[] g, int a, int b) {
        int ra = find(g, a);
        int rb = find(g, b);
        if (ra != rb) {
            g[Math.max(ra, rb)] = Math.min(ra, rb);
        }
    }
}
