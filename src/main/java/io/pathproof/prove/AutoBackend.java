package io.pathproof.prove;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import io.pathproof.run.Runner;

/**
 * {@code prove --backend auto}: NCCL on a machine with two or more GPUs; on one GPU with the emulator
 * library, an emulated H200 x 4; otherwise gloo on the CPU. A pure function of what was probed (the GPUs torch sees,
 * whether torch has NCCL, the emulator library found and valid) and of the scenario asked for, so every branch is
 * tested with real inputs and no GPU; the probing itself is run's ({@link Runner#probe}, {@link Runner#findEmulator}).
 */
final class AutoBackend {
    /** The scenario of each branch when none is given: the CPU default, and the machine pathproof's GPU samples are of. */
    static final String CPU_SCENARIO = "cpu-x4-small";

    static final String GPU_SCENARIO = "h200-x4";
    /** The ranks of GPU_SCENARIO: at most one per GPU here (NCCL refuses two ranks on one GPU). */
    static final int GPU_SCENARIO_RANKS = 4;

    private AutoBackend() {}

    /**
     * What is asked: whether a scenario was named, whether it is an NCCL one (its prediction is for NCCL), the ranks to
     * run (--nproc, else the scenario's), and whether its machine is one node (only one node can be emulated).
     */
    record Want(boolean scenarioGiven, boolean ncclScenario, int ranks, boolean singleNode) {}

    static Prove.BackendChoice decide(Runner.Machine m, Runner.EmulatorLibrary lib, Want w) {
        String gpus = m.gpus() + (m.gpus() == 1 ? " GPU" : " GPUs");
        boolean libOk = lib != null && lib.usable();
        String libSaid = lib == null
                ? "emulator library not looked for"
                : libOk
                        ? "emulator library " + lib.how()
                        : lib.file() == null && "not found".equals(lib.refusal())
                                ? "no emulator library"
                                : "emulator library " + lib.how() + " refused (" + lib.refusal() + ")";
        if (w.scenarioGiven() && !w.ncclScenario()) {
            // The scenario's prediction is for gloo: a run of another backend could not pass the rows that depend on
            // it.
            return choice(
                    "gloo",
                    Runner.Backend.GLOO,
                    false,
                    null,
                    null,
                    null,
                    "the scenario is a gloo one: gloo on the CPU"
                            + (m.gpus() > 0 ? " (" + gpus + " here, unused)" : ""));
        }
        if (m.gpus() >= 2 && m.nccl()) {
            if (!w.scenarioGiven()) {
                int ranks = Math.min(GPU_SCENARIO_RANKS, m.gpus());
                return choice(
                        "nccl",
                        Runner.Backend.NCCL,
                        false,
                        null,
                        GPU_SCENARIO,
                        ranks,
                        gpus + ": NCCL on " + ranks + " of them (scenario " + GPU_SCENARIO + ")");
            }
            if (m.gpus() >= w.ranks()) {
                return choice(
                        "nccl",
                        Runner.Backend.NCCL,
                        false,
                        null,
                        null,
                        null,
                        gpus + ": NCCL on " + w.ranks() + " of them");
            }
        }
        if (m.gpus() >= 1 && m.nccl() && libOk && (!w.scenarioGiven() || w.singleNode())) {
            String what = w.scenarioGiven() ? "the scenario's machine" : "an H200 x 4 (scenario " + GPU_SCENARIO + ")";
            return choice(
                    "emulated",
                    Runner.Backend.NCCL,
                    true,
                    lib.file(),
                    w.scenarioGiven() ? null : GPU_SCENARIO,
                    w.scenarioGiven() ? null : GPU_SCENARIO_RANKS,
                    gpus + ", " + libSaid + ": " + what
                            + " emulated on one GPU (NCCL decisions real, timings not physical)");
        }
        String why = m.gpus() >= 1 && !m.nccl()
                ? gpus + ", but torch " + m.torch() + " has no NCCL"
                : m.gpus() >= 2
                        ? gpus + ", fewer than the scenario's " + w.ranks() + " ranks, " + libSaid
                        : m.gpus() == 1
                                ? gpus + ", " + libSaid
                                : "no GPU (torch " + m.torch() + " sees no CUDA device)";
        if (w.scenarioGiven()) {
            throw new PathproofException(
                    ExitCode.NO_GPU,
                    "prove --backend auto: the scenario is an NCCL one, but " + why
                            + "; run it where it has one GPU per rank, or emulate it on one GPU with --emulate --nccl-lib DIR");
        }
        return choice("gloo", Runner.Backend.GLOO, false, null, CPU_SCENARIO, null, why + ": gloo on the CPU");
    }

    private static Prove.BackendChoice choice(
            String branch,
            Runner.Backend backend,
            boolean emulate,
            java.nio.file.Path lib,
            String scenario,
            Integer ranks,
            String reason) {
        return new Prove.BackendChoice("auto", branch, backend, emulate, lib, scenario, ranks, reason);
    }
}
