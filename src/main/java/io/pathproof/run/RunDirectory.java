package io.pathproof.run;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.rundir.DdpSessions;
import io.pathproof.rundir.NewDirectory;
import io.pathproof.rundir.RunManifest;
import io.pathproof.rundir.RunOutcome;
import io.pathproof.rundir.RunOutcome.RankExit;
import io.pathproof.rundir.Vocabulary;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Workload;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The files a launcher puts into a run directory before any rank starts: the directory itself (new or empty), the
 * workload as the harness reads it, and the harness with what it imports.
 */
final class RunDirectory {
    /** The harness resource's name inside the jar (and the file name it gets in the run directory). */
    static final String HARNESS = "harness.py";

    /** The harness's own module (instrumentation cost), copied beside it: harness.py imports it from its directory. */
    static final String HARNESS_MODULE = "pathproof_instrumentation.py";

    /**
     * The job package's facts module (stdlib only, functions only), copied beside the harness under this name: the
     * stand-in harness and a user's job read their versions (the loaded NCCL's among them) through the same code.
     */
    static final String FACTS_MODULE = "pathproof_facts.py";

    /** Where {@link #FACTS_MODULE} is in the jar: the job package's {@code _facts.py}. */
    static final String FACTS_RESOURCE = PythonPackage.ROOT + "_facts.py";

    private RunDirectory() {}

    /** A run directory is new or empty: evidence of two runs must never mix. */
    static void prepare(Path dir) {
        NewDirectory.prepare(dir, "a run directory holds one run (choose a new one)");
    }

    /** The workload as the harness reads it: parameters in order with torch dtype names, and the DDP flags. */
    static void writeWorkload(Workload w, Path file) {
        ObjectNode n = Json.mapper().createObjectNode();
        n.put("name", w.name());
        ArrayNode ps = n.putArray("parameters");
        for (Parameter p : w.parameters()) {
            ObjectNode pn = ps.addObject();
            pn.put("name", p.name());
            ArrayNode sh = pn.putArray("shape");
            p.shape().forEach(sh::add);
            pn.put("dtype", p.dtype().torchName());
            pn.put("requiresGrad", p.requiresGrad());
        }
        if (w.bucketCapMb() == null) {
            n.putNull("bucketCapMb");
        } else {
            n.put("bucketCapMb", w.bucketCapMb());
        }
        n.put("findUnusedParameters", w.findUnusedParameters());
        n.put("staticGraph", w.staticGraph());
        n.put("gradientAsBucketView", w.gradientAsBucketView());
        RunManifest.writeJson(file, n);
    }

    /**
     * Where NCCL's evidence goes, added to {@code env} unless the user's environment ({@code parent}) sets it: its log
     * and the flight recorder (vocabulary.json), and its topology dump in the run directory. Not its graph dump
     * (NCCL_GRAPH_DUMP_FILE): no row reads it (the graphs are in the NCCL log, ncclTopoPrintGraph), and NCCL up to
     * 2.26 aborts init writing it when its search reached PATH_DIS, a type its writer's table lacks
     * (search.cc:758-768, 879@v2.26.2-1; 2.27 stops the search before DIS, search.cc:1052, 1058@v2.27.3-1). Seen
     * on an emulated 2 x 8 H200 cluster with NCCL 2.26.2: "KV Convert to str : could not find value 10".
     */
    static void putEvidenceEnv(Map<String, String> env, Path dir, Map<String, String> parent) {
        Vocabulary.rankEnv().forEach((k, v) -> {
            if (!parent.containsKey(k)) {
                env.put(k, v);
            }
        });
        if (!parent.containsKey("NCCL_TOPO_DUMP_FILE")) {
            env.put("NCCL_TOPO_DUMP_FILE", dir.resolve("nccl-topo.xml").toString());
        }
    }

    /**
     * The run's end, written as the manifest's outcome turn in {@code home} (this launcher's directory): complete only
     * with exit 0, which also drops the request's "incomplete" reason.
     */
    static Runner.Result ended(Path home, Path dir, int code, String msg, List<RankExit> ranks) {
        boolean complete = code == ExitCode.OK;
        if (complete) {
            RunManifest.remove(home, "incompleteReason");
        }
        RunManifest.write(home, new RunOutcome(Instant.now().toString(), complete, code, msg, ranks));
        DdpSessions.completeManifests(home);
        return new Runner.Result(dir, complete, code, msg, ranks, null);
    }

    static void writeText(Path target, String text) {
        try {
            Files.writeString(target, text);
        } catch (IOException e) {
            throw PathproofException.badInput("run: cannot write " + target + ": " + e.getMessage());
        }
    }

    /** The harness at {@code target}, and beside it what it imports: its modules and the shared vocabulary. */
    static void copyHarness(Path target) {
        copyResource(HARNESS, target);
        copyResource(HARNESS_MODULE, target.resolveSibling(HARNESS_MODULE));
        copyResource(FACTS_RESOURCE, target.resolveSibling(FACTS_MODULE));
        copyResource(Vocabulary.RESOURCE, target.resolveSibling("vocabulary.json"));
    }

    private static void copyResource(String name, Path target) {
        try (InputStream in = RunDirectory.class.getResourceAsStream(name)) {
            if (in == null) {
                throw new PathproofException(ExitCode.INTERNAL, "run: the harness resource is missing from the jar");
            }
            Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw PathproofException.badInput("run: cannot write " + target + ": " + e.getMessage());
        }
    }
}
