package io.pathproof.cli;

import io.pathproof.core.PathproofException;
import io.pathproof.run.Runner;
import io.pathproof.scenario.Scenarios;
import io.pathproof.scenario.Topology;
import java.nio.file.Path;

/**
 * What {@link EmulatedClusterOptions}' flags say (each null where not given): the ranks on each emulated node and the
 * net plugin that joins the nodes; and the one place that turns {@code --emulate}'s topology into the machine NCCL
 * will see and refuses what does not fit it.
 */
record EmulatedCluster(Integer perNode, Path netPlugin) {
    /** Refuses these flags, or {@code othersGiven} (the verb's own emulation flags), when nothing is emulated. */
    void requireEmulation(boolean emulated, boolean othersGiven, String message) {
        if (!emulated && (othersGiven || perNode != null || netPlugin != null)) {
            throw PathproofException.usage(message);
        }
    }

    /**
     * What {@code --emulate} emulates: the machine as given, or, with {@code --nodes N} (or a topology of several
     * nodes), a cluster of N such nodes as NCCL will see it ({@link Scenarios#emulatedCluster}): the first
     * {@code --nproc-per-node} GPUs of each node, and each node's NIC as the Socket transport over lo presents it (at
     * {@code nicSpeed} where the topology lists no NIC) unless a net plugin carries the topology's own NICs.
     */
    Runner.Emulate machine(String label, Topology given, Integer nodes, Long nicSpeed, Path ncclLib, Integer compCap) {
        Topology machine = nodes == null ? given : Scenarios.cluster(given, nodes);
        if (machine.nodes().size() == 1) {
            if (perNode != null || nicSpeed != null || netPlugin != null) {
                throw PathproofException.usage(
                        "--nproc-per-node, --nic-speed and --net-plugin go with an emulated cluster"
                                + " (--emulate TOPOLOGY --nodes N, N >= 2)");
            }
            return new Runner.Emulate(label, machine, ncclLib, compCap);
        }
        int per = perNode != null ? perNode : machine.nodes().get(0).gpus().size();
        Topology seen = Scenarios.emulatedCluster(machine, per, nicSpeed, netPlugin != null);
        return new Runner.Emulate(label, seen, ncclLib, compCap, per, netPlugin);
    }
}
