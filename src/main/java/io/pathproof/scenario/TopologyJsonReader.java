package io.pathproof.scenario;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a topology JSON: the {@link Topology} record's own shape ({@code name}, {@code nodes[]} with {@code hostname,
 * cpus, pciSwitches, gpus, nvlinks, nics}). A GPU may leave out {@code computeCapability} or {@code pciGen} when its
 * {@code model} names a known GPU ({@link GpuModels}); {@code pciWidth} defaults to 16 and {@code nvswitchLinks} to
 * 0. Every default taken is listed in {@link Topology#inferred()}.
 */
final class TopologyJsonReader {
    private TopologyJsonReader() {}

    static Topology read(JsonInput.Obj o, String defaultName) {
        String source = o.source();
        String name = o.optStr("name", defaultName);
        List<String> inferred = new ArrayList<>();
        List<Topology.Node> nodes = new ArrayList<>();
        for (JsonInput.Obj n : o.objects("nodes", true)) {
            nodes.add(node(n, inferred));
        }
        return JsonInput.build(source, () -> new Topology(name, nodes, inferred));
    }

    private static Topology.Node node(JsonInput.Obj n, List<String> inferred) {
        String source = n.source();
        String host = n.optStr("hostname", "node");
        List<Topology.Cpu> cpus = new ArrayList<>();
        for (JsonInput.Obj c : n.objects("cpus", false)) {
            String id = c.str("id");
            int numa = c.has("numaId") ? c.integer("numaId") : 0;
            String arch = c.optStr("arch", "x86_64");
            String vendor = c.optStr("vendor", null);
            cpus.add(JsonInput.build(source, () -> new Topology.Cpu(id, numa, arch, vendor)));
        }
        List<Topology.PciSwitch> sws = new ArrayList<>();
        for (JsonInput.Obj p : n.objects("pciSwitches", false)) {
            String id = p.str("id");
            String parent = p.optStr("parent", null);
            int gen = p.integer("gen");
            int width = p.has("width") ? p.integer("width") : 16;
            if (gen < 1 || gen > 7) {
                throw JsonInput.bad(source, p.where("gen"), "PCIe generation " + gen + " does not exist");
            }
            sws.add(JsonInput.build(source, () -> new Topology.PciSwitch(id, parent, gen, width)));
        }
        List<Topology.Gpu> gpus = new ArrayList<>();
        for (JsonInput.Obj g : n.objects("gpus", false)) {
            gpus.add(gpu(g, host, inferred));
        }
        List<Topology.NvLink> links = new ArrayList<>();
        for (JsonInput.Obj l : n.objects("nvlinks", false)) {
            int a = l.integer("gpuA");
            int b = l.integer("gpuB");
            int count = l.integer("count");
            links.add(JsonInput.build(source, () -> new Topology.NvLink(a, b, count)));
        }
        List<Topology.Nic> nics = new ArrayList<>();
        for (JsonInput.Obj c : n.objects("nics", false)) {
            String nm = c.str("name");
            String parent = c.optStr("pciParent", null);
            long speed = c.lng("speedMbps");
            boolean gdr = c.bool("gdr", false);
            String kind = c.optStr("kind", null);
            Integer nicGen = c.optInt("pciGen");
            Integer nicWidth = c.optInt("pciWidth");
            nics.add(JsonInput.build(source, () -> new Topology.Nic(nm, parent, speed, gdr, kind, nicGen, nicWidth)));
        }
        List<List<Integer>> denied = null;
        if (n.has("p2pDenied")) {
            denied = new ArrayList<>();
            List<JsonNode> pairs = n.array("p2pDenied", true);
            for (int i = 0; i < pairs.size(); i++) {
                JsonNode pr = pairs.get(i);
                if (!pr.isArray()
                        || pr.size() != 2
                        || !pr.get(0).canConvertToInt()
                        || !pr.get(1).canConvertToInt()) {
                    throw JsonInput.bad(
                            source,
                            n.where("p2pDenied") + "[" + i + "]",
                            "expected a pair of GPU indices such as [0, 1], got " + pr);
                }
                denied.add(List.of(pr.get(0).asInt(), pr.get(1).asInt()));
            }
        }
        List<List<Integer>> p2pDenied = denied;
        return JsonInput.build(source, () -> new Topology.Node(host, cpus, sws, gpus, links, nics, p2pDenied));
    }

    private static Topology.Gpu gpu(JsonInput.Obj g, String host, List<String> inferred) {
        int index = g.integer("index");
        String model = g.optStr("model", null);
        GpuModels.Known known = GpuModels.lookup(model);
        Integer cc = g.optInt("computeCapability");
        if (cc == null) {
            if (known == null) {
                throw JsonInput.bad(
                        g.source(),
                        g.where("computeCapability"),
                        "missing, and model '" + model
                                + "' is not one whose capability is known (give computeCapability)");
            }
            cc = known.computeCapability();
            inferred.add(host + " GPU" + index + ": compute capability " + cc + " from model name " + known.family());
        }
        Integer gen = g.optInt("pciGen");
        if (gen == null) {
            if (known != null && known.pciGen() > 0) {
                gen = known.pciGen();
                inferred.add(host + " GPU" + index + ": PCIe gen" + gen + " from model name " + known.family());
            } else {
                throw JsonInput.bad(g.source(), g.where("pciGen"), "missing, and the model does not tell it");
            }
        }
        int width = g.has("pciWidth") ? g.integer("pciWidth") : 16;
        int nvs = g.has("nvswitchLinks") ? g.integer("nvswitchLinks") : 0;
        String bus = g.optStr("busId", null);
        String parent = g.optStr("pciParent", null);
        int ccf = cc;
        int genf = gen;
        String m = model == null ? "unknown" : model;
        return JsonInput.build(g.source(), () -> new Topology.Gpu(index, m, ccf, bus, parent, genf, width, nvs));
    }
}
