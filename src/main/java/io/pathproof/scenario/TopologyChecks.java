package io.pathproof.scenario;

import io.pathproof.core.PathproofException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Checks that need the whole topology, beyond what each record checks alone: no GPU with more NVLinks than a GPU of
 * its capability can have ({@link GpuModels#maxNvLinks}), no GPU pair listed twice.
 */
final class TopologyChecks {
    private TopologyChecks() {}

    static void check(Topology t, String source) {
        for (Topology.Node n : t.nodes()) {
            Map<Integer, Integer> links = new HashMap<>();
            Map<Integer, Topology.Gpu> byIndex = new HashMap<>();
            for (Topology.Gpu g : n.gpus()) {
                byIndex.put(g.index(), g);
                links.put(g.index(), g.nvswitchLinks());
            }
            Set<String> pairs = new HashSet<>();
            for (Topology.NvLink l : n.nvlinks()) {
                String key = Math.min(l.gpuA(), l.gpuB()) + "-" + Math.max(l.gpuA(), l.gpuB());
                if (!pairs.add(key)) {
                    throw PathproofException.badInput(
                            source + ": topology." + n.hostname() + ".nvlinks: GPU pair " + key + " listed twice");
                }
                links.merge(l.gpuA(), l.count(), Integer::sum);
                links.merge(l.gpuB(), l.count(), Integer::sum);
            }
            for (Map.Entry<Integer, Integer> e : links.entrySet()) {
                Topology.Gpu g = byIndex.get(e.getKey());
                int max = GpuModels.maxNvLinks(g.computeCapability());
                if (e.getValue() > max) {
                    throw PathproofException.badInput(
                            source + ": topology." + n.hostname() + ".gpus[" + g.index() + "]: "
                                    + e.getValue() + " NVLinks, but a GPU of compute capability "
                                    + g.computeCapability() + " has at most "
                                    + max + " (NCCL graph/xml.cc)");
                }
            }
        }
    }
}
