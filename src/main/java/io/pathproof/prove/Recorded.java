package io.pathproof.prove;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.accept.Acceptance;
import io.pathproof.accept.AcceptanceTable;
import io.pathproof.core.PathproofException;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import io.pathproof.proofdir.Proof;
import io.pathproof.proofdir.Proof.Sample;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Committed GPU samples (a sealed prediction beside the run made after it) accepted again here, so that the NCCL rows
 * appear on a machine without a GPU. They are recordings: each is labelled with the day and the machine it was made
 * on and never shown as a live run.
 */
final class Recorded {
    private Recorded() {}

    /**
     * Every {@code DIR/*} holding {@code prediction.json} and a run made after it, in name order; none when DIR is
     * missing. The run is {@code run/}, or, in a recorded prove directory (proof.json), its {@code baseline/}: the run
     * its prediction was sealed for.
     */
    static List<Sample> acceptAll(Path samples) {
        List<Sample> out = new ArrayList<>();
        if (samples == null || !Files.isDirectory(samples)) {
            return out;
        }
        List<Path> dirs;
        try (Stream<Path> l = Files.list(samples)) {
            dirs = l.filter(d -> Files.isRegularFile(d.resolve("prediction.json")) && runOf(d) != null)
                    .sorted()
                    .toList();
        } catch (IOException e) {
            return out;
        }
        for (Path d : dirs) {
            Prediction p;
            Evidence e;
            try {
                p = PredictionIo.readVerified(d.resolve("prediction.json"));
                e = Ingest.read(List.of(runOf(d)));
            } catch (PathproofException x) {
                // A recording that cannot be read is reported as such; it never stops the live proof.
                out.add(new Sample(
                        d.getFileName().toString(),
                        "recorded sample (unreadable)",
                        "",
                        "",
                        "UNREADABLE: " + x.getMessage(),
                        null));
                continue;
            }
            AcceptanceTable t = Acceptance.accept(p, e);
            JsonNode m = e.manifest();
            String start = m == null ? "" : m.path("start").asText("");
            String day = start.length() >= 10 ? start.substring(0, 10) : "an unknown day";
            String gpu = gpuOf(e);
            String torch = m == null ? "" : m.path("python").path("torch").asText("");
            String device = gpu
                    + (torch.isEmpty() ? "" : ", torch " + torch)
                    + (e.nccl() == null || e.nccl().version() == null
                            ? ""
                            : ", NCCL " + e.nccl().version());
            boolean emulated = m != null && m.path("emulation").path("emulated").asBoolean(false);
            String label = "recorded on " + day + " on GPU"
                    + (emulated ? " (emulated: NCCL decisions real, timings not physical)" : "");
            out.add(new Sample(
                    d.getFileName().toString(), label, day, device, t.verdict().label(), t));
        }
        return out;
    }

    private static Path runOf(Path d) {
        if (Files.isDirectory(d.resolve("run"))) {
            return d.resolve("run");
        }
        return Proof.in(d) && Files.isDirectory(d.resolve("baseline")) ? d.resolve("baseline") : null;
    }

    private static String gpuOf(Evidence e) {
        JsonNode m = e.manifest();
        if (m != null) {
            for (String k : List.of("gpuName", "gpu")) {
                if (m.hasNonNull(k) && m.get(k).isTextual()) {
                    return m.get(k).asText();
                }
            }
            JsonNode gpus = m.path("gpus");
            if (gpus.isArray() && !gpus.isEmpty()) {
                return gpus.size() + " × " + gpus.get(0).path("name").asText("GPU");
            }
            if (m.path("python").path("cudaGpus").asInt(0) > 0) {
                return m.path("python").path("cudaGpus").asInt() + " GPU(s)";
            }
        }
        return "GPU";
    }
}
