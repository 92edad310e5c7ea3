package io.pathproof.run;

import io.pathproof.core.PathproofException;

/**
 * The machine a user's job is proven for: {@code topology}, a preset or file the in-run prediction is made for (null:
 * the job finds its machine); {@code nodes}, {@code --nodes N}, that topology being one node of N identical ones
 * (null: as given); {@code emulate}, every rank on this machine's one GPU with NCCL believing it runs on the emulated
 * machine (null: the real one).
 */
public record TargetMachine(String topology, Integer nodes, Runner.Emulate emulate) {
    public TargetMachine {
        if (nodes != null && (nodes < 1 || topology == null)) {
            throw PathproofException.usage(
                    "--nodes N: goes with --topology NODE (the machine is N such nodes), N >= 1");
        }
    }

    /** The machine the job finds itself, not emulated. */
    static final TargetMachine FOUND = new TargetMachine(null, null, null);
}
