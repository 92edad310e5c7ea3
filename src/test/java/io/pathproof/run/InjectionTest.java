package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import java.util.List;
import org.junit.jupiter.api.Test;

class InjectionTest {
    @Test
    void splitsEnvironmentFromKnobs() {
        Injection i = Injection.parse(
                List.of(
                        "NCCL_MAX_NCHANNELS=1",
                        "TORCH_NCCL_ENABLE_TIMING=1",
                        "DDP_SET_LAST_BUCKET_CAP=1",
                        "bucket_cap_mb=16",
                        "exit_rank=1@3",
                        "find_unused_parameters=true",
                        "compute_delay_ms=2.5",
                        "corrupt_grad_rank=0"),
                2);
        assertThat(i.env())
                .containsExactly(
                        java.util.Map.entry("DDP_SET_LAST_BUCKET_CAP", "1"),
                        java.util.Map.entry("NCCL_MAX_NCHANNELS", "1"),
                        java.util.Map.entry("TORCH_NCCL_ENABLE_TIMING", "1"));
        assertThat(i.knobs())
                .containsOnlyKeys(
                        "bucket_cap_mb",
                        "exit_rank",
                        "find_unused_parameters",
                        "compute_delay_ms",
                        "corrupt_grad_rank");
        assertThat(i.knobArgs()).containsSubsequence("--knob", "exit_rank=1@3");
    }

    @Test
    void badNamesAndValuesAreUsageErrorsNamingThem() {
        expectUsage("nccl_debug=INFO", "'nccl_debug': unknown name");
        expectUsage("NCCL_max=1", "not a valid NCCL_*/TORCH_*/DDP_* variable name");
        expectUsage("NCCL_ALGO", "expected K=V");
        expectUsage("LD_PRELOAD=/x.so", "'LD_PRELOAD': unknown name");
        expectUsage("exit_rank=4@1", "rank must be in 0..1");
        expectUsage("exit_rank=1", "expected R@I");
        expectUsage("bucket_cap_mb=0", "positive number");
        expectUsage("compute_delay_ms=soon", "not a number");
        expectUsage("find_unused_parameters=yes", "true or false");
    }

    private static void expectUsage(String item, String message) {
        assertThatThrownBy(() -> Injection.parse(List.of(item), 2))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining(message)
                .satisfies(e -> assertThat(((PathproofException) e).exitCode()).isEqualTo(ExitCode.USAGE));
    }
}
