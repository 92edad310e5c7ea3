package io.pathproof.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/**
 * The flags that shape an emulated cluster — the ranks on each emulated node and the net plugin that joins the
 * nodes — shared by {@code run} and {@code prove} (a picocli mixin, as jbang shares its flags); {@link #cluster()} is
 * what they say, as an {@link EmulatedCluster}. {@code --nodes}
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

    /** The flags as given. */
    EmulatedCluster cluster() {
        return new EmulatedCluster(perNode, netPlugin);
    }
}
