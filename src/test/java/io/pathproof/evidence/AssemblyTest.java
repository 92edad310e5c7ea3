package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AssemblyTest {
    @Test
    void nameRecognisesBothNcclKernelFamiliesAndNothingElse() {
        assertThat(KernelNames.isNccl("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"))
                .isTrue();
        assertThat(KernelNames.isNccl("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"))
                .isTrue();
        assertThat(KernelNames.isNccl("void ncclKernel_AllGather_RING_LL_Sum_int8_t(ncclWorkElem)"))
                .isTrue();
        assertThat(KernelNames.isNccl("my_ncclKernel_copy(int)")).isFalse();
        assertThat(KernelNames.isNccl("void at::native::vectorized_elementwise_kernel<4>()"))
                .isFalse();
        assertThat(KernelNames.isNccl(null)).isFalse();
    }

    @Test
    void harnessFactsOfEveryDirectoryJoinTheEvidence() {
        Source s = Source.line("run/hooks.jsonl", 1);
        HarnessFacts a = new HarnessFacts(
                new Evidence.Ddp(
                        List.of(new Evidence.BucketRecord(0, 0, 0, 67108864L, true, List.of("w"), 1L, 2L, 3L, s)),
                        Map.of("0", JsonNodeFactory.instance.objectNode()),
                        List.of()),
                List.of(new Evidence.Step(0, 0, 12.5, true, s, null, null)),
                null,
                List.of(),
                JsonNodeFactory.instance.objectNode().put("tool", "pathproof"),
                List.of(new Problem("run/x", 3, "bad")));
        HarnessFacts b = new HarnessFacts(
                new Evidence.Ddp(
                        List.of(new Evidence.BucketRecord(1, 0, 0, 67108864L, true, List.of("w"), 1L, 2L, 3L, s)),
                        Map.of("1", JsonNodeFactory.instance.objectNode()),
                        List.of()),
                List.of(),
                new Evidence.Replicas(true, List.of(), s),
                List.of(new Evidence.PeerAccess(0, 1, true, 40.0, s)),
                null,
                List.of());
        Evidence ev = Assembly.evidence("run", List.of(), List.of(a, b), List.of());
        assertThat(ev.ddp().buckets()).extracting(Evidence.BucketRecord::rank).containsExactly(0, 1);
        assertThat(ev.ddp().logging()).containsOnlyKeys("0", "1");
        assertThat(ev.steps()).hasSize(1);
        assertThat(ev.replicas().equal()).isTrue();
        assertThat(ev.peerAccess()).hasSize(1);
        assertThat(ev.manifest().get("tool").asText()).isEqualTo("pathproof");
        assertThat(ev.problems()).containsExactly(new Problem("run/x", 3, "bad"));
        assertThat(ev.runDir()).isEqualTo("run");
    }

    @Test
    void noEvidenceGivesEmptyFactsNotNulls() {
        Evidence ev = Assembly.evidence(null, List.of(), List.of(), List.of());
        assertThat(ev.nccl()).isNotNull();
        assertThat(ev.nccl().version()).isNull();
        assertThat(ev.nccl().communicators()).isEmpty();
        assertThat(ev.kernels()).isEmpty();
        assertThat(ev.ddp()).isNull();
    }
}
