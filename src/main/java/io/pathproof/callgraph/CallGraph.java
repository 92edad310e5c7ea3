package io.pathproof.callgraph;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The 35-stage call graph of one DDP gradient AllReduce (seed: "35阶段调用图"): 25 implementation stages from autograd
 * to the optimizer step and 10 acceptance stages, each with its owner (PyTorch, NCCL host, NCCL device,
 * CUDA+hardware, application), the source it lives in, the evidence kinds that can show it, and the witness: the
 * particular fact that shows this stage happened in a run (a hook record for the comm hook, an INIT line for the
 * communicator, a TUNING line for tuning, a kernel record for the kernel …). A stage is covered only by its own
 * witness, cited file:line; a stage without one is "modelled only". It does not claim a kernel per stage.
 */
public final class CallGraph {
    private static final String RESOURCE = "/io/pathproof/callgraph/callgraph_model.csv";

    /**
     * One stage. {@code evidence} are the evidence kinds (hook, nccl-log, kernel-trace, …) that can show it;
     * {@code witness} the facts that show it happened ("a|b" either, "a+b" both; empty: no evidence can show it).
     */
    public record Stage(
            int id,
            String kind,
            String name,
            String owner,
            String source,
            List<EvidenceKind> evidence,
            String witness) {
        public Stage {
            evidence = evidence == null ? List.of() : List.copyOf(evidence);
            witness = witness == null ? "" : witness;
        }
    }

    /**
     * A stage in a run: covered when its witness is in the run's evidence; {@code present} the evidence kinds the run
     * holds of those that could show the stage; {@code citations} where the witness was read (file:line, a few);
     * {@code status} "shown", "modelled only: …" or "no run". {@code citations} is null only as read from a file written
     * before stages cited their witness.
     */
    public record Coverage(
            Stage stage, boolean covered, List<EvidenceKind> present, List<String> citations, String status) {
        public Coverage {
            present = present == null ? List.of() : List.copyOf(present);
            citations = citations == null ? null : List.copyOf(citations);
        }
    }

    private CallGraph() {}

    public static List<Stage> stages() {
        List<Stage> out = new ArrayList<>();
        try (InputStream in = CallGraph.class.getResourceAsStream(RESOURCE);
                BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line = r.readLine(); // header
            while ((line = r.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                String[] f = line.split(",", -1);
                if (f.length != 7) {
                    throw new IllegalStateException(RESOURCE + ": malformed row: " + line);
                }
                out.add(new Stage(
                        Integer.parseInt(f[0]),
                        f[1],
                        f[2],
                        f[3],
                        f[4],
                        Arrays.stream(f[5].split(";"))
                                .map(EvidenceKind::ofLabel)
                                .toList(),
                        f[6]));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return List.copyOf(out);
    }

    /** The evidence kinds present in a run. */
    public static Set<EvidenceKind> kindsIn(Evidence e) {
        Set<EvidenceKind> k = new LinkedHashSet<>();
        if (e == null) {
            return k;
        }
        if (e.ddp() != null && e.ddp().buckets() != null && !e.ddp().buckets().isEmpty()) {
            k.add(EvidenceKind.HOOK);
        }
        if (e.nccl() != null
                && ((e.nccl().communicators() != null
                                && !e.nccl().communicators().isEmpty())
                        || (e.nccl().tuning() != null && !e.nccl().tuning().isEmpty()))) {
            k.add(EvidenceKind.NCCL_LOG);
        }
        if (e.kernels() != null && e.kernels().stream().anyMatch(Evidence.Kernel::nccl)) {
            k.add(EvidenceKind.KERNEL_TRACE);
        }
        if (e.flightRecorder() != null && !e.flightRecorder().isEmpty()) {
            k.add(EvidenceKind.FLIGHT_RECORDER);
        }
        if (e.replicas() != null && e.replicas().equal() != null) {
            k.add(EvidenceKind.REPLICAS);
        }
        if (e.peerAccess() != null && !e.peerAccess().isEmpty()) {
            k.add(EvidenceKind.PEER_ACCESS);
        }
        if (e.manifest() != null
                && !e.manifest().isMissingNode()
                && !e.manifest().isNull()) {
            k.add(EvidenceKind.MANIFEST);
        }
        return k;
    }

    /** Which stages the run's evidence shows happened, each with its citations; every stage "no run" without one. */
    public static List<Coverage> coverage(Evidence e) {
        Set<EvidenceKind> kinds = kindsIn(e);
        List<Coverage> out = new ArrayList<>();
        for (Stage s : stages()) {
            List<EvidenceKind> present =
                    s.evidence().stream().filter(kinds::contains).toList();
            if (e == null) {
                out.add(new Coverage(s, false, present, List.of(), "no run"));
                continue;
            }
            if (s.witness().isEmpty()) {
                out.add(new Coverage(
                        s, false, present, List.of(), "modelled only: no evidence a run leaves shows this stage"));
                continue;
            }
            List<String> cited = Witnesses.find(s.witness(), e);
            out.add(
                    cited.isEmpty()
                            ? new Coverage(
                                    s,
                                    false,
                                    present,
                                    List.of(),
                                    "modelled only: no "
                                            + s.witness().replace("|", " or ").replace("+", " with ") + " in this run")
                            : new Coverage(s, true, present, cited, "shown"));
        }
        return out;
    }
}
