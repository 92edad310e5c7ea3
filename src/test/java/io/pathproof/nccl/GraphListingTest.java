package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class GraphListingTest {
    @Test
    void aBusIdIsItsHexDigitsAsOneNumberAsNcclPrintsIt() {
        assertThat(Long.toHexString(GraphListing.busId("0000:18:00.0"))).isEqualTo("18000");
        assertThat(Long.toHexString(GraphListing.busId("0000:db:00.0"))).isEqualTo("db000");
        assertThat(Long.toHexString(GraphListing.busId("0000:00:06.0"))).isEqualTo("60");
        assertThat(GraphListing.busId(null)).isEqualTo(-1);
    }
}
