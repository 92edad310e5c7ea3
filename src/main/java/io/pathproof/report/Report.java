package io.pathproof.report;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.accept.Acceptance;
import io.pathproof.accept.AcceptanceTable;
import io.pathproof.callgraph.CallGraph;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.core.StageFile;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.FixVerification;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import io.pathproof.explain.Explainer;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import io.pathproof.proofdir.Explanation;
import io.pathproof.proofdir.Proof;
import io.pathproof.rundir.RunManifest;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The public entry of the report room. {@link #load} gathers what a report shows from a prove directory, or from run
 * directories (baseline, variant, fixed, in that order) plus a sealed prediction and saved acceptance / diagnosis /
 * verify-fix JSON; what is missing and can be computed from the rest (acceptance from prediction and baseline, the
 * diagnosis from two runs, explain and the call graph) is computed here with the owning rooms' public entries.
 * {@link #write} writes report.html, report.md, report.json and report.junit.xml.
 */
public final class Report {
    private Report() {}

    /**
     * The documents a report shows, as the records of the rooms that write them: prove's proof (null when the report is
     * of runs alone), the acceptance, the diagnosis, the fix verification and the explanation, each null where there is
     * none. {@code filed}: the same documents as report.json carries them.
     */
    public record Documents(
            Proof proof,
            AcceptanceTable acceptance,
            Diagnosis diagnosis,
            FixVerification verifyFix,
            Explanation explain,
            Filed filed) {
        static final Documents NONE = new Documents(null, null, null, null, null, Filed.NONE);
    }

    /**
     * The documents as report.json archives them: a file's JSON as the file holds it, a document computed here as its
     * record writes it. A file of an older writer of the same schema keeps its own keys there, not nulls for the keys
     * it lacks, so report.json says what the file says.
     */
    public record Filed(JsonNode proof, JsonNode acceptance, JsonNode diagnosis, JsonNode verifyFix, JsonNode explain) {
        static final Filed NONE = new Filed(null, null, null, null, null);
    }

    /**
     * What a report shows: the {@link Documents} plus the evidence of each run, by key, for the charts and tables.
     * {@code roles}: each run's configuration (baseline, variant, fixed, baselineAgain), {@code labels}: its name on
     * the page. {@code steps}: each run's step times and its one median, computed here once from the diagnose room's
     * definition ({@link Diagnosis#stepTimes}) — the table, the charts and the text all read these — and
     * {@code pooled}: the runs of each configuration that has several, pooled as diagnose pools them.
     */
    public record Source(
            Documents documents,
            Map<String, Evidence> runs,
            Map<String, String> runDirs,
            List<String> inputs,
            Map<String, String> roles,
            Map<String, String> labels,
            Map<String, Diagnosis.StepTimes> steps,
            Map<String, Diagnosis.StepTimes> pooled) {
        public Source {
            documents = documents == null ? Documents.NONE : documents;
            runs = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(runs));
            runDirs = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(runDirs));
            inputs = List.copyOf(inputs);
            Map<String, String> r = new LinkedHashMap<>();
            Map<String, String> l = new LinkedHashMap<>();
            Map<String, Diagnosis.StepTimes> st = new LinkedHashMap<>();
            Map<String, List<Evidence>> byRole = new LinkedHashMap<>();
            for (Map.Entry<String, Evidence> en : runs.entrySet()) {
                String role =
                        roles != null && roles.containsKey(en.getKey()) ? roles.get(en.getKey()) : roleOf(en.getKey());
                r.put(en.getKey(), role);
                l.put(
                        en.getKey(),
                        labels != null && labels.containsKey(en.getKey())
                                ? labels.get(en.getKey())
                                : Sections.runName(en.getKey()));
                st.put(
                        en.getKey(),
                        steps != null && steps.containsKey(en.getKey())
                                ? steps.get(en.getKey())
                                : Diagnosis.stepTimes(en.getValue()));
                byRole.computeIfAbsent(role, k -> new ArrayList<>()).add(en.getValue());
            }
            Map<String, Diagnosis.StepTimes> pl = new LinkedHashMap<>();
            for (Map.Entry<String, List<Evidence>> en : byRole.entrySet()) {
                if (en.getValue().size() > 1) {
                    pl.put(
                            en.getKey(),
                            pooled != null && pooled.containsKey(en.getKey())
                                    ? pooled.get(en.getKey())
                                    : Diagnosis.stepTimes(en.getValue()));
                }
            }
            roles = java.util.Collections.unmodifiableMap(r);
            labels = java.util.Collections.unmodifiableMap(l);
            steps = java.util.Collections.unmodifiableMap(st);
            pooled = java.util.Collections.unmodifiableMap(pl);
        }

        /** A source whose runs are named by their role alone (run directories, or a proof that lists no runs). */
        public Source(
                Documents documents, Map<String, Evidence> runs, Map<String, String> runDirs, List<String> inputs) {
            this(documents, runs, runDirs, inputs, null, null, null, null);
        }

        public Proof proof() {
            return documents.proof();
        }

        public AcceptanceTable acceptance() {
            return documents.acceptance();
        }

        public Diagnosis diagnosis() {
            return documents.diagnosis();
        }

        public FixVerification verifyFix() {
            return documents.verifyFix();
        }

        public Explanation explain() {
            return documents.explain();
        }

        /** The configuration of a run by the key prove gives it: "fixedAgain" is the fixed configuration run again. */
        static String roleOf(String key) {
            return key.equals("fixedAgain") ? "fixed" : key;
        }

        // A run's emulation and the proof's are the object run.Emulation writes into a manifest; its room reads it
        // typed.
        boolean emulated() {
            for (Evidence e : runs.values()) {
                if (e.manifest() != null
                        && e.manifest().path("emulation").path("emulated").asBoolean(false)) {
                    return true;
                }
            }
            return proof() != null
                    && proof().emulation() != null
                    && proof().emulation().path("emulated").asBoolean(false);
        }

        String emulationNote() {
            for (Evidence e : runs.values()) {
                if (e.manifest() != null && e.manifest().path("emulation").hasNonNull("note")) {
                    return e.manifest().path("emulation").path("note").asText();
                }
            }
            return "emulated: NCCL decisions real, timings not physical";
        }
    }

    private static final List<String> LABELS = List.of("baseline", "variant", "fixed");

    /** Reads the inputs of {@code report DIR…}. Anything unreadable is a one-line bad-input error naming it. */
    public static Source load(List<Path> inputs) {
        if (inputs == null || inputs.isEmpty()) {
            throw PathproofException.usage("report: give a prove directory, or run directories and JSON files");
        }
        List<String> names = inputs.stream().map(Path::toString).toList();
        if (inputs.size() == 1 && Proof.in(inputs.get(0))) {
            return fromProof(inputs.get(0), names);
        }
        Map<String, Evidence> runs = new LinkedHashMap<>();
        Map<String, String> dirs = new LinkedHashMap<>();
        Given given = new Given();
        for (Path in : inputs) {
            if (Files.isDirectory(in)) {
                if (!Files.isRegularFile(in.resolve(RunManifest.FILE))) {
                    throw PathproofException.badInput(in + ": neither a prove directory (" + Proof.FILE
                            + ") nor a run directory (" + RunManifest.FILE + ")");
                }
                if (runs.size() == LABELS.size()) {
                    throw PathproofException.usage(
                            "report: at most three run directories (baseline, variant, fixed): " + in);
                }
                String label = LABELS.get(runs.size());
                runs.put(label, Ingest.readRun(in));
                dirs.put(label, in.toString());
            } else {
                given.add(in);
            }
        }
        if (given.prediction == null && dirs.containsKey("baseline")) {
            // A run of `run -- COMMAND` sealed its own prediction, which accept takes by default: so does the report.
            Path own = io.pathproof.rundir.Vocabulary.ownPrediction(Path.of(dirs.get("baseline")));
            if (own != null) {
                given.prediction = PredictionIo.readVerified(own);
            }
        }
        return new Source(given.complete(runs), runs, dirs, names);
    }

    /** A stage document as the report has it: the record it reads and the JSON report.json archives. */
    private record Doc<T>(T value, JsonNode json) {
        /** A file's record, bound to the schema its room writes, and the file's own JSON. */
        static <T> Doc<T> filed(Path file, JsonNode tree, Class<T> type, String schema) {
            return new Doc<>(StageFile.bind(file, tree, type, schema), tree);
        }

        /** A document computed here: its record and the JSON the record writes. */
        static <T> Doc<T> computed(T value) {
            return new Doc<>(value, Json.mapper().valueToTree(value));
        }

        static <T> T valueOf(Doc<T> d) {
            return d == null ? null : d.value();
        }

        static JsonNode jsonOf(Doc<?> d) {
            return d == null ? null : d.json();
        }
    }

    /** The JSON files given beside run directories, each kept by the schema it names. */
    private static final class Given {
        private Prediction prediction;
        private Doc<AcceptanceTable> acceptance;
        private Doc<Diagnosis> diagnosis;
        private Doc<FixVerification> verify;

        void add(Path in) {
            JsonNode n = StageFile.tree(in);
            String schema = StageFile.schemaOf(n);
            if (schema.startsWith("pathproof.prediction/")) {
                prediction = PredictionIo.readVerified(in);
            } else if (schema.startsWith("pathproof.acceptance/")) {
                acceptance = Doc.filed(in, n, AcceptanceTable.class, AcceptanceTable.SCHEMA);
            } else if (schema.startsWith("pathproof.diagnosis/")) {
                diagnosis = Doc.filed(in, n, Diagnosis.class, Diagnosis.SCHEMA);
            } else if (schema.startsWith("pathproof.verify-fix/")) {
                verify = Doc.filed(in, n, FixVerification.class, FixVerification.SCHEMA);
            } else {
                throw PathproofException.badInput(
                        in + ": not a prediction, acceptance, diagnosis or verify-fix JSON (schema '" + schema + "')");
            }
        }

        /** What was given, with what is missing computed from the runs and the prediction. */
        Documents complete(Map<String, Evidence> runs) {
            Evidence baseline = runs.get("baseline");
            Diagnosis typed = null;
            if (acceptance == null && prediction != null && baseline != null) {
                acceptance = Doc.computed(Acceptance.accept(prediction, baseline));
            }
            if (diagnosis == null && runs.containsKey("variant")) {
                typed = Diagnosis.diagnose(baseline, runs.get("variant"));
                diagnosis = Doc.computed(typed);
            }
            if (verify == null && runs.containsKey("fixed")) {
                verify = Doc.computed(Diagnosis.verifyFix(baseline, runs.get("variant"), runs.get("fixed")));
            }
            Doc<Explanation> explain = null;
            if (baseline != null || prediction != null) {
                List<Explainer.Answer> answers =
                        prediction == null ? null : Explainer.explain(prediction, baseline, typed);
                explain = Doc.computed(new Explanation(answers, CallGraph.coverage(baseline)));
            }
            return documents(null, acceptance, diagnosis, verify, explain);
        }
    }

    private static Source fromProof(Path dir, List<String> names) {
        Doc<Proof> proof = optional(dir, Proof.FILE, Proof.class, Proof.SCHEMA);
        Proof.Files files =
                proof.value().files() == null ? NO_FILES : proof.value().files();
        Doc<AcceptanceTable> acceptance =
                optional(dir, files.acceptance(), AcceptanceTable.class, AcceptanceTable.SCHEMA);
        Doc<Diagnosis> diagnosis = optional(dir, files.diagnosis(), Diagnosis.class, Diagnosis.SCHEMA);
        String verifyFix = files.verifyFixAgain() != null ? files.verifyFixAgain() : files.verifyFix();
        Doc<FixVerification> verify = optional(dir, verifyFix, FixVerification.class, FixVerification.SCHEMA);
        Doc<Explanation> explain = optional(dir, files.explain(), Explanation.class, null);
        Documents docs = documents(proof, acceptance, diagnosis, verify, explain);
        Map<String, Evidence> runs = new LinkedHashMap<>();
        Map<String, String> dirs = new LinkedHashMap<>();
        if (!proof.value().runs().isEmpty()) {
            // Every run prove made, in the order it made them (its sequential extension adds runs of each
            // configuration).
            Map<String, String> roles = new LinkedHashMap<>();
            Map<String, String> shown = new LinkedHashMap<>();
            Map<String, Integer> count = new java.util.HashMap<>();
            for (Proof.Run r : proof.value().runs()) {
                String role = r.role() == null ? "" : r.role();
                String d = r.dir() == null ? "" : r.dir();
                String label = r.label() == null ? d : r.label();
                int k = count.merge(role, 1, Integer::sum);
                // The first run of each configuration is keyed by its role alone (the page's ids and the chart data use
                // them).
                String key = k == 1 ? role : role.equals("fixed") && k == 2 ? "fixedAgain" : label.replace(' ', '-');
                if (!d.isEmpty() && Files.isDirectory(dir.resolve(d))) {
                    runs.put(key, Ingest.readRun(dir.resolve(d)));
                    dirs.put(key, d);
                    roles.put(key, role);
                    shown.put(key, label);
                }
            }
            return new Source(docs, runs, dirs, names, roles, shown, null, null);
        }
        // A/B/A/B: prove re-runs the baseline right after the fixed run, and the fixed configuration once more after
        // that
        // when the adjacent pair fails only on step time; the last pair decides, so the page shows every run it made.
        Map<String, String> byLabel = new LinkedHashMap<>();
        byLabel.put("baseline", files.baseline());
        byLabel.put("variant", files.variant());
        byLabel.put("fixed", files.fixed());
        byLabel.put("baselineAgain", files.baselineAgain());
        byLabel.put("fixedAgain", files.fixedAgain());
        byLabel.forEach((label, d) -> {
            if (d != null && Files.isDirectory(dir.resolve(d))) {
                runs.put(label, Ingest.readRun(dir.resolve(d)));
                dirs.put(label, d);
            }
        });
        return new Source(docs, runs, dirs, names);
    }

    private static Documents documents(
            Doc<Proof> p, Doc<AcceptanceTable> a, Doc<Diagnosis> d, Doc<FixVerification> v, Doc<Explanation> e) {
        return new Documents(
                Doc.valueOf(p),
                Doc.valueOf(a),
                Doc.valueOf(d),
                Doc.valueOf(v),
                Doc.valueOf(e),
                new Filed(Doc.jsonOf(p), Doc.jsonOf(a), Doc.jsonOf(d), Doc.jsonOf(v), Doc.jsonOf(e)));
    }

    private static final Proof.Files NO_FILES =
            new Proof.Files(null, null, null, null, null, null, null, null, null, null, null);

    /** The document a proof names, or null where it names none or the file is not there. */
    private static <T> Doc<T> optional(Path dir, String name, Class<T> type, String schema) {
        if (name == null) {
            return null;
        }
        Path f = dir.resolve(name);
        return Files.isRegularFile(f) ? Doc.filed(f, StageFile.tree(f), type, schema) : null;
    }

    /** Writes the four files into {@code outDir}; returns the path of report.html. */
    public static Path write(Source src, Path outDir) {
        try {
            Files.createDirectories(outDir);
            Path html = outDir.resolve("report.html");
            // Paths are shown relative to the report (a proof directory travels; the machine's folders mean nothing
            // elsewhere).
            List<String> bases = new ArrayList<>();
            bases.add(outDir.toAbsolutePath().normalize() + "/");
            bases.add(Path.of("").toAbsolutePath().normalize() + "/");
            // A prove directory given as a relative path (report samples/x) is read through that path: strip it as
            // well.
            String given = outDir.normalize().toString();
            if (!outDir.isAbsolute() && !given.isEmpty()) {
                bases.add(given + "/");
            }
            Files.writeString(html, relative(Page.html(src), bases), StandardCharsets.UTF_8);
            Files.writeString(
                    outDir.resolve("report.md"), relative(Texts.markdown(src), bases), StandardCharsets.UTF_8);
            Files.writeString(outDir.resolve("report.json"), relative(Texts.json(src), bases), StandardCharsets.UTF_8);
            Files.writeString(
                    outDir.resolve("report.junit.xml"), relative(Texts.junit(src), bases), StandardCharsets.UTF_8);
            return html;
        } catch (IOException e) {
            throw PathproofException.badInput("report: cannot write into " + outDir + ": " + e.getMessage());
        }
    }

    private static String relative(String text, List<String> bases) {
        String t = text;
        for (String b : bases) {
            if (b.length() > 1) {
                t = t.replace(b, "");
            }
        }
        return t;
    }

    /** The overall verdict shown first: prove's, else the acceptance's, else the diagnosis's conclusion. */
    static String verdict(Source s) {
        if (s.proof() != null && s.proof().verdict() != null) {
            return s.proof().verdict();
        }
        if (s.acceptance() != null) {
            return "acceptance " + Sections.t(s.acceptance().verdict());
        }
        if (s.diagnosis() != null) {
            return "diagnosis: " + Sections.t(s.diagnosis().conclusion());
        }
        return "no verdict";
    }

    static boolean good(Source s) {
        String v = verdict(s);
        return v.equals("PROVEN") || v.equals("acceptance PASS") || v.equals("diagnosis: no change");
    }

    static List<String> reasons(Source s) {
        return s.proof() == null ? List.of() : s.proof().reasons();
    }
}
