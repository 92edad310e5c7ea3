package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.scenario.DType;
import java.math.RoundingMode;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The per-size table of nccl-model.md §5.3 (NCCL 2.22.3, one fp32 AllReduce, NCCL_MAX_NCHANNELS unset): algorithm,
 * protocol, tuner time (2 decimals where the table gives it; its "8 … 4096" row gives the latency, i.e. the time
 * at 8 bytes) and the launch shape gridX × blockX.
 */
class SizeTableTest {
    private static final Map<String, NcclModel> MODELS = Map.of(
            "v100x4", NcclModel.of(Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.22.3", 4, Map.of())),
            "h200x8",
                    NcclModel.of(Topologies.scenario(
                            Topologies.hopper("NVIDIA H200", 8, 18), "2.22.3", 8, Map.of("NCCL_NVLS_ENABLE", "0"))),
            "h200x4",
                    NcclModel.of(Topologies.scenario(
                            Topologies.hopper("NVIDIA H200", 8, 18), "2.22.3", 4, Map.of("NCCL_NVLS_ENABLE", "0"))));

    @ParameterizedTest(name = "{0} {1} B")
    @CsvSource({
        // model, bytes, algo, proto, time, gridX, blockX
        "v100x4, 8, Ring, LL, 10.20, 1, 128",
        "v100x4, 4096, Ring, LL, , 1, 128",
        "v100x4, 8192, Ring, LL, , 1, 256",
        "v100x4, 16384, Ring, LL, , 1, 512",
        "v100x4, 32768, Ring, LL, , 2, 512",
        "v100x4, 65536, Ring, LL, , 4, 512",
        "v100x4, 131072, Ring, LL, , 8, 512",
        "v100x4, 262144, Ring, LL, 20.28, 12, 512",
        "v100x4, 524288, Ring, LL, 30.36, 12, 512",
        "v100x4, 1048576, Ring, LL128, 39.65, 12, 640",
        "v100x4, 2097152, Ring, LL128, 53.89, 12, 640",
        "v100x4, 4194304, Ring, Simple, 81.23, 12, 544",
        "v100x4, 16777216, Ring, Simple, 238.52, 12, 544",
        "v100x4, 33554432, Ring, Simple, 448.23, 12, 544",
        "v100x4, 134217728, Ring, Simple, 1706.52, 12, 544",
        "h200x8, 8, Ring, LL, 15.00, 1, 128",
        "h200x8, 4096, Ring, LL, , 1, 128",
        "h200x8, 8192, Ring, LL, , 1, 128",
        "h200x8, 16384, Ring, LL, , 1, 256",
        "h200x8, 32768, Ring, LL, , 1, 512",
        "h200x8, 65536, Ring, LL, , 2, 512",
        "h200x8, 131072, Ring, LL, , 4, 512",
        "h200x8, 262144, Ring, LL, , 8, 512",
        "h200x8, 524288, Ring, LL, , 16, 512",
        "h200x8, 1048576, Ring, LL, 28.01, 24, 512",
        "h200x8, 2097152, Ring, LL, 41.03, 24, 512",
        "h200x8, 4194304, Ring, LL128, 62.76, 24, 640",
        "h200x8, 16777216, Ring, LL128, 129.25, 24, 640",
        "h200x8, 33554432, Ring, LL128, 217.90, 24, 640",
        "h200x8, 134217728, Ring, Simple, 708.45, 24, 544",
        "h200x4, 8, Ring, LL, 10.20, 1, 128",
        "h200x4, 4096, Ring, LL, , 1, 128",
        "h200x4, 8192, Ring, LL, , 1, 256",
        "h200x4, 16384, Ring, LL, , 1, 512",
        "h200x4, 32768, Ring, LL, , 2, 512",
        "h200x4, 65536, Ring, LL, , 4, 512",
        "h200x4, 131072, Ring, LL, , 8, 512",
        "h200x4, 262144, Ring, LL, , 16, 512",
        "h200x4, 524288, Ring, LL, , 24, 512",
        "h200x4, 1048576, Ring, LL, , 24, 512",
        "h200x4, 2097152, Ring, LL, , 24, 512",
        "h200x4, 4194304, Ring, LL128, 44.40, 24, 640",
        "h200x4, 16777216, Ring, Simple, 98.71, 24, 544",
        "h200x4, 33554432, Ring, Simple, 168.61, 24, 544",
        "h200x4, 134217728, Ring, Simple, 588.04, 24, 544",
    })
    void sizeRow(String model, long bytes, String algo, String proto, String time, int gridX, int blockX) {
        CollectivePrediction p = MODELS.get(model).allReduce(0, bytes, DType.FLOAT32);
        assertThat(p.algorithm()).isEqualTo(algo);
        assertThat(p.protocol()).isEqualTo(proto);
        if (time != null) {
            assertThat(p.tunerTimeUs().setScale(2, RoundingMode.HALF_UP)).isEqualByComparingTo(time);
        }
        assertThat(p.gridX()).isEqualTo(gridX);
        assertThat(p.blockX()).isEqualTo(blockX);
    }
}
