package io.pathproof.cli;

import io.pathproof.core.PathproofException;
import io.pathproof.run.Runner;
import io.pathproof.scenario.Scenarios;
import io.pathproof.scenario.Topology;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The flags that shape an emulated cluster — the ranks on each emulated node and the net plugin that joins the
 * nodes — shared by {@code run} and {@code prove} (a picocli mixin, as jbang shares its flags), and the one place
 * that turns {@code --emulate}'s topology into the machine NCCL will see and refuses what does not fit it. {@code --nodes}
 * and {@code --nic-speed} are inputs here but are declared with each verb's machine ({@code prove} and
 * {@code predict} shape their scenario with them too). Each verb words the help in its resource bundle
 * ({@code run.properties}, {@code prove.properties}).
 */
public final class EmulatedClusterOptions {
    @Option(
            names = "--nproc-per-node",
            paramLabel = "P",
            descriptionKey = "nproc-per-node",
            description = "with --emulate on a cluster: ranks on each emulated node (default: its GPUs)")
    Integer perNode;

    @Option(
            names = "--net-plugin",
            paramLabel = "DIR|FILE",
            descriptionKey = "net-plugin",
            description = "with --emulate on a cluster: an NCCL net plugin that exposes the topology's own NICs")
    Path netPlugin;

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
