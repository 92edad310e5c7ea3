package io.pathproof.accept;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.PathproofException;
import io.pathproof.ddp.BucketPlanner;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.predict.PredictionIo;
import io.pathproof.scenario.Version;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Seal and provenance rows: the seal is intact, the prediction was made before the run, the run records this
 * prediction's seal, and the run is the job that was predicted (backend, world size).
 */
final class SealChecks extends CheckFamily {
    SealChecks(CheckFamily.Context ctx) {
        super(ctx);
    }

    void seal() {
        // The seal itself is the evidence, whether it holds or not.
        Row r = new Row("seal", "prediction seal intact")
                .expected("SHA-256 over the prediction, its creation time and tool")
                .kind(EvidenceKind.SEAL);
        try {
            PredictionIo.verify(p, "prediction");
            r.prov("prediction seal (sha256 over content + createdAt + tool)");
            r.pass("sha256 " + p.seal().sha256() + " matches (created "
                    + p.seal().createdAt() + " by " + p.seal().tool() + ")");
        } catch (PathproofException ex) {
            r.prov("prediction seal").fail(ex.getMessage());
        }
        rows.add(r.build());
    }

    /** Seed common error 1: a prediction written after the run is not a prediction. */
    void predictedBeforeRun() {
        Row r = new Row("predicted-before-run", "prediction created before the run's first evidence");
        Instant created = null;
        if (p.seal() != null && p.seal().createdAt() != null) {
            try {
                created = Instant.parse(p.seal().createdAt());
            } catch (DateTimeParseException ex) {
                r.expected("seal.createdAt readable")
                        .fail("seal.createdAt '" + p.seal().createdAt() + "' is not an ISO-8601 instant");
                rows.add(r.build());
                recordedSeal();
                return;
            }
        }
        if (created != null && sealedInRun()) {
            inRun(r, created);
            return;
        }
        EvidenceView.Dated start = v.runStart();
        r.expected(created == null ? "a sealed creation time" : "created " + created + " < run start");
        if (created == null) {
            r.fail("the prediction carries no creation time (unsealed)");
        } else if (start == null) {
            r.unproven("run start unknown: no manifest start time, no flight-recorder timestamps");
        } else {
            r.kind(start.what().startsWith("manifest") ? EvidenceKind.MANIFEST : EvidenceKind.FLIGHT_RECORDER)
                    .prov(start.where() + " (" + start.what() + ")");
            if (created.isBefore(start.time())) {
                r.pass("run started " + start.time() + " (" + start.what() + ")");
            } else {
                r.fail("run started " + start.time() + " (" + start.what() + "), before the prediction was created: "
                        + "a prediction written after the run is not a prediction (common error 1)");
            }
        }
        rows.add(r.build());
        recordedSeal();
    }

    /** The prediction was sealed by the run itself (run -- COMMAND): the manifest lists its seal among the run's. */
    private boolean sealedInRun() {
        for (JsonNode rec : v.manifestAt("instrumentation", "predictions")) {
            if (p.seal().sha256() != null
                    && p.seal().sha256().equalsIgnoreCase(rec.path("sha256").asText(""))) {
                return true;
            }
        }
        return false;
    }

    /**
     * A prediction sealed inside the run (at DDP's construction, or at the first backward for the ready-order addendum)
     * must be sealed before the first gradient AllReduce. That collective begins only once every rank has entered it,
     * rank 0 included, so rank 0's entry is a bound the seal has to beat: its first bucket's hook entry in iteration 0,
     * else the start of its first backward (no bucket is reduced before backward starts).
     */
    private void inRun(Row r, Instant created) {
        r.expected("created " + created + " < the first gradient AllReduce (rank 0 enters it)");
        Long ns = null;
        String where = null;
        String what = null;
        EvidenceKind kind = EvidenceKind.HOOK;
        var hooks = v.hooksByRankIteration().get(0);
        List<io.pathproof.evidence.Evidence.BucketRecord> first = hooks == null ? null : hooks.get(0);
        if (first != null) {
            for (var b : first) {
                if (b.readyNs() != null && (ns == null || b.readyNs() < ns)) {
                    ns = b.readyNs();
                    where = EvidenceView.src(b.source());
                    what = "rank 0 entered its first gradient AllReduce (comm hook, iteration 0)";
                }
            }
        }
        if (ns == null) {
            // Without a hook: rank 0's first bucket AllReduce of iteration 0, created when it entered it (flight
            // recorder).
            var flight = v.flightBuckets().get(0);
            var firstFr = flight == null ? null : flight.get(0);
            if (firstFr != null && !firstFr.isEmpty() && firstFr.get(0).createdNs() != null) {
                ns = firstFr.get(0).createdNs();
                where = EvidenceView.src(firstFr.get(0).source());
                what = "rank 0 entered its first gradient AllReduce (flight recorder, iteration 0)";
                kind = EvidenceKind.FLIGHT_RECORDER;
            }
        }
        if (ns == null) {
            for (var st : EvidenceView.list(v.evidence().steps())) {
                if (st.rank() == 0 && st.iteration() == 0 && st.hostPhases() != null) {
                    ns = st.hostPhases().backwardStartNs();
                    where = EvidenceView.src(st.source());
                    what = "rank 0 started its first backward (step phases, iteration 0)";
                    kind = EvidenceKind.STEPS;
                }
            }
        }
        if (ns == null) {
            r.unproven(
                    "no hook record and no step phases of rank 0's iteration 0: when the first AllReduce began is unknown");
        } else {
            Instant t = Instant.ofEpochSecond(0, ns);
            r.kind(kind).prov(where);
            if (created.isBefore(t)) {
                r.pass(what + " at " + t + ", after the seal (sealed in the run)");
            } else {
                r.fail(what + " at " + t + ", before the prediction was sealed: it predicts nothing (common error 1)");
            }
        }
        rows.add(r.build());
        recordedSeal();
    }

    /**
     * The run harness records the seal of the prediction it was started with (manifest): a run made for another
     * prediction does not test this one. Where nothing records a seal (no manifest, or a run started without a
     * prediction) the row is UNPROVEN, saying so.
     */
    private void recordedSeal() {
        Row r = new Row("run-made-for-prediction", "the run records this prediction's seal");
        if (p.seal() == null || p.seal().sha256() == null) {
            rows.add(r.expected("a sealed prediction")
                    .unproven("the prediction is not sealed: no seal to look for")
                    .build());
            return;
        }
        r.expected("sha256 " + p.seal().sha256());
        List<String> found = new ArrayList<>();
        findPredictionSeal(v.manifest(), "", false, found);
        if (found.isEmpty()) {
            rows.add(r.unproven(
                            v.manifest() == null
                                    ? "no manifest: nothing in the evidence says which prediction the run was made for"
                                    : "the run's manifest names no prediction seal (the run was started without --prediction)")
                    .build());
            return;
        }
        r.kind(EvidenceKind.MANIFEST);
        boolean match = false;
        for (String f : found) {
            String[] kv = f.split("=", 2);
            r.prov(v.manifestFile() + " (" + kv[0] + ")");
            match |= kv[1].equalsIgnoreCase(p.seal().sha256());
        }
        if (match) {
            r.pass("the manifest names this seal");
        } else {
            r.fail("the manifest names another prediction: " + found);
        }
        rows.add(r.build());
    }

    private static void findPredictionSeal(JsonNode n, String path, boolean underPrediction, List<String> out) {
        if (n == null) {
            return;
        }
        if (n.isObject()) {
            n.fields().forEachRemaining(en -> {
                if (!en.getKey().equals("inject")) {
                    findPredictionSeal(
                            en.getValue(),
                            path.isEmpty() ? en.getKey() : path + "." + en.getKey(),
                            underPrediction
                                    || en.getKey().toLowerCase(Locale.ROOT).contains("prediction"),
                            out);
                }
            });
        } else if (n.isArray()) {
            // The seals a run made itself are a list (instrumentation.predictions: one per stage).
            for (int i = 0; i < n.size(); i++) {
                findPredictionSeal(n.get(i), path + "[" + i + "]", underPrediction, out);
            }
        } else if (n.isTextual() && underPrediction && n.asText().matches("[0-9a-fA-F]{64}")) {
            out.add(path + "=" + n.asText());
        }
    }

    /**
     * The versions the prediction was made for against the ones the run used (its manifest's {@code versions}; for NCCL
     * also the version NCCL's own log or a flight-recorder dump names): DDP's bucket rules differ between torch
     * releases (docs/ddp-model-notes.md) and NCCL's tuning between NCCL releases, so a prediction for torch 1.13 says
     * nothing about a run on 2.11. Only major.minor.patch count (a build suffix such as {@code +cu130} does not). torch
     * is judged on what the prediction rests on, the family of bucket rules: Debian's 1.13.0a0 runs the rules of a
     * prediction for 1.13.1, and a FAIL would refute a prediction that holds; a version whose rules were never checked
     * against its source is UNPROVEN. Both rows are always listed: UNPROVEN with the reason where the run records no
     * version (DDP's own logging never names one), and nccl-version N/A on a gloo run, which runs no NCCL.
     */
    void versions() {
        for (String lib : List.of("torch", "nccl")) {
            JsonNode want = p.inputs() == null
                    ? null
                    : p.inputs().path("versions").path(lib).path("text");
            boolean wanted = want != null && want.isTextual() && !want.asText().isBlank();
            Row r = new Row(lib + "-version", lib + " version the prediction was made for")
                    .expected(wanted ? want.asText() : "(the prediction names none)");
            if (lib.equals("nccl") && glooReason != null) {
                rows.add(r.na(glooReason).build());
                continue;
            }
            if (!wanted) {
                rows.add(r.unproven("the prediction names no " + lib + " version: nothing to compare the run's with")
                        .build());
                continue;
            }
            EvidenceView.Cited got = recordedVersion(lib);
            if (got == null) {
                r.unproven(unrecorded(lib));
            } else {
                r.kind(got.kind()).prov(got.where());
                Version w = Version.parse(want.asText());
                Version g;
                try {
                    g = Version.parse(got.value());
                } catch (PathproofException ex) {
                    g = null;
                }
                if (g == null) {
                    r.unproven("the run's " + lib + " version '" + got.value() + "' cannot be read");
                } else if (g.compareTo(w) == 0) {
                    r.pass(got.value());
                } else if (lib.equals("torch")) {
                    torchFamily(r, w, g, want.asText(), got.value());
                } else {
                    r.fail(got.value() + ": the prediction was made for " + lib + " " + want.asText()
                            + "; the rows that depend on it ("
                            + (lib.equals("torch") ? "DDP's buckets" : "NCCL's decisions")
                            + ") test another prediction");
                }
            }
            rows.add(r.build());
        }
    }

    /**
     * The run's version of {@code lib}: torch's from the manifest's {@code versions}; NCCL's from what the library said
     * of itself (its log's "NCCL version" line, a flight-recorder dump's comm_lib_version, both the loaded library's
     * ncclGetVersion), else the manifest's. Manifests written before the job read the loaded library's version hold
     * torch.cuda.nccl.version(), the headers torch was built against, which a run with another libnccl contradicts.
     */
    private EvidenceView.Cited recordedVersion(String lib) {
        if (lib.equals("nccl") && v.ncclVersionCited() != null) {
            return v.ncclVersionCited();
        }
        JsonNode got = v.manifestAt("versions", lib);
        if (got.isTextual() && !got.asText().isBlank()) {
            return new EvidenceView.Cited(
                    got.asText(), EvidenceKind.MANIFEST, v.manifestFile() + " (versions." + lib + ")");
        }
        return null;
    }

    /** Why the run's version of {@code lib} is unknown, in the words of what was looked at. */
    private String unrecorded(String lib) {
        String where = v.manifest() == null
                ? "no manifest"
                : !v.manifestAt("versions").isObject()
                        ? "the run's manifest records no versions"
                        : "the run's manifest records no " + lib + " version";
        return where
                + (lib.equals("torch")
                        ? " (DDP's logging and debug log never name torch's version)"
                        : "; no NCCL log or flight-recorder dump names one" + v.torchNcclBuild());
    }

    /** Another torch than predicted: the same family of DDP bucket rules passes, another fails, an unchecked one is UNPROVEN. */
    private static void torchFamily(Row r, Version want, Version got, String wantText, String gotText) {
        String predicted = BucketPlanner.ruleFamily(want);
        String ran = BucketPlanner.ruleFamily(got);
        if (ran == null || predicted == null) {
            r.unproven("predicted for " + wantText + ", ran " + gotText + ": the DDP bucket rules of torch "
                    + (ran == null ? gotText : wantText)
                    + " were not checked against its source, so whether one prediction holds for "
                    + "both is unknown");
        } else if (ran.equals(predicted)) {
            r.pass("predicted for " + wantText + ", ran " + gotText + ": same bucket rules (" + ran + ")");
        } else {
            r.fail("ran " + gotText + ", the prediction was made for torch " + wantText + ": other bucket rules (" + ran
                    + ", not " + predicted + "); the rows that depend on them (DDP's buckets) test another prediction");
        }
    }

    /**
     * The run must be the job the prediction was made for: same backend, same number of ranks. Without these rows a
     * gloo run, or a run of another world size, could pass the rows that do not depend on them.
     */
    void backendAndWorldSize() {
        Row b = new Row("backend", "process-group backend of the run").expected(String.valueOf(p.backend()));
        EvidenceView.Cited cited = v.backendCited();
        String observed = cited == null ? null : cited.value();
        if (observed == null || p.backend() == null) {
            b.unproven(
                    p.backend() == null
                            ? "the prediction names no backend"
                            : "backend not in the evidence (no manifest backend, no DDP logging or debug log backend_name)");
        } else {
            // Cited where it was read: a run without a manifest names its backend in DDP's own record, not in
            // manifest.json.
            b.kind(cited.kind()).prov(cited.where());
            if (observed.equalsIgnoreCase(p.backend())) {
                b.pass(observed);
            } else {
                b.fail(observed + ": the run used another backend than the one predicted");
            }
        }
        rows.add(b.build());

        Row w = new Row("world-size", "number of ranks of the run").expected(Integer.toString(nRanks()));
        Integer ws = null;
        String from = null;
        JsonNode m = v.manifestAt("worldSize");
        EvidenceKind kind = EvidenceKind.MANIFEST;
        if (m.canConvertToInt()) {
            ws = m.asInt();
            from = v.manifestFile() + " (worldSize)";
        } else {
            for (Map.Entry<String, JsonNode> log : new java.util.TreeMap<>(v.ddpLogging()).entrySet()) {
                JsonNode x = log.getValue() == null ? null : log.getValue().get("world_size");
                if (x != null && x.canConvertToInt()) {
                    ws = x.asInt();
                    from = v.ddpLoggingCite(log.getKey(), "world_size");
                    kind = EvidenceKind.DDP_LOGGING;
                    break;
                }
            }
        }
        if (ws == null) {
            for (io.pathproof.evidence.Evidence.DdpLogMessage msg : v.ddpLog("ddp-initialized")) {
                String x = msg.value("world_size");
                if (x != null && x.matches("\\d+")) {
                    ws = Integer.valueOf(x);
                    from = EvidenceView.src(msg.source()) + " (world_size)";
                    kind = EvidenceKind.DDP_LOG;
                    break;
                }
            }
        }
        if (ws == null) {
            w.unproven(
                    "world size not in the evidence (no manifest worldSize, no DDP logging or debug log world_size)");
        } else {
            w.kind(kind).prov(from);
            if (ws == nRanks()) {
                w.pass(ws + " rank(s)");
            } else {
                w.fail(ws + " rank(s): the run is not the job that was predicted");
            }
        }
        rows.add(w.build());
    }
}
