package io.pathproof.accept;

import io.pathproof.evidence.EvidenceKind;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The shared row builder of every check family: a row under construction with its id, check, expected and observed
 * text, verdict, kinds of evidence and provenance. A PASS with no kind of evidence is built as UNPROVEN.
 */
final class Row {
    private static final int MAX_PROVENANCE = 8;

    private final String id;
    private String check;
    private String expected = "";
    private String observed = "";
    private Verdict verdict = Verdict.UNPROVEN;
    private final Set<EvidenceKind> kinds = new LinkedHashSet<>();
    private final List<String> provenance = new ArrayList<>();
    private int dropped;

    Row(String id, String check) {
        this.id = id;
        this.check = check;
    }

    /** Renames the check (a row split into family and mechanism says which half it is). */
    Row check(String s) {
        check = s;
        return this;
    }

    Row expected(String s) {
        expected = s;
        return this;
    }

    Row kind(EvidenceKind k) {
        kinds.add(k);
        return this;
    }

    Row prov(String s) {
        if (s == null || provenance.contains(s)) {
            return this;
        }
        if (provenance.size() < MAX_PROVENANCE) {
            provenance.add(s);
        } else {
            dropped++;
        }
        return this;
    }

    int provenanceSize() {
        return provenance.size();
    }

    /** The verdict and what the run showed that decided it. */
    Row judged(Verdict v, String obs) {
        verdict = v;
        observed = obs;
        return this;
    }

    Row pass(String obs) {
        return judged(Verdict.PASS, obs);
    }

    Row fail(String obs) {
        return judged(Verdict.FAIL, obs);
    }

    Row unproven(String obs) {
        return judged(Verdict.UNPROVEN, obs);
    }

    Row na(String obs) {
        return judged(Verdict.NOT_APPLICABLE, obs);
    }

    AcceptanceRow build() {
        List<String> prov = new ArrayList<>(provenance);
        if (dropped > 0) {
            prov.add("… and " + dropped + " more");
        }
        Verdict vd = verdict;
        if (vd == Verdict.PASS && kinds.isEmpty()) {
            vd = Verdict.UNPROVEN;
        }
        return new AcceptanceRow(id, check, expected, observed, vd, new ArrayList<>(kinds), prov);
    }
}
