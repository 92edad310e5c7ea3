package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Issue 12: the older ncu CSV, one metric per row, grid and block only in section "Launch Statistics". */
class NcuOldLayoutTest {
    private static final String HEAD =
            "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Kernel Time\","
                    + "\"Context\",\"Stream\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";

    private static String row(int id, String kernel, String section, String metric, String unit, String value) {
        return "\"" + id + "\",\"4242\",\"python3\",\"127.0.0.1\",\"" + kernel
                + "\",\"2021-Mar-04 10:00:00\",\"1\",\"7\",\"" + section + "\",\"" + metric + "\",\"" + unit + "\",\""
                + value + "\"\n";
    }

    @Test
    void launchStatisticsRowsGiveTheNcclKernelsGridAndBlock() {
        String nccl = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)";
        String other = "void at::native::vectorized_elementwise_kernel<4>(int)";
        String csv = "==PROF== Connected to process 4242\n" + HEAD
                + row(0, nccl, "GPU Speed Of Light", "Duration", "usecond", "1,234.50")
                + row(0, nccl, "Launch Statistics", "Block Size", "", "544")
                + row(0, nccl, "Launch Statistics", "Grid Size", "", "24")
                + row(1, other, "Launch Statistics", "Block Size", "", "128")
                + row(1, other, "Launch Statistics", "Grid Size", "", "16,384")
                + row(2, nccl, "Launch Statistics", "Block Size", "", "(640, 1, 1)")
                + row(2, nccl, "Launch Statistics", "Grid Size", "", "(2, 1, 1)");
        Evidence ev = Read.evidence(FileKind.NCU, "ncu.csv", csv);
        assertThat(ev.problems()).isEmpty();
        assertThat(ev.kernels()).hasSize(3);
        Evidence.Kernel k = ev.kernels().get(0);
        assertThat(k.nccl()).isTrue();
        assertThat(k.grid()).containsExactly(24, 1, 1);
        assertThat(k.block()).containsExactly(544, 1, 1);
        assertThat(k.durUs()).isEqualByComparingTo("1234.50");
        assertThat(k.source().line()).isEqualTo(3);
        // One number is the product of three dimensions: not a shape for a kernel that may use y and z.
        assertThat(ev.kernels().get(1).grid()).isNull();
        assertThat(ev.kernels().get(2).grid()).containsExactly(2, 1, 1);
        assertThat(ev.kernels().get(2).block()).containsExactly(640, 1, 1);
    }
}
