package io.pathproof.prove;

import io.pathproof.core.PathproofException;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.run.Runner;
import io.pathproof.scenario.Scenario;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;

/**
 * The public entry of the prove room: the seed's whole chapter on one scenario. Every step goes through the public
 * entry of the room that owns it ({@link Proving}, one method per step); what each step produced is written to the
 * output directory as it happens, so a failed proof leaves every file behind, and proof.json
 * ({@link io.pathproof.proofdir.Proof}) at the end.
 */
public final class Prove {
    private Prove() {}

    /**
     * What prove runs: pathproof's stand-in job for a scenario ({@link StandIn}) or the user's own launch command
     * ({@link OwnCommand}). {@code label} names it in the proof and the report.
     */
    public sealed interface Job permits StandIn, OwnCommand {
        String label();
    }

    /** pathproof's stand-in job: the scenario's workload on {@code nproc} ranks, emulated when {@code emulate} is set. */
    public record StandIn(Scenario scenario, String label, Runner.Backend backend, int nproc, Runner.Emulate emulate)
            implements Job {
        public StandIn {
            Objects.requireNonNull(scenario, "scenario");
            backend = backend == null ? Runner.Backend.AUTO : backend;
            if (nproc < 1) {
                throw PathproofException.usage("--nproc: must be >= 1, got " + nproc);
            }
        }
    }

    /**
     * The user's own job, run as given ({@code pathproof prove -- COMMAND}); its baseline seals its prediction in the
     * run. {@code topology} is what that prediction is made for (null: the machine the job finds); {@code emulate}
     * runs it on an emulated machine (NCCL decisions real, timings not physical).
     */
    public record OwnCommand(
            List<String> command, String label, String topology, Runner.Emulate emulate, Integer topologyNodes)
            implements Job {
        /** Without {@code --nodes}: the topology as given. */
        public OwnCommand(List<String> command, String label, String topology, Runner.Emulate emulate) {
            this(command, label, topology, emulate, null);
        }

        public OwnCommand {
            if (command == null || command.isEmpty()) {
                throw PathproofException.usage("prove -- COMMAND: the command is missing");
            }
            command = List.copyOf(command);
            label = label == null ? String.join(" ", command) : label;
        }
    }

    /** How each run is sized and bounded (the shared run flags). */
    public record Sizes(int warmup, int iters, int profileIters, String python, long timeoutSec) {
        public Sizes {
            if (iters < 2 || warmup < 0 || profileIters < 0) {
                throw PathproofException.usage("--iters must be >= 2, --warmup and --profile-iters >= 0");
            }
        }
    }

    /**
     * What to prove. {@code fault} is K=V[,K=V] or null for a fault drawn at random with {@code seed}. {@code maxRuns}:
     * how many runs of each configuration prove may make to decide a step-time comparison ({@link Sequential});
     * {@code rule}: the step-time rule (its equivalence margin; prove plans the looks itself).
     */
    public record Plan(
            Job job,
            String fault,
            long seed,
            Path out,
            Sizes sizes,
            Path samples,
            String tool,
            List<String> commandLine,
            BackendChoice choice,
            int maxRuns,
            Diagnosis.Rule rule) {
        /** At most this many runs of one configuration unless told otherwise: with four configurations, 12 runs at most. */
        public static final int MAX_RUNS = 3;

        public Plan {
            Objects.requireNonNull(job, "job");
            Objects.requireNonNull(out, "out");
            Objects.requireNonNull(sizes, "sizes");
            commandLine = commandLine == null ? List.of() : List.copyOf(commandLine);
            Objects.requireNonNull(choice, "choice");
            if (maxRuns < 1 || maxRuns > 20) {
                throw PathproofException.usage(
                        "--max-runs: between 1 and 20 runs of each configuration, got " + maxRuns);
            }
            rule = rule == null ? Diagnosis.Rule.DEFAULT : rule;
        }

        Runner.Emulate emulate() {
            return job instanceof StandIn si ? si.emulate() : job instanceof OwnCommand oc ? oc.emulate() : null;
        }
    }

    /**
     * How the backend was chosen: {@code requested} (auto, nccl, gloo, or --emulate), the {@code branch} taken (nccl,
     * emulated, gloo), what the runs get (backend, emulation with the library), the scenario auto chose when none was
     * given (null: the one given) and its ranks (null: the scenario's), and one line of why.
     */
    public record BackendChoice(
            String requested,
            String branch,
            Runner.Backend backend,
            boolean emulate,
            Path ncclLib,
            String scenario,
            Integer ranks,
            String reason) {
        public BackendChoice {
            Objects.requireNonNull(branch, "branch");
            Objects.requireNonNull(backend, "backend");
            Objects.requireNonNull(reason, "reason");
        }

        /** A backend taken as given (--backend nccl|gloo, or a user's command that decides its own). */
        public static BackendChoice given(String requested, String branch, Runner.Backend backend, String reason) {
            return new BackendChoice(requested, branch, backend, false, null, null, null, reason);
        }

        /** --emulate: NCCL with the emulator library {@code ncclLib}, the machine emulated on one GPU. */
        public static BackendChoice emulated(Path ncclLib, String reason) {
            return new BackendChoice("--emulate", "emulated", Runner.Backend.NCCL, true, ncclLib, null, null, reason);
        }

        /** The line prove says first and the proof records, e.g. "auto → gloo: no GPU (…): gloo on the CPU". */
        public String line() {
            return requested + " → " + branch + ": " + reason;
        }
    }

    /**
     * {@code --backend auto} from the probed facts (see {@link AutoBackend}): {@code scenario} is the one given (null
     * when none was), {@code ranks} the ranks asked for (--nproc, else null). Throws exit 7 (NO_GPU) when an NCCL
     * scenario was given and nothing here can run it.
     */
    public static BackendChoice auto(
            Runner.Machine machine, Runner.EmulatorLibrary library, Scenario scenario, Integer ranks) {
        AutoBackend.Want w = scenario == null
                ? new AutoBackend.Want(false, false, ranks == null ? 1 : ranks, true)
                : new AutoBackend.Want(
                        true,
                        scenario.backend() == io.pathproof.scenario.Backend.NCCL,
                        ranks != null ? ranks : scenario.ranks(),
                        scenario.topology().nodes().size() == 1);
        return AutoBackend.decide(machine, library, w);
    }

    /** Told when a phase ends: its name, milliseconds since prove started, one line of what it found. */
    public interface Progress {
        void phase(String name, long elapsedMs, String detail);
    }

    /** The outcome: exit code (0 only when proven), the output directory, the report and the lines of the reveal. */
    public record Outcome(int exitCode, boolean proven, Path out, Path report, List<String> summary) {
        public Outcome {
            summary = List.copyOf(summary);
        }
    }

    public static Outcome run(Plan plan, Progress progress) {
        Faults.check(plan.fault(), plan.emulate() != null);
        Proving p = new Proving(plan, progress);
        p.predictAndRunBaseline();
        p.accept();
        p.injectFaultAndRunVariant();
        p.diagnoseBlind();
        p.fixAndVerify();
        p.explain();
        p.reveal();
        return p.report();
    }
}
