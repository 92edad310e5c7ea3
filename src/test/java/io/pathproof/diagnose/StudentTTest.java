package io.pathproof.diagnose;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

import org.junit.jupiter.api.Test;

/** The t quantiles the run-level intervals use, against published values (SciPy's stats.t.ppf). */
class StudentTTest {
    @Test
    void quantilesMatchTheTable() {
        assertThat(StudentT.quantile(0.975, 1)).isCloseTo(12.706204736174694, offset(1e-7));
        assertThat(StudentT.quantile(0.995, 2)).isCloseTo(9.924843200918287, offset(1e-7));
        assertThat(StudentT.quantile(0.99833333, 2)).isCloseTo(17.2771593361703, offset(1e-5));
        assertThat(StudentT.quantile(0.975, 4.5)).isCloseTo(2.6589123472044034, offset(1e-7));
        assertThat(StudentT.quantile(0.9995, 9)).isCloseTo(4.780912585931217, offset(1e-7));
        assertThat(StudentT.quantile(0.995, 1e6)).isCloseTo(2.5758342201053344, offset(1e-5));
        assertThat(StudentT.quantile(0.025, 1)).isCloseTo(-12.706204736174694, offset(1e-7));
    }
}
