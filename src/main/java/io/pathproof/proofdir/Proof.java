package io.pathproof.proofdir;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.accept.AcceptanceTable;
import io.pathproof.core.StageFile;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.Layer;
import java.nio.file.Path;
import java.util.List;

/**
 * {@value #FILE}: what prove did and found, in the order it did it — the backend it chose, its phases, the files it
 * wrote, the sealed fault, the runs it made and the looks that decided them, the reveal and the verdict. Prove writes
 * it once, at the end; report reads it back. {@code emulation} is the object {@code run.Emulation} gives a run's
 * manifest, kept as it is. {@code drift} is there only where the fixed run was judged beside the baseline run again.
 * A file of the same schema from an older prove lacks some keys: they read as null (lists as empty).
 */
public record Proof(
        String schema,
        String tool,
        String createdAt,
        String scenario,
        List<String> commandLine,
        List<Phase> phases,
        Files files,
        BackendChoice backendChoice,
        String backend,
        int worldSize,
        JsonNode emulation,
        SealedFault fault,
        List<Run> runs,
        Sequence sequence,
        @JsonInclude(JsonInclude.Include.NON_NULL) Drift drift,
        List<Sample> recorded,
        Reveal reveal,
        String verdict,
        int exitCode,
        List<String> reasons) {
    public static final String SCHEMA = "pathproof.proof/1";

    public static final String FILE = "proof.json";

    public Proof {
        commandLine = list(commandLine);
        phases = list(phases);
        runs = list(runs);
        recorded = list(recorded);
        reasons = list(reasons);
    }

    /** Whether {@code dir} is a prove directory (it holds {@value #FILE}). */
    public static boolean in(Path dir) {
        return java.nio.file.Files.isRegularFile(dir.resolve(FILE));
    }

    /** The proof in {@code dir}; exit 3 in one line when it is unreadable or of another schema. */
    public static Proof read(Path dir) {
        return StageFile.read(dir.resolve(FILE), Proof.class, SCHEMA);
    }

    static <T> List<T> list(List<T> l) {
        return l == null ? List.of() : List.copyOf(l);
    }

    /** One step of the proof as it ended: its name, the milliseconds since prove started, one line of what it found. */
    public record Phase(String name, long elapsedMs, String detail) {}

    /**
     * The files and run directories of the prove directory by what they are, relative to it; one that prove did not
     * make is absent. {@code verifyFixAgain} is the last look's verification, where prove looked more than once.
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    public record Files(
            String prediction,
            String baseline,
            String acceptance,
            String variant,
            String diagnosis,
            String fixed,
            String baselineAgain,
            String fixedAgain,
            String verifyFix,
            String verifyFixAgain,
            String explain) {
        public static final String PREDICTION = "prediction.json";
        public static final String ACCEPTANCE = "acceptance.json";
        public static final String DIAGNOSIS = "diagnosis.json";
        public static final String VERIFY_FIX = "verify-fix.json";
        public static final String EXPLAIN = "explain.json";
    }

    /** How the backend was chosen: as asked, the branch taken, and one line of why. */
    public record BackendChoice(String requested, String branch, String reason) {}

    /**
     * The fault as sealed before the variant ran: the SHA-256 of its record, that record's file, whether it was drawn at
     * random (with {@code seed}) and the kinds it was drawn from.
     */
    public record SealedFault(String sealSha256, String file, boolean drawn, Long seed, List<String> catalogue) {
        public SealedFault {
            catalogue = list(catalogue);
        }
    }

    /** One run prove made: its configuration (baseline, variant, fixed, baselineAgain), directory and label. */
    public record Run(String role, String dir, String label) {}

    /** The step-time sequence: at most {@code maxRuns} runs of each configuration, its margin and rule, every look. */
    public record Sequence(int maxRuns, Double margin, String rule, List<Look> looks) {
        public Sequence {
            looks = list(looks);
        }
    }

    /** One look: which sequence, its number of the planned ones, the runs pooled per side, and what it found. */
    public record Look(
            String sequence,
            int look,
            int looks,
            int baselineRuns,
            int otherRuns,
            String verdict,
            Double ratio,
            Double ruleLow,
            Double ruleHigh,
            Double level,
            Integer stepsNeeded) {}

    /**
     * The fixed run judged again beside the baseline run again: what the first look said, the two baselines against
     * each other (how far the machine's load moved; absent when there was no baseline again), and the last look.
     */
    public record Drift(
            String firstVerification,
            @JsonInclude(JsonInclude.Include.NON_NULL) Diagnosis.Regression baselineVsBaselineAgain,
            @JsonInclude(JsonInclude.Include.NON_NULL) String baselineVsBaselineAgainConclusion,
            boolean fixedAgainstBaselineAgain,
            String verdict) {}

    /** A committed GPU sample accepted again: its name, label, day, device, verdict and table (null: unreadable). */
    public record Sample(
            String name, String label, String recordedOn, String device, String verdict, AcceptanceTable acceptance) {}

    /**
     * The sealed fault beside the blind diagnosis: the fault injected, what was diagnosed, whether the layers match,
     * the fix applied, whether it was verified and the verification's verdict, and whether the seal still held.
     */
    public record Reveal(
            Injected injected,
            Diagnosed diagnosed,
            boolean match,
            FixApplied fix,
            boolean fixed,
            String fixVerdict,
            boolean faultSealVerified) {}

    /** The injected fault: its kind, its K=V settings, the layer it acts on, what it does. */
    public record Injected(String kind, List<String> settings, Layer layer, String description) {
        public Injected {
            settings = list(settings);
        }
    }

    /** The diagnosis as the reveal shows it; owner, change and fix are null where no root cause was named. */
    public record Diagnosed(String conclusion, Layer layer, String owner, String change, String fix) {}

    /** The diagnosed fix: the settings undone, those kept, and why. */
    public record FixApplied(List<String> removed, List<String> kept, String reason) {
        public FixApplied {
            removed = list(removed);
            kept = list(kept);
        }
    }
}
