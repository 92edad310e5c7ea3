package io.pathproof.run;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.scenario.NcclTopoXmlWriter;
import io.pathproof.scenario.Topology;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code run --emulate}: N rank processes on the one real GPU, each reporting the busId of one GPU of an emulated
 * machine, with NCCL built from source with pathproof's patch (native/nccl-emulator/) preloaded. NCCL's own code then
 * makes its decisions for the emulated machine (topology search, algorithm, protocol, channels, launch shape); its
 * timings are not physical, since the processes take turns on one GPU. An emulated cluster is several such nodes on
 * the one GPU: each node's ranks carry the node's name as NCCL_HOSTID (NCCL's host hash, misc/utils.cc:87@v2.28.9-1,
 * so NCCL counts nodes and joins them through its network transport) and the node's own NCCL_TOPO_FILE. Every
 * refusal here happens before the run directory is made and before any process starts.
 */
final class Emulation {
    /** The words every consumer (manifest, accept, diagnose, report) keys on; keep them as they are. */
    static final String NOTE = "emulated: NCCL decisions real, timings not physical";

    static final String XML = "emulated-topo.xml";
    static final String LIBRARY = "libnccl.so.2";
    /** The patched library reads this variable (nvmlwrap.cc of the patch); a stock NCCL has no such string. */
    static final String MARK = "NCCL_EMULATE_BUSID";
    /** Variables the emulation sets itself; an injection of one would break it (multicast on a shared GPU, …). */
    static final List<String> OWNED = List.of(
            "NCCL_TOPO_FILE", "NCCL_NVLS_ENABLE", "NCCL_MNNVL_ENABLE", "NCCL_EMULATE_BUSID", "NCCL_EMULATE_COMPCAP");

    static final String BUILD_HINT =
            "build it with scripts/build-nccl-emulator.sh NCCL_SRC OUT and pass --nccl-lib OUT";
    /** An emulated cluster's variables, set per node or for the network: an injection of one would undo the nodes. */
    static final List<String> OWNED_CLUSTER =
            List.of("NCCL_HOSTID", "NCCL_NET", "NCCL_SOCKET_IFNAME", "NCCL_NET_PLUGIN");
    /** Node k's topology file in the run directory. */
    static final String NODE_XML = "emulated-topo-node%d.xml";
    /** Node k's NIC list for pathproof's net plugin (native/nccl-net-emu: PATHPROOF_NET_EMU_NICS_FILE). */
    static final String NODE_NICS = "emulated-nics-node%d.txt";
    /** The cluster as the in-run prediction reads it: the topology NCCL sees, as a topology JSON. */
    static final String CLUSTER_JSON = "emulated-cluster.json";
    /** The manifest's words for how the emulated nodes reach each other. */
    static final String SOCKET = "NET/Socket over loopback (NCCL_NET=Socket, NCCL_SOCKET_IFNAME=lo): one NIC 'lo' per"
            + " node, no GPUDirect RDMA";

    private Emulation() {}

    /** The patched library and what its build recorded (BUILD-INFO, written by scripts/build-nccl-emulator.sh). */
    record Library(Path file, String label, String sha256, Map<String, String> buildInfo) {}

    /** The real GPU as torch sees CUDA device 0; either part null when not found out. */
    record RealGpu(String name, String busId) {}

    /** Checks the request against the emulation; returns the library. Usage errors exit 2, bad topologies exit 3. */
    static Library check(Runner.Request req, Runner.Emulate emu, Injection inj) {
        Topology t = emu.topology();
        Library lib = checkMachine(emu, inj);
        int nproc = req.ranks().perNode();
        if (emu.cluster() && nproc != t.gpuCount()) {
            throw PathproofException.badInput("--emulate " + emu.topologyLabel() + ": " + nproc + " rank(s) but the"
                    + " emulated cluster has " + emu.nodes() + " nodes x " + emu.ranksPerNode()
                    + " GPUs: one rank per emulated"
                    + " GPU (--nproc-per-node sets the ranks of each node)");
        }
        if (nproc > t.gpuCount()) {
            throw PathproofException.badInput("--emulate " + emu.topologyLabel() + ": --nproc " + nproc
                    + " but the topology has " + t.gpuCount() + " GPU(s): one rank per emulated GPU");
        }
        if (req.ranks().nodes() != 1) {
            throw PathproofException.usage(
                    "--emulate: every emulated rank runs here, started by this launcher; --nnodes" + " must be 1, got "
                            + req.ranks().nodes() + " (an emulated cluster is --emulate TOPOLOGY --nodes N)");
        }
        if (req.start().backend() == Runner.Backend.GLOO) {
            throw PathproofException.usage("--emulate: emulates NCCL; --backend must be nccl (or auto), got gloo");
        }
        Runner.Launcher launcher = req.start().launcher();
        if (launcher == Runner.Launcher.TORCHRUN || launcher == Runner.Launcher.SRUN) {
            throw PathproofException.usage(
                    "--emulate: each rank needs its own busId, so pathproof starts the ranks itself;"
                            + " use --launcher spawn (or auto), not "
                            + launcher.name().toLowerCase(java.util.Locale.ROOT));
        }
        return lib;
    }

    /**
     * The checks a user's own command shares with pathproof's job (its ranks, backend and launcher are its own): GPUs
     * on every node, no injected variable the emulation sets itself, a real compute capability, the net plugin there;
     * returns the library.
     */
    static Library checkMachine(Runner.Emulate emu, Injection inj) {
        Topology t = emu.topology();
        for (Topology.Node n : t.nodes()) {
            if (n.gpus().isEmpty()) {
                throw PathproofException.badInput("--emulate " + emu.topologyLabel() + ": "
                        + (emu.cluster() ? "node " + n.hostname() + " has" : "the topology has")
                        + " no GPU to emulate");
            }
        }
        List<String> owned = new java.util.ArrayList<>(OWNED);
        if (emu.cluster()) {
            owned.addAll(OWNED_CLUSTER);
        }
        for (String k : owned) {
            // A scenario that already turns NVLS/MNNVL off (prove passes its env) asks for what the emulation sets
            // anyway.
            boolean same = (k.equals("NCCL_NVLS_ENABLE") || k.equals("NCCL_MNNVL_ENABLE"))
                    && "0".equals(inj.env().get(k));
            if (inj.env().containsKey(k) && !same) {
                throw PathproofException.usage("--emulate: " + k + " is set by the emulation and cannot be injected");
            }
        }
        if (emu.compCap() != null && (emu.compCap() < 30 || emu.compCap() > 200)) {
            throw PathproofException.usage(
                    "--emulate-compcap " + emu.compCap() + ": not a CUDA capability (e.g. 70, 90)");
        }
        if (emu.netPlugin() != null) {
            netPlugin(emu.netPlugin());
        }
        return library(emu.ncclLib());
    }

    /**
     * {@code --net-plugin DIR|FILE}: an NCCL net plugin library (DIR holding one {@code libnccl-net*.so}, or the file),
     * loaded by NCCL from NCCL_NET_PLUGIN as its file name, with its folder first on LD_LIBRARY_PATH (see env).
     */
    static Path netPlugin(Path given) {
        Path file = given;
        if (Files.isDirectory(given)) {
            try (var s = Files.list(given)) {
                List<Path> libs = s.filter(p -> p.getFileName().toString().matches("libnccl-net.*\\.so(\\..*)?"))
                        .sorted()
                        .toList();
                if (libs.size() != 1) {
                    throw PathproofException.usage(
                            "--net-plugin " + given + ": " + (libs.isEmpty() ? "no" : libs.size())
                                    + " libnccl-net*.so there; give the plugin library itself");
                }
                file = libs.get(0);
            } catch (IOException e) {
                throw PathproofException.usage("--net-plugin " + given + ": cannot list: " + e.getMessage());
            }
        }
        if (!Files.isRegularFile(file)) {
            throw PathproofException.usage("--net-plugin " + given + ": no such file (an NCCL net plugin library)");
        }
        return file.toAbsolutePath().normalize();
    }

    /** DIR/libnccl.so.2 (or the file itself), refused with the way to build it when missing or not patched. */
    static Library library(Path given) {
        if (given == null) {
            throw PathproofException.usage("--emulate needs --nccl-lib DIR, the patched NCCL: " + BUILD_HINT);
        }
        Path file = Files.isDirectory(given) ? given.resolve(LIBRARY) : given;
        Path dir = file.toAbsolutePath().normalize().getParent();
        if (!Files.isRegularFile(file)) {
            throw PathproofException.usage("--nccl-lib " + given + ": no " + LIBRARY + " there; " + BUILD_HINT);
        }
        String sha;
        boolean patched;
        try (InputStream in = Files.newInputStream(file)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            patched = scan(in, MARK.getBytes(StandardCharsets.US_ASCII), md);
            sha = HexFormat.of().formatHex(md.digest());
        } catch (IOException e) {
            throw PathproofException.usage(
                    "--nccl-lib " + file + ": cannot read: " + e.getMessage() + "; " + BUILD_HINT);
        } catch (NoSuchAlgorithmException e) {
            throw new PathproofException(ExitCode.INTERNAL, "run: no SHA-256 in this Java runtime", e);
        }
        if (!patched) {
            throw PathproofException.usage("--nccl-lib " + file + ": a stock NCCL (no " + MARK
                    + "; it refuses two ranks on" + " one GPU); " + BUILD_HINT);
        }
        String label = (dir == null || dir.getFileName() == null ? "" : dir.getFileName() + "/") + file.getFileName();
        return new Library(file.toAbsolutePath().normalize(), label, sha, buildInfo(dir));
    }

    /** Overrides where {@code --backend auto} looks for the library (a directory holding libnccl.so.2, or the file). */
    static final String ENV = "PATHPROOF_NCCL_EMULATOR";
    /** Where auto looks last, relative to the working directory: the OUT that README gives the build script. */
    static final Path BUILT = Path.of("target", "nccl-emulator");

    /** {@link Runner#findEmulator}: the first place that names a library decides; a refused one is not skipped. */
    static Runner.EmulatorLibrary find(Path given, Map<String, String> env, Path cwd) {
        Path at;
        String how;
        if (given != null) {
            at = given;
            how = "--nccl-lib " + given;
        } else if (env.get(ENV) != null && !env.get(ENV).isBlank()) {
            at = Path.of(env.get(ENV));
            how = "$" + ENV;
        } else if (Files.isRegularFile(cwd.resolve(BUILT).resolve(LIBRARY))) {
            at = cwd.resolve(BUILT);
            how = BUILT.toString();
        } else {
            return new Runner.EmulatorLibrary(
                    null, "none: no --nccl-lib, no $" + ENV + ", no " + BUILT.resolve(LIBRARY), "not found");
        }
        try {
            return new Runner.EmulatorLibrary(library(at).file(), how, null);
        } catch (PathproofException e) {
            return new Runner.EmulatorLibrary(null, how, refusal(e.getMessage(), at));
        }
    }

    /** library()'s refusal without the path and the build hint: it goes into proof.json, which may be committed. */
    static String refusal(String message, Path at) {
        String m = message.endsWith("; " + BUILD_HINT)
                ? message.substring(0, message.length() - BUILD_HINT.length() - 2)
                : message;
        for (Path p : List.of(at.resolve(LIBRARY), at)) {
            String prefix = "--nccl-lib " + p + ": ";
            if (m.startsWith(prefix)) {
                return p.getFileName() + ": " + m.substring(prefix.length());
            }
        }
        return m;
    }

    /** True when {@code needle} occurs in the stream; every byte also goes through {@code md}. */
    static boolean scan(InputStream in, byte[] needle, MessageDigest md) throws IOException {
        byte[] buf = new byte[1 << 20];
        int matched = 0;
        boolean found = false;
        int n;
        while ((n = in.read(buf)) > 0) {
            md.update(buf, 0, n);
            if (found) {
                continue;
            }
            for (int i = 0; i < n && !found; i++) {
                // The needle has no repeated prefix, so a mismatch can restart at this byte.
                matched = buf[i] == needle[matched] ? matched + 1 : buf[i] == needle[0] ? 1 : 0;
                found = matched == needle.length;
            }
        }
        return found;
    }

    static Map<String, String> buildInfo(Path dir) {
        Map<String, String> m = new LinkedHashMap<>();
        Path f = dir == null ? null : dir.resolve("BUILD-INFO");
        if (f == null || !Files.isRegularFile(f)) {
            return m;
        }
        try {
            for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                int eq = line.indexOf('=');
                if (eq > 0) {
                    m.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
                }
            }
        } catch (IOException e) {
            // an unreadable BUILD-INFO leaves the version fields null; NCCL's own log still names its version
        }
        return m;
    }

    private static final String GPU_PROBE = String.join(
            "\n",
            "import subprocess, torch",
            "p = torch.cuda.get_device_properties(0)",
            "bus = ''",
            "try:",
            "    bus = '%04x:%02x:%02x.0' % (p.pci_domain_id, p.pci_bus_id, p.pci_device_id)",
            "except Exception:",
            "    try:",
            "        u = str(p.uuid).lower()",
            "        out = subprocess.run(['nvidia-smi', '--query-gpu=uuid,pci.bus_id', '--format=csv,noheader'],",
            "                             capture_output=True, text=True, timeout=60).stdout",
            "        for line in out.splitlines():",
            "            c = [x.strip() for x in line.split(',')]",
            "            if len(c) >= 2 and u and c[0].lower().endswith(u):",
            "                bus = c[1]",
            "    except Exception:",
            "        pass",
            "print('PATHPROOF_GPU_NAME ' + p.name)",
            "print('PATHPROOF_GPU_BUS ' + bus)",
            "");

    /**
     * CUDA device 0 as the ranks will see it (same environment): its name and PCI busId (torch's properties, else
     * nvidia-smi by UUID). A busId not found out leaves rank 0 with a made-up one like the other ranks.
     */
    static RealGpu probe(String python) {
        try {
            Process p = new ProcessBuilder(python, "-c", GPU_PROBE)
                    .redirectErrorStream(true)
                    .start();
            p.getOutputStream().close();
            if (!p.waitFor(180, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new RealGpu(null, null);
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            String name = null;
            String bus = null;
            for (String line : out.split("\\R")) {
                if (line.startsWith("PATHPROOF_GPU_NAME ")) {
                    name = line.substring(19).strip();
                } else if (line.startsWith("PATHPROOF_GPU_BUS ")) {
                    bus = NcclTopoXmlWriter.normalize(line.substring(18));
                }
            }
            return new RealGpu(name == null || name.isEmpty() ? null : name, bus);
        } catch (IOException e) {
            return new RealGpu(null, null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new RealGpu(null, null);
        }
    }

    /**
     * The environment every rank shares under emulation; what differs by rank is in {@link Nodes#rank}: the busId,
     * and on a cluster the node's host id and topology file.
     */
    static Map<String, String> env(Path dir, Library lib, Runner.Emulate emu) {
        Map<String, String> env = new LinkedHashMap<>();
        if (!emu.cluster()) {
            env.put("NCCL_TOPO_FILE", dir.resolve(XML).toString());
        }
        // torch loads its own libnccl through its RPATH; only a preload makes it use the patched one.
        String prior = System.getenv("LD_PRELOAD");
        env.put("LD_PRELOAD", lib.file() + (prior == null || prior.isBlank() ? "" : ":" + prior));
        // NVLink SHARP and multi-node NVLink would create multicast objects on the one real GPU: never under emulation.
        env.put("NCCL_NVLS_ENABLE", "0");
        env.put("NCCL_MNNVL_ENABLE", "0");
        // NCCL >= 2.30 refuses several ranks on one GPU unless told (init.cc:1059@v2.30.7-1); older NCCL ignores it.
        env.put("NCCL_MULTI_RANK_GPU_ENABLE", "1");
        env.put("PATHPROOF_CUDA_DEVICE", "0"); // harness.py: every rank on CUDA device 0, the one real GPU
        if (emu.compCap() != null) {
            env.put("NCCL_EMULATE_COMPCAP", Integer.toString(emu.compCap()));
        }
        if (emu.cluster()) {
            // Bootstrap and (without a plugin) the data between nodes over loopback; no InfiniBand device is a node's
            // NIC.
            env.put("NCCL_SOCKET_IFNAME", "lo");
            env.put("NCCL_IB_DISABLE", "1");
            if (emu.netPlugin() == null) {
                env.put("NCCL_NET", "Socket");
            } else {
                // The plugin and no other: without it NCCL stops instead of running the nodes over its Socket
                // transport.
                // By file name, its folder first on the library path: NCCL 2.27.3 opens NCCL_NET_PLUGIN as given only
                // when it is a bare lib*.so name and otherwise tries libnccl-net-<value>.so
                // (plugin/plugin_open.cc:63-89@v2.27.3-1); every other version opens a bare name through the library
                // path too (net.cc:388-389@v2.21.5-1, plugin/plugin_open.cc:37@v2.28.9-1).
                Path plugin = netPlugin(emu.netPlugin()).toAbsolutePath();
                String libPath = System.getenv("LD_LIBRARY_PATH");
                env.put("NCCL_NET_PLUGIN", plugin.getFileName().toString());
                env.put(
                        "LD_LIBRARY_PATH",
                        plugin.getParent() + (libPath == null || libPath.isBlank() ? "" : ":" + libPath));
                env.put("NCCL_NET", "emu");
            }
        }
        return env;
    }

    static Map<String, String> busIdEnv(String busId) {
        return Map.of(MARK, busId);
    }

    /**
     * One emulated node: its NCCL_HOSTID, its topology file (in the run directory), its ranks' busIds and, with a net
     * plugin, the file listing its NICs for the plugin (null without).
     */
    record Node(String hostId, String topologyXml, List<String> busIds, String nicsFile) {}

    /**
     * The emulated nodes as written into the run directory, node by node; rank r is on node r / ranksPerNode. A
     * single machine is one node without host id, its file {@link #XML}.
     */
    record Nodes(List<Node> nodes, int ranksPerNode) {
        /** Rank r's own variables: its emulated busId; on a cluster also its node's host id and topology file. */
        Map<String, String> rank(Path dir, int r) {
            Node n = nodes.get(r / ranksPerNode);
            Map<String, String> env = new LinkedHashMap<>();
            env.put(MARK, n.busIds().get(r % ranksPerNode));
            if (n.hostId() != null) {
                env.put("NCCL_HOSTID", n.hostId());
                env.put("NCCL_TOPO_FILE", dir.resolve(n.topologyXml()).toString());
            }
            if (n.nicsFile() != null) {
                env.put("PATHPROOF_NET_EMU_NICS_FILE", dir.resolve(n.nicsFile()).toString());
            }
            return env;
        }

        /** The busIds by global rank. */
        List<String> busIds() {
            List<String> all = new java.util.ArrayList<>();
            nodes.forEach(n -> all.addAll(n.busIds()));
            return all;
        }

        /**
         * What the job's instrumentation needs to give each local rank its node (PATHPROOF_EMULATE_NODES, read by
         * pathproof_torch's boot): ranks per node and, per node, its host id, topology file and busIds.
         */
        String json(Path dir) {
            ObjectNode o = Json.mapper().createObjectNode();
            o.put("ranksPerNode", ranksPerNode);
            ArrayNode a = o.putArray("nodes");
            for (Node n : nodes) {
                ObjectNode e = a.addObject();
                e.put("hostId", n.hostId());
                e.put("topoFile", dir.resolve(n.topologyXml()).toString());
                if (n.nicsFile() != null) {
                    e.put("nicsFile", dir.resolve(n.nicsFile()).toString());
                }
                ArrayNode b = e.putArray("busIds");
                n.busIds().forEach(b::add);
            }
            return o.toString();
        }
    }

    /**
     * Writes the emulated machine's NCCL topology into {@code dir}: one file for a single machine ({@link #XML}); for a
     * cluster one per node ({@link #NODE_XML}) and the cluster as a topology JSON ({@link #CLUSTER_JSON}, what the
     * in-run prediction reads). {@code realBusId}: the real GPU's, which each node's first GPU reports.
     */
    static Nodes write(Path dir, Runner.Emulate emu, String realBusId) {
        Topology t = emu.topology();
        if (!emu.cluster()) {
            NcclTopoXmlWriter.Emulated xml = NcclTopoXmlWriter.write(t, realBusId);
            RunDirectory.writeText(dir.resolve(XML), xml.xml());
            return new Nodes(
                    List.of(new Node(null, XML, xml.busIds(), null)),
                    xml.busIds().size());
        }
        List<Node> nodes = new java.util.ArrayList<>();
        for (int k = 0; k < t.nodes().size(); k++) {
            NcclTopoXmlWriter.Emulated xml = NcclTopoXmlWriter.writeNode(t, k, realBusId);
            String file = String.format(java.util.Locale.ROOT, NODE_XML, k);
            RunDirectory.writeText(dir.resolve(file), xml.xml());
            String nics = null;
            if (emu.netPlugin() != null) {
                nics = String.format(java.util.Locale.ROOT, NODE_NICS, k);
                RunDirectory.writeText(dir.resolve(nics), nicList(t.nodes().get(k), xml));
            }
            nodes.add(new Node(t.nodes().get(k).hostname(), file, xml.busIds(), nics));
        }
        RunDirectory.writeText(
                dir.resolve(CLUSTER_JSON), Json.mapper().valueToTree(t).toPrettyString() + "\n");
        return new Nodes(nodes, emu.ranksPerNode());
    }

    /**
     * A node's NICs as pathproof's net plugin reads them (native/nccl-net-emu/README.md): one line per NIC with its
     * name, its speed and GPUDirect, and the port the topology file gives it (the plugin warns where the file and the
     * list disagree, since NCCL keeps the file's value, graph/topo.cc:1351-1358@v2.28.9-1); a NIC under a switch also
     * gets a device path ending in its PCI device's busId, as the file places it.
     */
    static String nicList(Topology.Node node, NcclTopoXmlWriter.Emulated xml) {
        StringBuilder b =
                new StringBuilder("# " + node.hostname() + ": the NICs of the emulated node (pathproof run)\n");
        for (int i = 0; i < node.nics().size(); i++) {
            Topology.Nic n = node.nics().get(i);
            b.append("name=").append(n.name());
            String bus = xml.nicBusId(i);
            if (bus != null) {
                b.append(" pci=/sys/devices/pci")
                        .append(bus, 0, 4)
                        .append(":00/")
                        .append(bus);
            }
            b.append(" speed=")
                    .append(n.speedMbps())
                    .append(" gdr=")
                    .append(n.gdr() ? 1 : 0)
                    .append(" port=0\n");
        }
        return b.toString();
    }

    /** The manifest's {@code "emulation"} block (written only for emulated runs). */
    static ObjectNode manifest(Runner.Emulate emu, Library lib, RealGpu real, Nodes nodes, int ranks) {
        ObjectNode n = Json.mapper().createObjectNode();
        n.put("emulated", true);
        n.put("note", NOTE);
        n.put("timings", "not physical");
        n.put("topology", emu.topologyLabel());
        n.put("topologyXml", emu.cluster() ? null : XML);
        n.put("gpus", ranks);
        n.put("topologyGpus", emu.topology().gpuCount());
        n.put("nodes", emu.nodes());
        n.put("ranksPerNode", emu.cluster() ? emu.ranksPerNode() : ranks);
        if (emu.cluster()) {
            n.put(
                    "transport",
                    emu.netPlugin() == null
                            ? SOCKET
                            : "NCCL net plugin " + netPlugin(emu.netPlugin()).getFileName() + " (NCCL_NET_PLUGIN)");
            n.put("clusterTopology", CLUSTER_JSON);
            ArrayNode ns = n.putArray("nodeList");
            for (Node k : nodes.nodes()) {
                ObjectNode e = ns.addObject();
                e.put("hostId", k.hostId());
                e.put("topologyXml", k.topologyXml());
                if (k.nicsFile() != null) {
                    e.put("nicsFile", k.nicsFile());
                }
                ArrayNode nics = e.putArray("nics");
                for (Topology.Node tn : emu.topology().nodes()) {
                    if (tn.hostname().equals(k.hostId())) {
                        for (Topology.Nic c : tn.nics()) {
                            nics.addObject()
                                    .put("name", c.name())
                                    .put("speedMbps", c.speedMbps())
                                    .put("gdr", c.gdr());
                        }
                    }
                }
            }
        } else {
            n.put("transport", "none: one node");
        }
        n.put("realGpu", real.name());
        n.put("realBusId", real.busId());
        n.put("library", lib.label());
        n.put("librarySha256", lib.sha256());
        n.put("ncclVersion", lib.buildInfo().get("nccl_version"));
        n.put("patch", lib.buildInfo().get("patch"));
        n.put("patchSha256", lib.buildInfo().get("patch_sha256"));
        if (emu.compCap() == null) {
            n.putNull("compCapOverride");
        } else {
            n.put("compCapOverride", emu.compCap());
        }
        ArrayNode b = n.putArray("busIds");
        nodes.busIds().subList(0, ranks).forEach(b::add);
        return n;
    }

    /** After the run: the real GPU's name from the job's GPU list when the probe did not give it. */
    static void complete(Path dir, io.pathproof.rundir.RunManifest m) {
        if (!(m.start().emulation() instanceof ObjectNode e)
                || !e.path("realGpu").isNull()) {
            return;
        }
        List<io.pathproof.rundir.JobFacts.Gpu> gpus = m.job().gpus();
        String name = gpus == null || gpus.isEmpty() ? null : gpus.get(0).name();
        if (name != null) {
            e.put("realGpu", name);
            io.pathproof.rundir.RunManifest.write(
                    dir, io.pathproof.rundir.LaunchStart.builder().emulation(e).build());
        }
    }
}
