package io.pathproof.run;

import java.util.List;

/**
 * What a user's launch command says about its ranks, read from torchrun's own flags and never changed: the command
 * runs as given.
 */
final class TorchrunFlags {
    private TorchrunFlags() {}

    /**
     * The ranks a torchrun command starts on its node ({@code --nproc_per_node N}, {@code --nproc-per-node=N}), or
     * null when the command does not say it as a number (another launcher, "gpu", "auto").
     */
    static Integer nprocPerNode(List<String> command) {
        String v = value(command, "--nproc_per_node", "--nproc-per-node");
        if (v == null) {
            return null;
        }
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * The node a launcher stands for: torchrun's own {@code --node_rank} / {@code --node-rank} in the command, else 0.
     * srun starts every node's ranks from one launcher, so it is node 0 whatever the ranks' SLURM_NODEID.
     */
    static int nodeRank(List<String> command) {
        String v = value(command, "--node_rank", "--node-rank");
        if (v == null) {
            return 0;
        }
        try {
            return Math.max(0, Integer.parseInt(v.trim()));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** The value of the first of the flag's two spellings in the command ({@code --f V} or {@code --f=V}), or null. */
    private static String value(List<String> command, String underscored, String dashed) {
        for (int i = 0; i < command.size(); i++) {
            String a = command.get(i);
            if ((a.equals(underscored) || a.equals(dashed)) && i + 1 < command.size()) {
                return command.get(i + 1);
            }
            if (a.startsWith(underscored + "=") || a.startsWith(dashed + "=")) {
                return a.substring(a.indexOf('=') + 1);
            }
        }
        return null;
    }
}
