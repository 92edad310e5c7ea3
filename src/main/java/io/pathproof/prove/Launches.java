package io.pathproof.prove;

import io.pathproof.core.PathproofException;
import io.pathproof.proofdir.Proof;
import io.pathproof.run.Runner;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The runs prove makes: their directories and labels by role, and one launch of the job through the run room. */
final class Launches {
    private Launches() {}

    /** A run's directory: the first of each configuration is named by its role alone, later ones are numbered. */
    static String dirName(String role, int k) {
        return switch (role) {
            case "baseline" -> k == 1 ? "baseline" : "baseline-" + k;
            case "variant" -> k == 1 ? "variant" : "variant-" + k;
            case "fixed" -> k == 1 ? "fixed" : k == 2 ? "fixed-again" : "fixed-again-" + (k - 1);
            case "baselineAgain" -> k == 1 ? "baseline-again" : "baseline-again-" + k;
            default -> throw new IllegalArgumentException("run role " + role);
        };
    }

    /** A run's label on the page and in the phases: "baseline 2", "baseline again", "fixed again 2". */
    static String label(String role, int k) {
        return switch (role) {
            case "baselineAgain" -> k == 1 ? "baseline again" : "baseline again " + k;
            case "fixed" -> k == 1 ? "fixed" : k == 2 ? "fixed again" : "fixed again " + (k - 1);
            default -> k == 1 ? role : role + " " + k;
        };
    }

    /** The configuration a role runs: the baseline run again is the baseline's. */
    static String roleName(String role) {
        return role.equals("baselineAgain") ? "baseline" : role;
    }

    /** The first run of a configuration as the proof lists it. */
    static Proof.Run first(String role) {
        return new Proof.Run(role, dirName(role, 1), label(role, 1));
    }

    /**
     * Runs the plan's job once into {@code dir} ({@code name} in the recorded command line) with the settings
     * {@code inject} and the sealed prediction (null: the job seals its own); a run that fails ends the proof.
     */
    static Path launch(Prove.Plan plan, Path dir, String name, List<String> inject, Path prediction) {
        List<String> cl = withoutFault(plan.commandLine());
        cl.add("(" + name + " run)");
        Prove.Sizes z = plan.sizes();
        Runner.Result r;
        if (plan.job() instanceof Prove.StandIn si) {
            Runner.Request req = Runner.Request.builder(si.scenario().workload(), dir)
                    .labels(si.label(), si.scenario().topology().name())
                    .backend(si.backend())
                    .ranks(si.nproc(), 1, 0)
                    .sizes(z.iters(), z.warmup(), z.profileIters())
                    .inject(inject)
                    .prediction(prediction)
                    .timeoutSec(z.timeoutSec())
                    .python(z.python())
                    .recorded(cl, plan.tool())
                    .build();
            r = Runner.run(req, null, si.emulate());
        } else {
            Prove.OwnCommand oc = (Prove.OwnCommand) plan.job();
            // prove records the hook on every backend: diagnose's compute estimate subtracts each bucket's
            // hook-to-GPU-done
            // interval from the step, which the flight recorder does not give (no host time of a collective's end). A
            // proof
            // run's cost is not the user's training's; `run` leaves the hook out on NCCL.
            r = Runner.wrap(Runner.CommandRequest.of(oc.command(), dir)
                    .inject(inject)
                    .prediction(prediction)
                    .hookEvery(Runner.Instrumentation.DEFAULT_HOOK_EVERY)
                    .topology(oc.topology())
                    .timeoutSec(z.timeoutSec())
                    .sizes(z.warmup(), z.profileIters())
                    .recorded(cl, plan.tool())
                    .emulate(oc.emulate())
                    .topologyNodes(oc.topologyNodes())
                    .build());
        }
        if (r.exitCode() != 0) {
            throw new PathproofException(r.exitCode(), "prove: the " + name + " run failed: " + r.message());
        }
        return dir;
    }

    /**
     * prove's command line as a run records it: without {@code --fault K=V}, which would name the hidden fault in every
     * run's manifest (diagnose reads manifests; the fault is in prove's sealed record only).
     */
    static List<String> withoutFault(List<String> commandLine) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < commandLine.size(); i++) {
            String a = commandLine.get(i);
            if (a.equals("--")) {
                out.addAll(commandLine.subList(i, commandLine.size())); // the user's command: never prove's flags
                break;
            }
            if (a.equals("--fault")) {
                i++;
            } else if (!a.startsWith("--fault=")) {
                out.add(a);
            }
        }
        return out;
    }
}
