package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Both of NCCL's spellings of an algorithm or protocol, and its id, name one constant. */
class NcclNamesTest {
    @Test
    void anIdNamesTheAlgorithmOfNcclCommonH() {
        assertThat(NcclAlgorithm.canonical(null, 1)).isEqualTo("RING");
        assertThat(NcclAlgorithm.canonical("Tree", 6)).isEqualTo("PAT");
        assertThat(NcclAlgorithm.ofId(5)).isEqualTo(NcclAlgorithm.NVLS_TREE);
        assertThat(NcclAlgorithm.ofId(7)).isNull();
        assertThat(NcclProtocol.canonical(null, 2)).isEqualTo("SIMPLE");
        assertThat(NcclProtocol.ofId(-1)).isNull();
    }

    @Test
    void theTuningTablesMixedCaseAndTheTuningLinesUpperCaseAreOneName() {
        assertThat(NcclAlgorithm.canonical("CollNetDirect", null)).isEqualTo("COLLNET_DIRECT");
        assertThat(NcclAlgorithm.canonical("COLLNET_CHAIN", null)).isEqualTo("COLLNET_CHAIN");
        assertThat(NcclAlgorithm.canonical(" NVLSTree ", 9)).isEqualTo("NVLS_TREE");
        assertThat(NcclAlgorithm.parse("ring")).isEqualTo(NcclAlgorithm.RING);
        assertThat(NcclProtocol.canonical("Simple", null)).isEqualTo("SIMPLE");
        assertThat(NcclProtocol.parse("ll128")).isEqualTo(NcclProtocol.LL128);
    }

    @Test
    void aNameNcclDoesNotKnowIsKeptAndNoNameIsNull() {
        assertThat(NcclAlgorithm.canonical("MyTuner", null)).isEqualTo("MYTUNER");
        assertThat(NcclAlgorithm.parse("MyTuner")).isNull();
        assertThat(NcclAlgorithm.canonical(null, null)).isNull();
        assertThat(NcclProtocol.canonical(null, 3)).isNull();
    }

    @Test
    void ncclAlgoStrAndNcclProtoStrAreListedById() {
        assertThat(NcclAlgorithm.ncclNames())
                .containsExactly("Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT");
        assertThat(NcclProtocol.ncclNames()).containsExactly("LL", "LL128", "Simple");
    }
}
