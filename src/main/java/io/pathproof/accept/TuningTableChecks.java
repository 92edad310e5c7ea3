package io.pathproof.accept;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.nccl.CommunicatorPrediction;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;

/**
 * The tuning-table row: the communicator's cost table as the model computes it (comm->latencies, comm->bandwidths and
 * comm->maxThreads of AllReduce per algorithm and protocol, {@link CommunicatorPrediction#tuningTable}) against the
 * table NCCL's rank 0 printed at init (graph/tuning.cc:504-533@v2.28.9-1). Both are the table itself, before the
 * per-size corrections of ncclTopoGetAlgoTime (tuning.cc:584-600@v2.28.9-1), which enter the tuner-time rows instead.
 *
 * <p>Every printed AllReduce cell is compared: latency and bandwidth within the print's rounding, Max NThreads exactly.
 * An algorithm the communicator cannot run (CollNet without a plugin, NVLS switched off) has bandwidth 0 in NCCL's
 * table and in the model's, so its printed 0.0 agrees; its latency, which NCCL still computes from the zeroed graph
 * (init.cc:1031-1058@v2.28.9-1), is compared like any other.
 */
final class TuningTableChecks extends CheckFamily {
    static final String ID = "tuning-table";
    /** NCCL prints "%8.1f/%6.1f": the printed value is NCCL's float rounded to 0.1, so within 0.05 of it. */
    static final double HALF_STEP = 0.05;
    /** Float noise beyond the half step, relative to the value (the model and NCCL both compute in float). */
    static final double NOISE = 1e-5;

    private static final String FUNCTION = "AllReduce";
    private static final int SHOWN = 3;

    TuningTableChecks(CheckFamily.Context ctx) {
        super(ctx);
    }

    void tuningTable() {
        CommunicatorPrediction cp = p.communicator();
        List<CommunicatorPrediction.TuningCell> predicted = cp == null ? List.of() : cp.tuningTable();
        Row r = new Row(ID, "tuner latency/bandwidth per algorithm × protocol of AllReduce and Max NThreads (init)")
                .expected(expected(predicted));
        if (glooReason != null) {
            rows.add(r.na(glooReason).build());
            return;
        }
        if (nRanks() <= 1) {
            rows.add(r.na("not applicable (1 rank: NCCL computes and prints no tuning table, tuning.cc:247@v2.28.9-1)")
                    .build());
            return;
        }
        if (voided(ID) != null) {
            rows.add(r.unproven(disclaimed(voided(ID))).build());
            return;
        }
        if (predicted.isEmpty()) {
            rows.add(r.unproven("not judged: the prediction holds no tuning table (made before pathproof predicted it;"
                            + " predict again)")
                    .build());
            return;
        }
        List<Evidence.TuningTable> tables = new ArrayList<>();
        for (Evidence.Communicator c : ourCommunicators()) {
            if (c.tuningTable() != null) {
                tables.add(c.tuningTable());
            }
        }
        if (tables.isEmpty()) {
            rows.add(r.unproven("no tuning table in the NCCL log: rank 0 prints it at init with NCCL_DEBUG=INFO and"
                            + " TUNING in NCCL_DEBUG_SUBSYS (graph/tuning.cc:504-533@v2.28.9-1)")
                    .build());
            return;
        }
        Comparison all = new Comparison();
        for (Evidence.TuningTable t : tables) {
            all.compare(predicted, t);
        }
        r.kind(EvidenceKind.NCCL_LOG);
        all.sources.forEach(r::prov);
        String counts = all.cellsEqual + " of " + all.cells + " AllReduce cells and " + all.threadsEqual + " of "
                + all.threads + " Max NThreads agree" + (tables.size() > 1 ? " over " + tables.size() + " tables" : "");
        if (!all.differences.isEmpty()) {
            List<String> shown = all.differences.subList(0, Math.min(SHOWN, all.differences.size()));
            r.fail(String.join("; ", shown)
                    + (all.differences.size() > SHOWN ? "; " + (all.differences.size() - SHOWN) + " more" : "")
                    + " (" + counts + ")");
        } else if (all.missing > 0) {
            r.unproven(counts + "; " + all.missing + " predicted cell(s) not printed (a table cut short), not judged");
        } else {
            r.pass(counts + " (within the print's rounding, ±" + HALF_STEP + ")");
        }
        rows.add(r.build());
    }

    /** The predicted row as NCCL would print it: the algorithms the communicator can run, and how many cannot. */
    private static String expected(List<CommunicatorPrediction.TuningCell> predicted) {
        if (predicted.isEmpty()) {
            return "(no tuning table predicted)";
        }
        List<String> available = new ArrayList<>();
        int unavailable = 0;
        for (CommunicatorPrediction.TuningCell c : predicted) {
            if (c.bandwidthGBs().signum() == 0) {
                unavailable++;
            } else {
                available.add(c.algorithm() + "/" + c.protocol() + " " + printed(c.latencyUs()) + "/"
                        + printed(c.bandwidthGBs()) + " (" + c.maxThreads() + " threads)");
            }
        }
        return FUNCTION + " " + String.join(", ", available) + "; " + unavailable
                + " cell(s) unavailable (bandwidth 0); each within ±" + HALF_STEP + " of NCCL's %8.1f/%6.1f";
    }

    /** A value as NCCL's %.1f prints it (glibc rounds the exact value, ties to even). */
    static String printed(BigDecimal v) {
        return v.setScale(1, RoundingMode.HALF_EVEN).toPlainString();
    }

    /** Whether a predicted value agrees with a printed one: within the half step of the print, plus float noise. */
    static boolean agrees(BigDecimal predicted, BigDecimal printed) {
        double p = predicted.doubleValue();
        double n = printed.doubleValue();
        return Math.abs(p - n) <= HALF_STEP + NOISE * Math.max(1.0, Math.abs(n));
    }

    /** The cells compared over one or more printed tables, and what differed, in table order. */
    private static final class Comparison {
        int cells;
        int cellsEqual;
        int threads;
        int threadsEqual;
        int missing;
        final List<String> differences = new ArrayList<>();
        final List<String> sources = new ArrayList<>();

        void compare(List<CommunicatorPrediction.TuningCell> predicted, Evidence.TuningTable t) {
            List<String> known = new ArrayList<>();
            for (CommunicatorPrediction.TuningCell pc : predicted) {
                known.add(pc.algorithm() + "/" + pc.protocol());
                Evidence.TuningCell printed = t.cell(FUNCTION, pc.algorithm(), pc.protocol());
                if (printed == null) {
                    missing++;
                } else {
                    cells++;
                    source(printed.source());
                    if (agrees(pc.latencyUs(), printed.latencyUs())
                            && agrees(pc.bandwidthGBs(), printed.bandwidthGBs())) {
                        cellsEqual++;
                    } else {
                        differences.add(FUNCTION + " " + pc.algorithm() + "/" + pc.protocol() + " predicted "
                                + printed(pc.latencyUs()) + "/" + printed(pc.bandwidthGBs()) + ", printed "
                                + printed.latencyUs() + "/" + printed.bandwidthGBs() + " ("
                                + EvidenceView.src(printed.source()) + ")");
                    }
                }
                Evidence.TuningThreads th = t.threads(pc.algorithm(), pc.protocol());
                if (th == null) {
                    missing++;
                } else {
                    threads++;
                    source(th.source());
                    if (th.maxThreads() == pc.maxThreads()) {
                        threadsEqual++;
                    } else {
                        differences.add("Max NThreads " + pc.algorithm() + "/" + pc.protocol() + " predicted "
                                + pc.maxThreads() + ", printed " + th.maxThreads() + " ("
                                + EvidenceView.src(th.source()) + ")");
                    }
                }
            }
            // A printed algorithm the model has no cell of: unavailable in NCCL too (bandwidth 0.0) is agreement.
            for (Evidence.TuningCell c : t.cells()) {
                if (!c.function().equals(FUNCTION) || known.contains(c.algorithm() + "/" + c.protocol())) {
                    continue;
                }
                cells++;
                source(c.source());
                if (c.bandwidthGBs().signum() == 0) {
                    cellsEqual++;
                } else {
                    differences.add(FUNCTION + " " + c.algorithm() + "/" + c.protocol() + " printed "
                            + c.latencyUs() + "/" + c.bandwidthGBs() + ", an algorithm the prediction has no cell of ("
                            + EvidenceView.src(c.source()) + ")");
                }
            }
        }

        private void source(io.pathproof.evidence.Source s) {
            String where = EvidenceView.src(s);
            if (where != null && !sources.contains(where)) {
                sources.add(where);
            }
        }
    }
}
