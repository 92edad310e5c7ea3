package io.pathproof.proofdir;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.pathproof.callgraph.CallGraph;
import io.pathproof.core.StageFile;
import io.pathproof.explain.Explainer;
import java.nio.file.Path;
import java.util.List;

/**
 * {@code explain.json}: the method's questions answered for the baseline run and the call graph's coverage of it.
 * {@code answers} is absent where there was no prediction to answer from (a report of runs alone). The file names no
 * schema: it is read only inside a prove directory, whose {@link Proof} does.
 */
public record Explanation(
        @JsonInclude(JsonInclude.Include.NON_NULL) List<Explainer.Answer> answers, List<CallGraph.Coverage> callgraph) {
    public Explanation {
        answers = answers == null ? null : List.copyOf(answers);
        callgraph = Proof.list(callgraph);
    }

    /** The explanation in {@code file}; exit 3 in one line when it is unreadable. */
    public static Explanation read(Path file) {
        return StageFile.bind(file, StageFile.tree(file), Explanation.class, null);
    }
}
