package io.pathproof.prove;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A run made by prove records prove's command line, but never the fault it hides (diagnose reads manifests). */
class ProveCommandLineTest {
    @Test
    void theFaultNeverReachesARunsCommandLine() {
        assertThat(Launches.withoutFault(
                        List.of("pathproof", "prove", "--fault", "corrupt_grad_rank=1", "--seed", "3")))
                .containsExactly("pathproof", "prove", "--seed", "3");
        assertThat(Launches.withoutFault(List.of("pathproof", "prove", "--fault=NCCL_PROTO=LL", "--out", "p")))
                .containsExactly("pathproof", "prove", "--out", "p");
        // after --, the user's own command is kept as given, even an argument of theirs named --fault
        assertThat(Launches.withoutFault(List.of("pathproof", "prove", "--", "python", "t.py", "--fault", "x")))
                .containsExactly("pathproof", "prove", "--", "python", "t.py", "--fault", "x");
    }
}
