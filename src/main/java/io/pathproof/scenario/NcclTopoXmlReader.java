package io.pathproof.scenario;

import io.pathproof.core.PathproofException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import javax.xml.XMLConstants;
import javax.xml.parsers.SAXParser;
import javax.xml.parsers.SAXParserFactory;
import org.xml.sax.Attributes;
import org.xml.sax.InputSource;
import org.xml.sax.Locator;
import org.xml.sax.SAXParseException;
import org.xml.sax.helpers.DefaultHandler;

/**
 * Imports NCCL's topology dump ({@code NCCL_TOPO_DUMP_FILE}, {@code <system version="1">}), as written by
 * graph/xml.cc and read back by graph/topo.cc of NCCL v2.28.9-1:
 *
 * <ul>
 *   <li>{@code <cpu numaid arch vendor host_hash>}: a socket; {@code host_hash} tells hosts apart
 *       ({@code ncclGetSystemId}, topo.cc:486);
 *   <li>{@code <pci busid class link_speed link_width>}: with a {@code <gpu>} child a GPU, with a {@code <nic>} child a
 *       NIC, otherwise a PCIe switch/bridge (class table {@code kvDictPciClass}, topo.cc:422); {@code link_speed} gives
 *       the generation ({@code kvDictPciGen}, topo.cc:423: 2.5/5/8/16/32/64 GT/s = gen1..6, unknown text = NCCL's
 *       fallback 8 GT/s), a {@code link_width} of 0 counts as 16 (topo.cc:488);
 *   <li>{@code <gpu dev sm rank gdr>}: the GPU's CUDA index and compute capability ({@code sm});
 *   <li>{@code <nvlink target count tclass>}: {@code tclass} 0x03… = a GPU peer at {@code target}'s bus id,
 *       0x068000 = an NVSwitch, 0x068001 = the CPU ({@code ncclTopoAddNvLinks}, topo.cc:569);
 *   <li>{@code <nic><net name dev speed port gdr/></nic>}: a network port, {@code speed} in Mb/s.
 * </ul>
 *
 * The dump has no GPU model names: a model is taken from the PCI device id when it is a known one, and reported as
 * inferred. The parser refuses DTDs and external entities; nothing in the file is trusted or executed.
 */
final class NcclTopoXmlReader {
    private NcclTopoXmlReader() {}

    /** An XML element with the line it started on. */
    static final class El {
        final String name;
        final Map<String, String> attrs = new LinkedHashMap<>();
        final List<El> subs = new ArrayList<>();
        final int line;
        El parent;

        El(String name, int line) {
            this.name = name;
            this.line = line;
        }

        String attr(String k) {
            return attrs.get(k);
        }
    }

    static El parse(String text, String source) {
        try {
            SAXParserFactory f = SAXParserFactory.newInstance();
            f.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            f.setFeature("http://xml.org/sax/features/external-general-entities", false);
            f.setFeature("http://xml.org/sax/features/external-parameter-entities", false);
            f.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);
            SAXParser p = f.newSAXParser();
            El[] root = new El[1];
            p.parse(new InputSource(new StringReader(text)), new DefaultHandler() {
                Locator loc;
                El cur;

                @Override
                public void setDocumentLocator(Locator locator) {
                    loc = locator;
                }

                @Override
                public void startElement(String uri, String local, String qName, Attributes atts) {
                    El e = new El(qName, loc == null ? 0 : loc.getLineNumber());
                    for (int i = 0; i < atts.getLength(); i++) {
                        e.attrs.put(atts.getQName(i), atts.getValue(i));
                    }
                    if (cur == null) {
                        root[0] = e;
                    } else {
                        e.parent = cur;
                        cur.subs.add(e);
                    }
                    cur = e;
                }

                @Override
                public void endElement(String uri, String local, String qName) {
                    cur = cur.parent;
                }
            });
            return root[0];
        } catch (SAXParseException e) {
            throw PathproofException.badInput(source + ":" + e.getLineNumber() + ":" + e.getColumnNumber()
                    + ": malformed XML: " + e.getMessage());
        } catch (Exception e) {
            throw PathproofException.badInput(source + ": cannot read XML: " + e.getMessage());
        }
    }

    static Topology read(String text, String source, String name) {
        El root = parse(text, source);
        if (root == null) {
            throw PathproofException.badInput(source + ": empty XML");
        }
        if (root.name.equals("graphs")) {
            throw PathproofException.badInput(
                    source + ":" + root.line
                            + ": this is NCCL's graph dump (NCCL_GRAPH_DUMP_FILE), not its topology dump (NCCL_TOPO_DUMP_FILE)");
        }
        if (!root.name.equals("system")) {
            throw PathproofException.badInput(source + ":" + root.line
                    + ": expected <system> (an NCCL topology dump), found <" + root.name + ">");
        }
        List<String> inferred = new ArrayList<>();
        // Hosts in order of first appearance, keyed by host_hash.
        Map<String, HostBuilder> hosts = new LinkedHashMap<>();
        for (El cpu : root.subs) {
            if (!cpu.name.equals("cpu")) {
                continue;
            }
            String hash = cpu.attrs.getOrDefault("host_hash", "");
            HostBuilder h = hosts.computeIfAbsent(hash, k -> new HostBuilder("host" + hosts.size(), source, inferred));
            h.addCpu(cpu, inferred);
        }
        if (hosts.isEmpty()) {
            throw PathproofException.badInput(source + ":" + root.line + ": <system> has no <cpu>");
        }
        List<Topology.Node> nodes = new ArrayList<>();
        for (HostBuilder h : hosts.values()) {
            nodes.add(h.build(inferred));
        }
        return JsonInput.build(source, () -> new Topology(name, nodes, inferred));
    }

    /** Everything of one host, collected while walking its CPUs. */
    private static final class HostBuilder {
        final String hostname;
        final String source;
        final List<Topology.Cpu> cpus = new ArrayList<>();
        final List<Topology.PciSwitch> switches = new ArrayList<>();
        final Map<Integer, Topology.Gpu> gpus = new TreeMap<>();
        final Map<String, Integer> gpuByBus = new LinkedHashMap<>();
        final List<El> nvlinkEls = new ArrayList<>();
        final Map<El, Integer> nvlinkOwner = new LinkedHashMap<>();
        final List<Topology.Nic> nics = new ArrayList<>();
        final Map<Integer, Integer> nvswitch = new TreeMap<>();
        /** {@code <pci>} of a GPU's or a NIC's class with nothing below: a partial NCCL_TOPO_FILE (see addPci). */
        final List<El> gpusUnfilled = new ArrayList<>();

        final List<El> nicsUnfilled = new ArrayList<>();
        /** GPUs of sm 60+ whose {@code <pci>} NCCL never read from sysfs (no {@code device}): see partialFileNotes. */
        final List<Integer> gpusNeverFilled = new ArrayList<>();

        final List<String> notes;

        HostBuilder(String hostname, String source, List<String> notes) {
            this.hostname = hostname;
            this.source = source;
            this.notes = notes;
        }

        String at(El e) {
            return source + ":" + e.line;
        }

        /**
         * graph/topo.cc@v2.28.9-1:531-538 (ncclTopoAddCpu): an Intel socket's generation, which sets the inter-socket
         * bandwidth (ERP 40, SRP 22, SKL 10, else BDW 6 GB/s), is read from the dump's familyid and modelid. It travels
         * in the vendor text ("intel-erp" …) that the NCCL model's inter-CPU bandwidth reads.
         */
        String intelGeneration(El cpu, String vendor) {
            if (!"intel".equals(vendor)) {
                return vendor;
            }
            int family = intAttr(cpu, "familyid", -1);
            int model = intAttr(cpu, "modelid", -1);
            return family != 6
                    ? vendor
                    : model >= 0xCF ? "intel-erp" : model >= 0x8F ? "intel-srp" : model >= 0x55 ? "intel-skl" : vendor;
        }

        void addCpu(El cpu, List<String> inferred) {
            int numa = intAttr(cpu, "numaid", -1);
            String id = numa < 0 ? "cpu" : "cpu" + numa;
            String arch = cpu.attrs.getOrDefault("arch", "x86_64");
            String vendorAttr = cpu.attr("vendor");
            String vendorBase = "GenuineIntel".equals(vendorAttr)
                    ? "intel"
                    : "AuthenticAMD".equals(vendorAttr)
                            ? "amd"
                            : arch.startsWith("arm") || arch.equals("aarch64")
                                    ? "arm"
                                    : arch.startsWith("ppc")
                                            ? "power"
                                            : vendorAttr == null
                                                    ? null
                                                    : vendorAttr.trim().toLowerCase(Locale.ROOT);
            String vendor = intelGeneration(cpu, vendorBase);
            boolean again = false;
            for (Topology.Cpu c : cpus) {
                again |= c.id().equals(id);
            }
            if (again) {
                // NCCL writes one socket several times: each local rank's XML is fused into rank 0's
                // (topo.cc@v2.28.9-1:
                // 1492-1529, ncclTopoFuseXml), and a node is only matched when every attribute agrees
                // (graph/xml.h:195-216),
                // so a rank whose <cpu> lacks the "affinity" rank 0 read from sysfs (xml.cc:476-490) adds its own copy,
                // with
                // what it kept below it (the virtual NIC NCCL attaches to the first CPU, xml.cc:936-941). Read it as
                // the
                // same socket: its children join the first copy's.
                inferred.add(
                        hostname + " " + id + ": <cpu numaid=\"" + numa + "\"> listed again (" + at(cpu)
                                + "; NCCL's intra-node XML fusion keeps a rank's copy whose attributes differ), read as the same socket");
            } else {
                cpus.add(JsonInput.build(at(cpu), () -> new Topology.Cpu(id, Math.max(numa, 0), arch, vendor)));
                if (numa < 0) {
                    inferred.add(hostname + " " + id + ": NUMA id unknown in the dump (numaid=-1), taken as 0");
                }
            }
            for (El sub : cpu.subs) {
                if (sub.name.equals("pci")) {
                    addPci(sub, id, inferred);
                } else if (sub.name.equals("nic")) {
                    addNic(sub, id, null, null);
                }
            }
        }

        void addPci(El pci, String parent, List<String> inferred) {
            String bus = pci.attr("busid");
            if (bus == null) {
                throw PathproofException.badInput(at(pci) + ": <pci> without busid");
            }
            bus = bus.toLowerCase(Locale.ROOT);
            int gen = pciGen(pci.attr("link_speed"), pci, inferred);
            int width = intAttr(pci, "link_width", 0);
            if (width == 0) {
                width = 16; // topo.cc ncclTopoAddPci: "if (width == 0) width = 16;"
            }
            El gpu = child(pci, "gpu");
            El nic = child(pci, "nic");
            if (gpu != null) {
                addGpu(pci, gpu, bus, parent, gen, width, inferred);
                return;
            }
            if (nic != null) {
                addNic(nic, parent, gen, width);
                return;
            }
            // A GPU's or a NIC's class (kvDictPciClass "0x03", "0x02", topo.cc:422@v2.28.9-1) without its <gpu> or
            // <nic>: NCCL builds no node of it and nothing below it (ncclTopoAddPci, topo.cc:439-463). Such <pci> are
            // what cloud images ship as NCCL_TOPO_FILE, for NCCL to complete from the driver (ncclTopoFillGpu,
            // xml.cc:882) and its network plugin (ncclTopoFillNet, xml.cc:910) on the machine itself.
            String cls = pci.attrs.getOrDefault("class", "").toLowerCase(Locale.ROOT);
            if (cls.startsWith("0x03")) {
                gpusUnfilled.add(pci);
                return;
            }
            if (cls.startsWith("0x02")) {
                nicsUnfilled.add(pci);
                return;
            }
            addSwitch(pci, bus, parent, gen, width, inferred);
        }

        /** A {@code <pci>} holding a {@code <gpu>}: the GPU, its PCI link and the NVLinks listed below it. */
        private void addGpu(El pci, El gpu, String bus, String parent, int gen, int width, List<String> inferred) {
            int dev = intAttr(gpu, "dev", Integer.MIN_VALUE);
            if (dev == Integer.MIN_VALUE) {
                throw PathproofException.badInput(at(gpu) + ": <gpu> without dev");
            }
            int sm = intAttr(gpu, "sm", Integer.MIN_VALUE);
            if (sm == Integer.MIN_VALUE) {
                throw PathproofException.badInput(at(gpu) + ": <gpu dev=\"" + dev + "\"> without sm");
            }
            String model = gpuModel(pci, dev, sm, inferred);
            if (gpus.containsKey(dev)) {
                if (bus.equals(gpus.get(dev).busId())) {
                    return; // the same GPU in a socket's second copy (see addCpu)
                }
                throw PathproofException.badInput(at(gpu) + ": two GPUs with dev " + dev);
            }
            gpus.put(dev, JsonInput.build(at(gpu), () -> new Topology.Gpu(dev, model, sm, bus, parent, gen, width, 0)));
            gpuByBus.put(bus, dev);
            if (sm >= 60 && pci.attr("device") == null) {
                gpusNeverFilled.add(dev);
            }
            for (El l : gpu.subs) {
                if (l.name.equals("nvlink")) {
                    nvlinkEls.add(l);
                    nvlinkOwner.put(l, dev);
                }
            }
        }

        /** The GPU's model from its PCI device id, or a name from its sm where the id is unknown. */
        private String gpuModel(El pci, int dev, int sm, List<String> inferred) {
            String model = null;
            String device = pci.attr("device");
            if (device != null) {
                try {
                    model = GpuModels.modelOfDevice(Integer.decode(device));
                } catch (NumberFormatException e) {
                    throw PathproofException.badInput(at(pci) + ": device '" + device + "' is not a number");
                }
            }
            if (model == null) {
                model = "NVIDIA GPU sm" + sm;
                inferred.add(hostname + " GPU" + dev
                        + (device == null
                                ? ": model unknown (no PCI device id), named by its sm"
                                : ": model unknown (PCI device " + device + "), named by its sm"));
            } else {
                inferred.add(hostname + " GPU" + dev + ": model '" + model + "' from PCI device id " + device);
            }
            return model;
        }

        /**
         * A bridge or switch (or any other PCI device NCCL keeps as a PCI node): only worth a node if something hangs
         * below it.
         */
        private void addSwitch(El pci, String bus, String parent, int gen, int width, List<String> inferred) {
            boolean hasChildren = false;
            for (El s : pci.subs) {
                if (s.name.equals("pci") || s.name.equals("nic")) {
                    hasChildren = true;
                }
            }
            if (!hasChildren) {
                return;
            }
            String id = bus;
            boolean known = false;
            for (Topology.PciSwitch sw : switches) {
                known |= sw.id().equals(id);
            }
            if (!known) { // a switch is listed again below a socket's second copy (see addCpu)
                switches.add(JsonInput.build(at(pci), () -> new Topology.PciSwitch(id, parent, gen, width)));
            }
            for (El s : pci.subs) {
                if (s.name.equals("pci")) {
                    addPci(s, id, inferred);
                } else if (s.name.equals("nic")) {
                    addNic(s, id, null, null);
                }
            }
        }

        /** A {@code <nic>}'s ports; {@code gen}/{@code width}: the link of the {@code <pci>} around it, null if bare. */
        void addNic(El nic, String parent, Integer gen, Integer width) {
            for (El net : nic.subs) {
                if (!net.name.equals("net")) {
                    continue;
                }
                String name = net.attr("name");
                if (name == null) {
                    throw PathproofException.badInput(at(net) + ": <net> without name");
                }
                boolean seen = false;
                for (Topology.Nic n : nics) {
                    seen |= n.name().equals(name);
                }
                if (seen) {
                    // The same NIC: NCCL fills one <net> per name (ncclTopoFillNet, graph/xml.cc@v2.28.9-1:910-913); a
                    // second
                    // one comes with a socket's second copy (see addCpu). NCCL itself, building its system from the
                    // fused XML,
                    // makes a second CPU node and NET node with the same ids (topo.cc:518, :362); pathproof keeps one
                    // of each.
                    notes.add(hostname + " NIC " + name + ": listed again (" + at(net) + "), read as the same NIC");
                    continue;
                }
                long speed = intAttr(net, "speed", 0);
                if (speed <= 0) {
                    throw PathproofException.badInput(at(net) + ": <net name=\"" + name + "\"> has no speed (Mb/s)");
                }
                boolean gdr = intAttr(net, "gdr", 0) == 1;
                nics.add(JsonInput.build(at(net), () -> new Topology.Nic(name, parent, speed, gdr, "net", gen, width)));
            }
        }

        Topology.Node build(List<String> inferred) {
            partialFileNotes(inferred);
            // NVLinks: one entry per GPU pair, NVSwitch links summed per GPU.
            Map<String, int[]> pairs = new TreeMap<>();
            Map<Integer, Topology.Gpu> out = new TreeMap<>(gpus);
            for (El l : nvlinkEls) {
                int owner = nvlinkOwner.get(l);
                int count = intAttr(l, "count", Integer.MIN_VALUE);
                if (count == Integer.MIN_VALUE || count <= 0) {
                    throw PathproofException.badInput(at(l) + ": <nvlink> without a positive count");
                }
                String tclass = l.attr("tclass");
                if (tclass == null) {
                    throw PathproofException.badInput(at(l) + ": <nvlink> without tclass");
                }
                tclass = tclass.toLowerCase(Locale.ROOT);
                if (tclass.startsWith("0x068000")) {
                    nvswitch.merge(owner, count, Integer::sum);
                } else if (tclass.startsWith("0x068001")) {
                    inferred.add(
                            hostname + " GPU" + owner + ": " + count + " NVLink(s) to the CPU (C2C-like) not modelled");
                } else if (tclass.startsWith("0x03")) {
                    String target = l.attr("target");
                    Integer peer = target == null ? null : gpuByBus.get(target.toLowerCase(Locale.ROOT));
                    if (peer == null) {
                        throw PathproofException.badInput(
                                at(l) + ": <nvlink> to GPU " + target + " that is not in the dump");
                    }
                    int a = Math.min(owner, peer);
                    int b = Math.max(owner, peer);
                    int[] seen = pairs.computeIfAbsent(String.format("%06d-%06d", a, b), k -> new int[] {a, b, 0, 0});
                    // Both ends list the link; keep one count per direction and compare.
                    if (owner == a) {
                        seen[2] = count;
                    } else {
                        seen[3] = count;
                    }
                } else {
                    inferred.add(hostname + " GPU" + owner + ": NVLink to a device of class " + tclass + " ignored");
                }
            }
            List<Topology.NvLink> links = new ArrayList<>();
            for (int[] p : pairs.values()) {
                int c = p[2] == 0 ? p[3] : p[3] == 0 ? p[2] : Math.min(p[2], p[3]);
                if (p[2] != 0 && p[3] != 0 && p[2] != p[3]) {
                    inferred.add(hostname + " GPU" + p[0] + "-GPU" + p[1] + ": the two ends list " + p[2] + " and "
                            + p[3] + " NVLinks; " + c + " kept");
                }
                links.add(new Topology.NvLink(p[0], p[1], c));
            }
            for (Map.Entry<Integer, Integer> e : nvswitch.entrySet()) {
                Topology.Gpu g = out.get(e.getKey());
                out.put(
                        e.getKey(),
                        new Topology.Gpu(
                                g.index(),
                                g.model(),
                                g.computeCapability(),
                                g.busId(),
                                g.pciParent(),
                                g.pciGen(),
                                g.pciWidth(),
                                e.getValue()));
            }
            return JsonInput.build(
                    source,
                    () -> new Topology.Node(hostname, cpus, switches, new ArrayList<>(out.values()), links, nics));
        }

        /**
         * What a partial NCCL_TOPO_FILE leaves for NCCL to complete on the machine: refused where no GPU is left to
         * predict on, said where a prediction can still be made from what the file holds.
         */
        private void partialFileNotes(List<String> inferred) {
            if (gpus.isEmpty() && !gpusUnfilled.isEmpty()) {
                throw PathproofException.badInput(at(gpusUnfilled.get(0)) + ": " + gpusUnfilled.size()
                        + " GPU <pci> (" + lines(gpusUnfilled) + ") and no <gpu> in them: a partial"
                        + " NCCL_TOPO_FILE, which NCCL completes from the driver on the machine (ncclTopoFillGpu,"
                        + " graph/xml.cc:882@v2.28.9-1). Give the topology NCCL dumps there: run once with"
                        + " NCCL_TOPO_FILE=<this file> NCCL_TOPO_DUMP_FILE=topo.xml NCCL_DEBUG=INFO");
            }
            if (gpus.isEmpty()) {
                throw PathproofException.badInput(
                        source + ": " + hostname + " has no <gpu>: nothing for NCCL to run on");
            }
            if (!gpusUnfilled.isEmpty()) {
                inferred.add(hostname + ": " + gpusUnfilled.size() + " GPU <pci> without <gpu> ("
                        + lines(gpusUnfilled) + ") left out, as NCCL leaves them (topo.cc:439-448@v2.28.9-1): GPUs no"
                        + " rank of the job used");
            }
            if (!nicsUnfilled.isEmpty()) {
                inferred.add(hostname + ": " + nicsUnfilled.size() + " NIC <pci> without <nic> ("
                        + lines(nicsUnfilled) + ") left out: NCCL adds a port there only when its network plugin"
                        + " reports one at that PCI path (ncclTopoFillNet, graph/xml.cc:910@v2.28.9-1)");
            }
            if (nvlinkEls.isEmpty()) {
                for (int dev : gpusNeverFilled) {
                    inferred.add(hostname + " GPU" + dev + ": no <nvlink> and no PCI device id (NCCL never read this"
                            + " GPU): predicted without NVLink. Given as NCCL_TOPO_FILE, NCCL adds the NVLinks NVML"
                            + " reports to such a GPU (graph/xml.cc:766-815@v2.28.9-1); a dump (NCCL_TOPO_DUMP_FILE)"
                            + " of the machine holds them");
                }
            }
        }

        private static String lines(List<El> els) {
            StringBuilder b = new StringBuilder(els.size() == 1 ? "line " : "lines ");
            for (int i = 0; i < els.size() && i < 8; i++) {
                b.append(i == 0 ? "" : ", ").append(els.get(i).line);
            }
            return els.size() > 8 ? b + ", …" : b.toString();
        }

        int pciGen(String linkSpeed, El pci, List<String> inferred) {
            if (linkSpeed == null || linkSpeed.isBlank()) {
                inferred.add(hostname + " PCI " + pci.attr("busid")
                        + ": link speed unknown, NCCL's fallback 8 GT/s (gen3)" + " taken");
                return 3;
            }
            String s = linkSpeed.trim();
            // kvDictPciGen (topo.cc:423@v2.28.9-1): "2.5 GT/s", "5 GT/s" … and "2.5 GT/s PCIe", "5.0 GT/s PCIe" …
            String[][] table = {
                {"2.5", "1"},
                {"5", "2"},
                {"5.0", "2"},
                {"8", "3"},
                {"8.0", "3"},
                {"16", "4"},
                {"16.0", "4"},
                {"32", "5"},
                {"32.0", "5"},
                {"64.0", "6"}
            };
            for (String[] t : table) {
                if (s.equals(t[0] + " GT/s") || s.equals(t[0] + " GT/s PCIe")) {
                    return Integer.parseInt(t[1]);
                }
            }
            inferred.add(hostname + " PCI " + pci.attr("busid") + ": link speed '" + s + "' not in NCCL's table, its"
                    + " fallback 8 GT/s (gen3) taken");
            return 3;
        }

        int intAttr(El e, String k, int dflt) {
            String v = e.attr(k);
            if (v == null || v.isBlank()) {
                return dflt;
            }
            try {
                return Integer.decode(v.trim());
            } catch (NumberFormatException ex) {
                throw PathproofException.badInput(at(e) + ": <" + e.name + " " + k + "=\"" + v + "\">: not a number");
            }
        }

        static El child(El e, String name) {
            for (El s : e.subs) {
                if (s.name.equals(name)) {
                    return s;
                }
            }
            return null;
        }
    }
}
