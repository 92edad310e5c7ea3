package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.evidence.EvidenceKind;
import io.pathproof.evidence.Ingest;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The versions a prediction was made for against the ones the run recorded, on the committed emulated 4-rank run
 * (predicted for torch 2.11.0 and NCCL 2.28.9; it ran on torch 2.11.0+cu130 with NCCL 2.28.9) and on copies of its
 * manifest edited the way a run on other versions looks (prove once predicted torch 1.13 for a torch 2.11 node).
 */
class VersionChecksTest {
    private static final Path SAMPLE = Path.of("samples/emulated-h200-x4");

    @TempDir
    Path tmp;

    private static AcceptanceRow row(Path run, String id) {
        Prediction p = PredictionIo.readVerified(SAMPLE.resolve("prediction.json"));
        AcceptanceTable t = Acceptance.accept(p, Ingest.read(List.of(run)));
        return t.rows().stream().filter(r -> r.id().equals(id)).findFirst().orElse(null);
    }

    private Path runWithManifest(String from, String to) throws IOException {
        Path dst = tmp.resolve("run");
        Files.createDirectories(dst);
        try (Stream<Path> files = Files.list(SAMPLE.resolve("run"))) {
            files.filter(Files::isRegularFile).forEach(f -> {
                try {
                    Files.copy(f, dst.resolve(f.getFileName().toString()));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
        Path m = dst.resolve("manifest.json");
        String s = Files.readString(m, StandardCharsets.UTF_8);
        assertThat(s).contains(from);
        Files.writeString(m, s.replace(from, to), StandardCharsets.UTF_8);
        return dst;
    }

    @Test
    void theSameReleaseWithABuildSuffixPasses() {
        AcceptanceRow torch = row(SAMPLE.resolve("run"), "torch-version");
        assertThat(torch.verdict()).isEqualTo(Verdict.PASS);
        assertThat(torch.expected()).isEqualTo("2.11.0");
        assertThat(torch.observed()).isEqualTo("2.11.0+cu130");
        assertThat(row(SAMPLE.resolve("run"), "nccl-version").verdict()).isEqualTo(Verdict.PASS);
    }

    @Test
    void anotherTorchFailsAndSaysWhatItVoids() throws IOException {
        AcceptanceRow torch =
                row(runWithManifest("\"torch\" : \"2.11.0+cu130\"", "\"torch\" : \"1.13.0a0\""), "torch-version");
        assertThat(torch.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(torch.observed())
                .contains("1.13.0a0")
                .contains("made for torch 2.11.0")
                .contains("DDP's buckets");
        assertThat(torch.evidence()).containsExactly(EvidenceKind.MANIFEST);
        assertThat(torch.provenance()).anySatisfy(e -> assertThat(e).contains("manifest.json (versions.torch)"));
    }

    @Test
    void anotherNcclFails() throws IOException {
        // The run's NCCL logs and flight-recorder dumps name the library that ran (its ncclGetVersion); here they are
        // gone and the manifest names another.
        Path run = runWithManifest("\"nccl\" : \"2.28.9\",", "\"nccl\" : \"2.27.3\",");
        try (Stream<Path> logs = Files.list(run)) {
            for (Path f : logs.filter(f -> f.getFileName().toString().startsWith("nccl-rank")
                            || f.getFileName().toString().startsWith("flight-recorder"))
                    .toList()) {
                Files.delete(f);
            }
        }
        AcceptanceRow nccl = row(run, "nccl-version");
        assertThat(nccl.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(nccl.evidence()).containsExactly(EvidenceKind.MANIFEST);
    }

    @Test
    void theLibrarysOwnLogOutranksAManifestThatNamesTorchsBuild() throws IOException {
        // Manifests of earlier pathproof hold torch.cuda.nccl.version(), the headers torch was built against; a run
        // that loaded another libnccl says its own version in its log, and that is the version the run used.
        AcceptanceRow nccl = row(runWithManifest("\"nccl\" : \"2.28.9\",", "\"nccl\" : \"2.27.3\","), "nccl-version");
        assertThat(nccl.verdict()).isEqualTo(Verdict.PASS);
        assertThat(nccl.evidence()).containsExactly(EvidenceKind.NCCL_LOG);
    }

    @Test
    void aManifestWithoutVersionsLeavesTorchUnprovenAndNcclToItsOwnLog() throws IOException {
        // The rows were left out; a row that cannot be judged is UNPROVEN with its reason.
        Path run = runWithManifest("\"versions\" :", "\"versionsNotRecorded\" :");
        AcceptanceRow torch = row(run, "torch-version");
        assertThat(torch.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(torch.observed())
                .isEqualTo("the run's manifest records no versions (DDP's logging and debug log never name"
                        + " torch's version)");
        // NCCL says its own version in its log: the row is judged on it.
        AcceptanceRow nccl = row(run, "nccl-version");
        assertThat(nccl.verdict()).isEqualTo(Verdict.PASS);
        assertThat(nccl.evidence()).containsExactly(EvidenceKind.NCCL_LOG);
        assertThat(nccl.provenance()).singleElement().satisfies(p -> assertThat(p)
                .matches(".*nccl-rank\\d\\.log:\\d+"));
    }

    @Test
    void withoutAnyVersionInTheEvidenceBothRowsSayWhy() throws IOException {
        Path run = tmp.resolve("bare");
        Files.createDirectories(run);
        Files.writeString(run.resolve("manifest.json"), "{\"backend\": \"nccl\", \"worldSize\": 4}");
        AcceptanceRow torch = row(run, "torch-version");
        assertThat(torch.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(torch.expected()).isEqualTo("2.11.0");
        AcceptanceRow nccl = row(run, "nccl-version");
        assertThat(nccl.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(nccl.observed())
                .isEqualTo(
                        "the run's manifest records no versions; no NCCL log or flight-recorder dump names" + " one");
        assertThat(row(run, "run-made-for-prediction").verdict()).isEqualTo(Verdict.UNPROVEN);
    }

    @Test
    void ncclVersionIsNotApplicableToAGlooRun() throws IOException {
        Path pred = tmp.resolve("pred.json");
        java.io.StringWriter out = new java.io.StringWriter();
        int code = io.pathproof.cli.Main.run(
                new String[] {"predict", "--scenario", "cpu-x4-gloo", "--torch", "1.13.1", "-o", pred.toString()},
                new java.io.PrintWriter(out, true),
                new java.io.PrintWriter(new java.io.StringWriter(), true));
        assertThat(code).isZero();
        Path run = tmp.resolve("gloo-run");
        Files.createDirectories(run);
        Files.writeString(run.resolve("manifest.json"), "{\"backend\": \"gloo\", \"worldSize\": 4}");
        AcceptanceTable t = Acceptance.accept(PredictionIo.readVerified(pred), Ingest.read(List.of(run)));
        assertThat(t.row("nccl-version").verdict()).isEqualTo(Verdict.NOT_APPLICABLE);
        assertThat(t.row("nccl-version").observed()).isEqualTo("not applicable (backend gloo)");
        assertThat(t.row("torch-version").verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(t.row("torch-version").observed()).startsWith("the run's manifest records no versions");
    }

    @Test
    void anotherTorchOfTheSameBucketRulesPassesAndSaysSo() throws IOException {
        // Issue 19 §3: a prediction for 2.11.0 and a run on 2.6.0 follow one family of DDP bucket rules (torch-2.5+).
        AcceptanceRow torch =
                row(runWithManifest("\"torch\" : \"2.11.0+cu130\"", "\"torch\" : \"2.6.0\""), "torch-version");
        assertThat(torch.verdict()).isEqualTo(Verdict.PASS);
        assertThat(torch.observed()).isEqualTo("predicted for 2.11.0, ran 2.6.0: same bucket rules (torch-2.5+)");
    }

    @Test
    void aTorchWhoseRulesWereNeverCheckedIsUnproven() throws IOException {
        AcceptanceRow torch =
                row(runWithManifest("\"torch\" : \"2.11.0+cu130\"", "\"torch\" : \"2.3.1\""), "torch-version");
        assertThat(torch.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(torch.observed()).contains("2.3.1", "not checked");
    }

    @Test
    void debiansTorch1130a0RunsThe1131PredictionsRules() throws IOException {
        // The case of the issue: predicted for torch 1.13.1, run on Debian's python3-torch 1.13.0a0.
        Path pred = tmp.resolve("pred.json");
        java.io.StringWriter out = new java.io.StringWriter();
        int code = io.pathproof.cli.Main.run(
                new String[] {"predict", "--scenario", "cpu-x4-gloo", "--torch", "1.13.1", "-o", pred.toString()},
                new java.io.PrintWriter(out, true),
                new java.io.PrintWriter(new java.io.StringWriter(), true));
        assertThat(code).isZero();
        Path run = tmp.resolve("gloo-run");
        Files.createDirectories(run);
        Files.writeString(
                run.resolve("manifest.json"),
                "{\"backend\": \"gloo\", \"worldSize\": 4, \"versions\": {\"torch\": \"1.13.0a0\"}}");
        AcceptanceTable t = Acceptance.accept(PredictionIo.readVerified(pred), Ingest.read(List.of(run)));
        AcceptanceRow torch = t.row("torch-version");
        assertThat(torch.verdict()).isEqualTo(Verdict.PASS);
        assertThat(torch.observed()).isEqualTo("predicted for 1.13.1, ran 1.13.0a0: same bucket rules (torch-1.13)");
        assertThat(torch.evidence()).containsExactly(EvidenceKind.MANIFEST);
    }
}
