package io.pathproof.prove;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.accept.Acceptance;
import io.pathproof.accept.AcceptanceTable;
import io.pathproof.callgraph.CallGraph;
import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import io.pathproof.core.StageFile;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.FixVerification;
import io.pathproof.diagnose.Layer;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import io.pathproof.explain.Explainer;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import io.pathproof.predict.Predictor;
import io.pathproof.proofdir.Explanation;
import io.pathproof.proofdir.Proof;
import io.pathproof.report.Report;
import io.pathproof.rundir.RunManifest;
import io.pathproof.rundir.Vocabulary;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Scenarios;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * One proof in progress, one method per step of the seed's chain. Each step keeps what it found for the proof
 * document and says its phase line as it ends, and writes its files at once, so a proof that fails half way leaves
 * them behind; the proof document itself ({@link Proof}) is written at the end, from what the steps kept.
 */
final class Proving {
    private final Prove.Plan plan;
    private final Prove.Progress say;
    private final long t0 = System.nanoTime();
    private final Path out;
    private final String createdAt;
    private final List<Proof.Phase> phases = new ArrayList<>();
    private final List<Proof.Run> runs = new ArrayList<>();
    private final List<Proof.Look> looks = new ArrayList<>();
    private final List<String> reasons = new ArrayList<>();
    private final Path predictionFile;
    /** The scenario's own environment: every run gets it; the variant adds the fault, the fixed run what is kept. */
    private final List<String> scenarioEnv = new ArrayList<>();

    private Prediction prediction;
    private Scenario scenario;
    private Evidence baseline;
    private String backend;
    private int ranks;
    private JsonNode emulation;
    private AcceptanceTable table;
    private List<Fault> catalogue;
    private Fault fault;
    private String faultSha;
    private List<String> variantEnv;
    private boolean extend;
    private Sequential.Diagnosed dx;
    private Diagnosis diagnosis;
    private Layer diagnosed;
    private boolean undecided;
    private Fix fix;
    private Verification verification;
    private List<String> notVerified = new ArrayList<>();
    private List<Proof.Sample> recorded;
    private Proof.Reveal reveal;
    private boolean proven;
    private String verdict;
    private int exit;

    /** The fix verification's outcome and the files and runs it added beside the ones every proof has. */
    private record Verification(
            FixVerification fv,
            Proof.Drift drift,
            String fixedDir,
            String baselineAgainDir,
            String fixedAgainDir,
            String verifyFixFile,
            String verifyFixAgainFile) {}

    /** The output directory, emptied, and the proof's first phase: the backend choice. */
    Proving(Prove.Plan plan, Prove.Progress progress) {
        this.plan = plan;
        say = progress == null ? (n, ms, d) -> {} : progress;
        out = plan.out().toAbsolutePath().normalize();
        OutDir.prepare(out);
        predictionFile = out.resolve(Proof.Files.PREDICTION);
        createdAt = Instant.now().toString();
        // Which branch, and why, before anything runs; the caller says it in its first line, so it is only recorded
        // here.
        phases.add(new Proof.Phase("backend", elapsedMs(), plan.choice().line()));
    }

    private long elapsedMs() {
        return (System.nanoTime() - t0) / 1_000_000;
    }

    private void phase(String name, String detail) {
        long ms = elapsedMs();
        phases.add(new Proof.Phase(name, ms, detail));
        say.phase(name, ms, detail);
    }

    /**
     * 1. predict and seal, before anything runs (the user's own job seals its prediction itself, in its baseline run,
     * before its first gradient AllReduce: its model exists only there); 2. the baseline run.
     */
    void predictAndRunBaseline() {
        Path baselineDir;
        if (plan.job() instanceof Prove.StandIn si) {
            prediction = PredictionIo.writeSealed(Predictor.predict(si.scenario()), predictionFile, plan.tool());
            phase(
                    "predict",
                    "sealed " + sealed(prediction) + ": " + steady(prediction) + " bucket(s), backend "
                            + prediction.backend());
            si.scenario().env().forEach((k, v) -> scenarioEnv.add(k + "=" + v));
            baselineDir = launch(Launches.dirName("baseline", 1), scenarioEnv, predictionFile);
        } else {
            baselineDir = launch(Launches.dirName("baseline", 1), scenarioEnv, null);
            Path own = Vocabulary.ownPrediction(baselineDir);
            if (own == null) {
                throw PathproofException.badInput("prove: the baseline run sealed no prediction (see "
                        + baselineDir.resolve(RunManifest.FILE) + ", instrumentation.predictions)");
            }
            OutDir.copy(own, predictionFile); // the sealed file as the run wrote it: its seal still holds
            prediction = PredictionIo.readVerified(predictionFile);
            phase(
                    "predict",
                    "sealed in the baseline run before its first gradient AllReduce (" + own.getFileName() + ", "
                            + sealed(prediction) + "): " + steady(prediction) + " bucket(s), backend "
                            + prediction.backend());
        }
        scenario = plan.job() instanceof Prove.StandIn si
                ? si.scenario()
                : Scenarios.fromPredictionInputs(prediction.inputs(), predictionFile.toString());
        baseline = Ingest.readRun(baselineDir);
        backend = baseline.manifest() == null
                ? "unknown"
                : baseline.manifest().path("backend").asText("unknown");
        ranks = plan.job() instanceof Prove.StandIn si ? si.nproc() : scenario.ranks();
        emulation = baseline.manifest() == null ? null : baseline.manifest().get("emulation");
        phase("baseline run", backend + ", " + ranks + " rank(s), " + sizeOf(baseline));
    }

    /** 3. the sealed prediction accepted against the baseline's evidence. */
    void accept() {
        table = Acceptance.accept(prediction, baseline);
        OutDir.write(out.resolve(Proof.Files.ACCEPTANCE), Acceptance.toJson(table));
        OutDir.write(out.resolve("acceptance.md"), Acceptance.render(table, "markdown"));
        if (table.counts().fail() > 0) {
            reasons.add("acceptance: " + table.counts().fail() + " row(s) FAIL");
        }
        phase("accept", table.verdict() + ": " + counts(table));
    }

    /** 4. one fault, sealed in prove's own record outside every run directory diagnose reads, and the variant run. */
    void injectFaultAndRunVariant() {
        List<Fault> all = Faults.catalogue(scenario, prediction, backend, ranks, plan.seed(), plan.emulate() != null);
        // Emulated timings are not physical: a fault seen only in the step time could never be diagnosed here.
        catalogue = plan.emulate() == null
                ? all
                : all.stream().filter(f -> f.layer() != Layer.COMPUTE).toList();
        fault = drawn() ? Faults.draw(catalogue, plan.seed()) : Faults.given(plan.fault(), catalogue);
        String sealed = SealedFault.record(fault, plan.seed(), catalogue);
        OutDir.write(out.resolve(SealedFault.FILE), sealed);
        faultSha = SealedFault.sha256(sealed);
        variantEnv = new ArrayList<>(scenarioEnv);
        variantEnv.addAll(fault.settings());
        launch(Launches.dirName("variant", 1), variantEnv, predictionFile);
        phase("variant run", "one fault of " + catalogue.size() + " kinds, sealed " + faultSha.substring(0, 12));
    }

    private boolean drawn() {
        return plan.fault() == null || plan.fault().equals("random");
    }

    /**
     * 5. diagnose blind: run directories, nothing else; an inconclusive step time is settled by more runs of both
     * configurations, interleaved and pooled like with like, the looks sharing the error rates ({@link Sequential}).
     */
    void diagnoseBlind() {
        Evidence variant = Ingest.readRun(out.resolve(Launches.dirName("variant", 1)));
        runs.add(Launches.first("baseline"));
        runs.add(Launches.first("variant"));
        extend = plan.emulate() == null; // emulated timings are never judged: more runs cannot decide them
        Sequential.Runs more = (role, k) -> {
            Path dir = again(role, k, role.equals("variant") ? variantEnv : scenarioEnv);
            phase(
                    Launches.label(role, k) + " run",
                    "one more run of the " + Launches.roleName(role) + " configuration, to decide the step time");
            return Ingest.readRun(dir);
        };
        dx = Sequential.diagnose(
                baseline, variant, new Sequential.Options(extend ? plan.maxRuns() : 1, plan.rule(), more, looks::add));
        diagnosis = dx.diagnosis();
        OutDir.write(out.resolve(Proof.Files.DIAGNOSIS), Diagnosis.render(diagnosis, "json"));
        OutDir.write(out.resolve("diagnosis.md"), Diagnosis.render(diagnosis, "markdown"));
        diagnosed = diagnosis.rootCause() == null
                ? Layer.NONE
                : diagnosis.rootCause().layer();
        phase(
                "diagnose",
                diagnosis.conclusion() + ": layer " + diagnosed
                        + (diagnosis.rootCause() == null
                                ? ""
                                : ", owner " + diagnosis.rootCause().owner())
                        + Sequential.lookText(dx.looks()));
        undecided = dx.inconclusive();
        if (undecided) {
            reasons.add("diagnosis inconclusive after " + dx.baselines().size() + " run(s) of each configuration: "
                    + diagnosis.regression().why() + Sequential.runsNeeded(diagnosis.regression()));
        }
    }

    /** One more run of a configuration, recorded among the proof's runs; its directory. */
    private Path again(String role, int k, List<String> env) {
        String name = Launches.dirName(role, k);
        Path dir = launch(name, env, predictionFile);
        runs.add(new Proof.Run(role, name, Launches.label(role, k)));
        return dir;
    }

    /**
     * 6. the diagnosed fix, applied and verified against the baseline (never on an undecided diagnosis: nothing is
     * named).
     */
    void fixAndVerify() {
        fix = Fix.apply(diagnosis, fault);
        if (undecided) {
            phase(
                    "fix + verify",
                    "skipped: the diagnosis is inconclusive, so no fault is named and no fix can be shown");
            return;
        }
        List<String> fixedEnv = new ArrayList<>(scenarioEnv);
        fixedEnv.addAll(fix.kept());
        String fixedDir = Launches.dirName("fixed", 1);
        Path fixedRun = launch(fixedDir, fixedEnv, predictionFile);
        runs.add(Launches.first("fixed"));
        String[] againDirs = new String[2]; // the first baseline again, the fixed configuration's second run
        Sequential.Runs more = (role, k) -> {
            Path dir = again(role, k, role.equals("fixed") ? fixedEnv : scenarioEnv);
            if (role.equals("baselineAgain") && k == 1) {
                againDirs[0] = Launches.dirName(role, k);
            } else if (role.equals("fixed") && k == 2) {
                againDirs[1] = Launches.dirName(role, k);
            }
            phase(
                    Launches.label(role, k),
                    role.equals("baselineAgain")
                            ? "the baseline run again right after the fixed run, under the machine's present load"
                            : "the fixed configuration run again beside the new baseline");
            return Ingest.readRun(dir);
        };
        Sequential.Verified vx = Sequential.verify(
                dx,
                Ingest.readRun(fixedRun),
                extend && !fix.removed().isEmpty(),
                new Sequential.Options(plan.maxRuns(), plan.rule(), more, looks::add));
        FixVerification fv = vx.verification();
        verification = verified(vx, fixedDir, againDirs[0], againDirs[1]);
        notVerified = notVerified(fix, fv);
        if (!notVerified.isEmpty()) {
            reasons.add("verify-fix: " + fv.verdict() + " (" + String.join("; ", notVerified) + ")");
        }
        phase(
                "fix + verify",
                (fix.removed().isEmpty() ? "nothing undone" : "undid " + String.join(", ", fix.removed()))
                        + "; "
                        + (notVerified.isEmpty()
                                ? "fixed"
                                : FixVerification.INCONCLUSIVE.equals(fv.verdict()) ? "inconclusive" : "NOT fixed")
                        + Sequential.lookText(vx.looks()));
    }

    /**
     * Writes the fix verification's files: verify-fix.json (the first look, the fixed run against the diagnosis's
     * runs) and, where prove added runs, verify-fix-look-K.json for the last look K, which decides; the drift keeps
     * the first look's outcome and the baselines against the baselines run again (how far the machine's load moved).
     */
    private Verification verified(
            Sequential.Verified vx, String fixedDir, String baselineAgainDir, String fixedAgainDir) {
        FixVerification first = Diagnosis.verifyFix(
                dx.baselines(),
                dx.variants(),
                vx.fixed().subList(0, 1),
                List.of(),
                ruleOf(vx.looks().get(0)));
        OutDir.write(out.resolve(Proof.Files.VERIFY_FIX), Diagnosis.render(first, "json"));
        if (vx.looks().size() == 1) {
            return new Verification(
                    vx.verification(), null, fixedDir, baselineAgainDir, fixedAgainDir, Proof.Files.VERIFY_FIX, null);
        }
        String last = "verify-fix-look-" + vx.looks().size() + ".json";
        OutDir.write(out.resolve(last), Diagnosis.render(vx.verification(), "json"));
        Diagnosis.Regression between = null;
        String conclusion = null;
        if (!vx.baselinesAgain().isEmpty()) {
            Double margin = dx.diagnosis().regression().margin();
            Diagnosis drift = Diagnosis.diagnose(
                    dx.baselines(),
                    vx.baselinesAgain(),
                    margin == null ? Diagnosis.Rule.DEFAULT : Diagnosis.Rule.withMargin(margin));
            between = drift.regression();
            conclusion = drift.conclusion();
        }
        String firstLook = first.fixed() ? "fixed" : first.verdict() + ": " + String.join("; ", first.reasons());
        Proof.Drift drift = new Proof.Drift(
                firstLook,
                between,
                conclusion,
                vx.verification().fixed(),
                vx.verification().verdict());
        return new Verification(
                vx.verification(), drift, fixedDir, baselineAgainDir, fixedAgainDir, Proof.Files.VERIFY_FIX, last);
    }

    /** The rule of a look as the sequence planned it. */
    private Diagnosis.Rule ruleOf(Proof.Look l) {
        Double m = dx.diagnosis().regression().margin();
        double margin = m == null ? Diagnosis.Rule.MARGIN : m;
        return Sequential.paired(Diagnosis.Rule.withMargin(margin)).at(l.look(), l.looks());
    }

    /** 7. explain and the call graph, on the baseline's evidence and this diagnosis; recorded GPU samples accepted. */
    void explain() {
        Explanation explanation =
                new Explanation(Explainer.explain(prediction, baseline, diagnosis), CallGraph.coverage(baseline));
        OutDir.write(out.resolve(Proof.Files.EXPLAIN), StageFile.text(explanation));
        recorded = backend.equals("nccl") ? List.of() : Recorded.acceptAll(plan.samples());
        phase(
                "explain",
                "16 answers, 35 stages"
                        + (recorded.isEmpty() ? "" : "; " + recorded.size() + " recorded GPU sample(s) accepted"));
    }

    /** The reveal: the sealed fault against the layer diagnosed, and the verdict of the whole proof. */
    void reveal() {
        boolean match = fault.layer() == diagnosed;
        if (!match && !undecided) {
            reasons.add("diagnosis named layer " + diagnosed + " but the injected fault acts on " + fault.layer());
        }
        FixVerification fv = verification == null ? null : verification.fv();
        boolean fixed = fv != null && notVerified.isEmpty();
        Diagnosis.RootCause rc = diagnosis.rootCause();
        reveal = new Proof.Reveal(
                new Proof.Injected(fault.kind(), fault.settings(), fault.layer(), fault.description()),
                new Proof.Diagnosed(
                        diagnosis.conclusion(),
                        diagnosed,
                        rc == null ? null : rc.owner(),
                        rc == null ? null : rc.change(),
                        rc == null ? null : rc.fix()),
                match,
                new Proof.FixApplied(fix.removed(), fix.kept(), fix.reason()),
                fixed,
                fv == null ? "not tried" : fix.removed().isEmpty() ? "nothing undone" : fv.verdict(),
                SealedFault.sha256(OutDir.read(out.resolve(SealedFault.FILE))).equals(faultSha));
        proven = table.counts().fail() == 0 && match && fixed;
        // Inconclusive only where nothing decided is wrong: no FAIL row, no wrong layer named, no fix refused on
        // evidence.
        boolean inconclusiveFix = fv != null && FixVerification.INCONCLUSIVE.equals(fv.verdict());
        boolean refused = table.counts().fail() > 0 || !undecided && !match || fv != null && !fixed && !inconclusiveFix;
        verdict = proven ? "PROVEN" : !refused && (undecided || inconclusiveFix) ? "INCONCLUSIVE" : "NOT PROVEN";
        exit = verdict.equals("PROVEN")
                ? ExitCode.OK
                : verdict.equals("INCONCLUSIVE") ? ExitCode.INCONCLUSIVE : ExitCode.FAIL;
        phase(
                "reveal",
                fault.kind() + " (" + String.join(", ", fault.settings()) + ", layer " + fault.layer()
                        + ") vs diagnosed " + diagnosed + ": "
                        + (undecided ? "undecided (inconclusive)" : match ? "match" : "MISMATCH"));
    }

    /** 8. proof.json and the report, and the lines that tell the outcome. */
    Prove.Outcome report() {
        OutDir.write(out.resolve(Proof.FILE), StageFile.text(document()));
        Path html = Report.write(Report.load(List.of(out)), out);
        phase("report", html.getFileName().toString());
        OutDir.write(out.resolve(Proof.FILE), StageFile.text(document())); // with the report phase's time
        return new Prove.Outcome(exit, proven, out, html, summary(html));
    }

    /** The proof document: what every step kept, in the order prove did it. */
    private Proof document() {
        Verification v =
                verification == null ? new Verification(null, null, null, null, null, null, null) : verification;
        Proof.Files files = new Proof.Files(
                Proof.Files.PREDICTION,
                Launches.dirName("baseline", 1),
                Proof.Files.ACCEPTANCE,
                Launches.dirName("variant", 1),
                Proof.Files.DIAGNOSIS,
                v.fixedDir(),
                v.baselineAgainDir(),
                v.fixedAgainDir(),
                v.verifyFixFile(),
                v.verifyFixAgainFile(),
                Proof.Files.EXPLAIN);
        Prove.BackendChoice c = plan.choice();
        Proof.SealedFault sealed = new Proof.SealedFault(
                faultSha,
                SealedFault.FILE,
                drawn(),
                plan.seed(),
                catalogue.stream().map(Fault::kind).toList());
        Proof.Sequence sequence = new Proof.Sequence(
                plan.maxRuns(),
                plan.rule().margin(),
                Sequential.atPairs(Sequential.paired(plan.rule()), plan.maxRuns(), plan.maxRuns())
                        .describe(),
                looks);
        return new Proof(
                Proof.SCHEMA,
                plan.tool(),
                createdAt,
                plan.job().label(),
                plan.commandLine(),
                phases,
                files,
                new Proof.BackendChoice(c.requested(), c.branch(), c.reason()),
                backend,
                ranks,
                emulation,
                sealed,
                runs,
                sequence,
                v.drift(),
                recorded,
                reveal,
                verdict,
                exit,
                reasons);
    }

    private List<String> summary(Path html) {
        FixVerification fv = verification == null ? null : verification.fv();
        List<String> summary = new ArrayList<>();
        summary.add("prove: " + verdict + " — " + plan.job().label() + ", " + backend + ", " + ranks + " rank(s)");
        summary.add("  acceptance: " + table.verdict() + " (" + counts(table) + ")");
        summary.add("  injected:  " + fault.kind() + ": " + String.join(", ", fault.settings()) + " (layer "
                + fault.layer() + "; sealed " + faultSha.substring(0, 12) + ")");
        summary.add("  diagnosed: " + diagnosis.conclusion() + ": layer " + diagnosed
                + (diagnosis.rootCause() == null
                        ? ""
                        : ", owner " + diagnosis.rootCause().owner() + " — "
                                + diagnosis.rootCause().change()));
        summary.add("  fix:       "
                + (fv == null
                        ? "not tried (nothing diagnosed)"
                        : (fix.removed().isEmpty() ? "nothing undone" : "undid " + String.join(", ", fix.removed()))
                                + " → "
                                + (reveal.fixed()
                                        ? "verified"
                                        : FixVerification.INCONCLUSIVE.equals(fv.verdict())
                                                ? "inconclusive"
                                                : "NOT verified")));
        if (!reasons.isEmpty() && !proven) {
            reasons.forEach(r -> summary.add("  why:       " + r));
        }
        for (Proof.Sample r : recorded) {
            summary.add("  " + r.label() + ": " + r.name() + " " + r.verdict());
        }
        summary.add("  report:    " + html);
        return summary;
    }

    private static String counts(AcceptanceTable t) {
        return t.counts().pass() + " PASS, " + t.counts().fail() + " FAIL, "
                + t.counts().unproven() + " UNPROVEN, " + t.counts().notApplicable() + " N/A";
    }

    /**
     * Why the fix is not verified; empty when it is. A fix that undid nothing is never verified, whatever the timings
     * say: the fixed run is then the variant's configuration again, and a step that looks like the baseline's only shows
     * that the machine's load hid the fault, and a loaded machine can hide one as large as the smallest compute fault.
     */
    static List<String> notVerified(Fix fix, FixVerification fv) {
        List<String> out = new ArrayList<>();
        if (fix.removed().isEmpty()) {
            out.add("nothing was undone: the fixed run is the variant's configuration again, so it cannot show a fix");
        }
        if (!fv.fixed()) {
            out.addAll(fv.reasons());
        }
        return out;
    }

    /** "53b8d61400e6 at 2026-12-03T03:00:48.837Z": the seal's first 12 hex digits and its time. */
    private static String sealed(Prediction p) {
        return p.seal().sha256().substring(0, 12) + " at " + p.seal().createdAt();
    }

    private static int steady(Prediction p) {
        return p.buckets().rebuilt().isEmpty()
                ? p.buckets().construction().size()
                : p.buckets().rebuilt().size();
    }

    /** The steps of a run as the reader sees them: the stand-in's sizes are the flags, a user's job decides its own. */
    private String sizeOf(Evidence e) {
        if (plan.job() instanceof Prove.StandIn) {
            return plan.sizes().warmup() + " + " + plan.sizes().iters() + " steps";
        }
        long measured = e.steps() == null
                ? 0
                : e.steps().stream()
                        .filter(st -> st.rank() == 0 && st.measured())
                        .count();
        long all = e.steps() == null
                ? 0
                : e.steps().stream().filter(st -> st.rank() == 0).count();
        return (all - measured) + " + " + measured + " steps (the job's own)";
    }

    /** Runs the job once into {@code out/name} with the settings {@code inject}; its directory. */
    private Path launch(String name, List<String> inject, Path sealedPrediction) {
        return Launches.launch(plan, out.resolve(name), name, inject, sealedPrediction);
    }
}
