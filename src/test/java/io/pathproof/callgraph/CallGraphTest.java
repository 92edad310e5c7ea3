package io.pathproof.callgraph;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.evidence.Ingest;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** A stage is covered only by the fact that it happened, cited; kinds of evidence alone cover nothing. */
class CallGraphTest {
    static Map<Integer, CallGraph.Coverage> byId(List<CallGraph.Coverage> l) {
        return l.stream().collect(Collectors.toMap(c -> c.stage().id(), Function.identity()));
    }

    @Test
    void theOneRankH200RunShowsInitCollAndHookStagesButNoTuningOrKernelStages() {
        Evidence e = Ingest.read(List.of(Path.of("samples/h200-1rank-accepted/run")));
        Map<Integer, CallGraph.Coverage> c = byId(CallGraph.coverage(e));
        assertThat(c).hasSize(35);
        assertThat(c.get(4).covered()).isTrue();
        assertThat(c.get(4).citations().get(0)).contains("hook-rank0.jsonl:");
        assertThat(c.get(7).covered()).isTrue(); // the communicator's INIT lines
        assertThat(c.get(7).citations().get(0)).contains("nccl-rank0.log:");
        assertThat(c.get(10).citations().get(0)).matches(".*nccl-rank0.log:\\d+");
        // One rank: NCCL prints no TUNING line and launches no kernel. The nccl-log and kernel-trace kinds are present,
        // which used to cover these stages; their own facts are not, so they are modelled only.
        assertThat(c.get(13).present()).contains(EvidenceKind.NCCL_LOG);
        assertThat(c.get(13).covered()).isFalse();
        assertThat(c.get(13).status()).startsWith("modelled only: no tuning-line");
        assertThat(c.get(17).covered()).isFalse();
        assertThat(c.get(20).covered()).isFalse();
        assertThat(c.get(8).status()).startsWith("modelled only: no evidence");
        assertThat(c.get(35).covered()).isTrue();
        for (CallGraph.Coverage x : c.values()) {
            assertThat(x.covered())
                    .as("stage %d", x.stage().id())
                    .isEqualTo(!x.citations().isEmpty());
        }
    }

    @Test
    void withoutARunNothingIsCovered() {
        assertThat(CallGraph.coverage(null)).allSatisfy(c -> {
            assertThat(c.covered()).isFalse();
            assertThat(c.status()).isEqualTo("no run");
        });
    }
}
