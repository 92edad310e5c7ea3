package io.pathproof.diagnose;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.core.Json;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The one layer vocabulary: each layer has its own name in every file and line, the path is eliminated upstream
 * first, and a run setting's layer is the knob table's, which is what a blind diagnosis names.
 */
class LayerTest {
    @Test
    void everyLayerHasItsOwnNameWrittenAsIsInJsonAndText() throws Exception {
        Set<String> ids = new HashSet<>();
        for (Layer l : Layer.values()) {
            assertThat(ids.add(l.id())).as(l.name()).isTrue();
            assertThat(l.id()).matches("[a-z]+(-[a-z]+)*");
            assertThat(Json.mapper().writeValueAsString(l)).isEqualTo("\"" + l.id() + "\"");
            assertThat(l.toString()).isEqualTo(l.id());
            assertThat(l.owner()).isIn("application", "PyTorch", "NCCL host");
        }
        assertThat(Layer.BUCKETS.id()).isEqualTo("ddp-buckets");
        assertThat(Layer.DDP_CONFIG.owner()).isEqualTo("PyTorch");
        assertThat(Layer.CHANNELS.owner()).isEqualTo("NCCL host");
    }

    @Test
    void thePathIsEliminatedUpstreamFirstAndALayerFeedsOnlyPathLayers() {
        assertThat(Layer.PATH)
                .containsExactly(
                        Layer.BUCKETS,
                        Layer.NETWORK,
                        Layer.ALGORITHM,
                        Layer.PROTOCOL,
                        Layer.TRANSPORT,
                        Layer.CHANNELS,
                        Layer.THREADS);
        for (Layer l : Layer.values()) {
            assertThat(Layer.PATH).as(l.id()).containsAll(l.feeds());
            assertThat(l.feeds()).as(l.id()).doesNotContain(l);
        }
        assertThat(Layer.COMPUTE.feeds()).isEmpty();
    }

    @Test
    void aSettingActsOnTheLayerTheKnobTableGivesIt() {
        assertThat(Layer.actedOnBy("NCCL_MAX_NCHANNELS")).isEqualTo(Layer.CHANNELS);
        assertThat(Layer.actedOnBy("NCCL_PROTO")).isEqualTo(Layer.PROTOCOL);
        assertThat(Layer.actedOnBy("NCCL_ALGO")).isEqualTo(Layer.ALGORITHM);
        assertThat(Layer.actedOnBy("NCCL_P2P_DISABLE")).isEqualTo(Layer.TRANSPORT);
        assertThat(Layer.actedOnBy("NCCL_NTHREADS")).isEqualTo(Layer.THREADS);
        assertThat(Layer.actedOnBy("NCCL_NET_GDR_LEVEL")).isEqualTo(Layer.NETWORK);
        assertThat(Layer.actedOnBy("NCCL_CROSS_NIC")).isEqualTo(Layer.NETWORK);
        assertThat(Layer.actedOnBy("NCCL_PXN_DISABLE")).isEqualTo(Layer.NETWORK);
        assertThat(Layer.actedOnBy("NCCL_IB_HCA")).isEqualTo(Layer.NETWORK);
        assertThat(Layer.actedOnBy("bucket_cap_mb")).isEqualTo(Layer.BUCKETS);
        assertThat(Layer.actedOnBy("find_unused_parameters")).isEqualTo(Layer.DDP_CONFIG);
        assertThat(Layer.actedOnBy("DDP_SOMETHING")).isEqualTo(Layer.CONFIGURATION);
        assertThat(Layer.actedOnBy("exit_rank")).isEqualTo(Layer.CONFIGURATION);
        for (String v :
                new String[] {"NCCL_MAX_NCHANNELS", "NCCL_SHM_DISABLE", "NCCL_LL128_ENABLE", "NCCL_NVLS_ENABLE"}) {
            assertThat(Layer.actedOnBy(v))
                    .as(v)
                    .isEqualTo(Knobs.classify("env." + v).layer());
        }
    }
}
