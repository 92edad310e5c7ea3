package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The ring and tree search (search.cc ncclTopoCompute) on machines whose answer can be reasoned out by hand. */
class GraphSearchTest {
    @Test
    void v100MeshUsesEveryDirectedHamiltonianCycleAtTwentyGbs() {
        CommunicatorPrediction c = NcclModel.of(
                        Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.22.3", 4, Map.of()))
                .communicator();
        // At 40 GB/s only a ring and its reverse fit; 30/40 and 20/40 pass the .49 rule; at 20 GB/s each directed NV2
        // link (40 GB/s) carries two rings, so all six directed cycles fit: 6 x 20 = totalBw 120 stops the search.
        assertThat(c.ringGraph().nChannels()).isEqualTo(6);
        assertThat(c.ringGraph().sameChannels()).isFalse();
        List<String> graphRings = c.ringOrders().subList(0, 6);
        assertThat(new HashSet<>(graphRings)).hasSize(6);
        Map<String, Integer> edgeUse = new HashMap<>();
        for (String ring : graphRings) {
            String[] r = ring.split(" ");
            for (int i = 0; i < r.length; i++) {
                edgeUse.merge(r[i] + ">" + r[(i + 1) % r.length], 1, Integer::sum);
            }
        }
        assertThat(edgeUse).hasSize(12);
        assertThat(new HashSet<>(edgeUse.values())).containsExactly(2);
        // Postset doubles the channels by repeating the graph's rings.
        assertThat(c.ringOrders().subList(6, 12)).isEqualTo(graphRings);
        // Tree: min = max = ring channels; bw 20 (40 x 6 and 30 x 6 exceed totalBw x 4/3 = 160).
        assertThat(c.treeGraph().nChannels()).isEqualTo(6);
        assertThat(c.treeGraph().bwIntra()).isEqualTo(20.0);
    }

    @Test
    void nvswitchRingsGoToTheNeighbourGpuAndAreDuplicated() {
        CommunicatorPrediction c = NcclModel.of(Topologies.scenario(
                        Topologies.hopper("NVIDIA H200", 8, 18), "2.28.9", 8, Map.of("NCCL_NVLS_ENABLE", "0")))
                .communicator();
        // 6 rings at 60 (360 of 370.8 per GPU); DupChannels (bw 60 >= 50) gives 12 x 30; the same ring each time.
        assertThat(c.ringGraph().nChannels()).isEqualTo(12);
        assertThat(c.ringGraph().sameChannels()).isTrue();
        Set<String> orders = new HashSet<>(c.ringOrders());
        assertThat(orders).containsExactly("0 1 2 3 4 5 6 7");
    }

    @Test
    void dupChannelsSkipsSlowRingsOnHopper() {
        // 8 links: 4 rings at 40 (160 of 164.8), duplicated to 8 x 20 because nChannels 4 is not > 4.
        CommunicatorPrediction h800 = NcclModel.of(Topologies.scenario(
                        Topologies.hopper("NVIDIA H800", 8, 8), "2.28.9", 8, Map.of("NCCL_NVLS_ENABLE", "0")))
                .communicator();
        assertThat(h800.ringGraph().nChannels()).isEqualTo(8);
        assertThat(h800.ringGraph().bwIntra()).isEqualTo(20.0);
        // 4 links (82.4 GB/s): 1 x 60, then 2 x 40 = 80 (better), 2 x 30, 3 x 24 (worse), 4 x 20 = 80 (a tie with more
        // hops, not kept), 15/40 < .49 stops. DupChannels: 40 >= 25 and only 2 channels, so 4 x 20; 8 coll channels.
        CommunicatorPrediction four = NcclModel.of(Topologies.scenario(
                        Topologies.hopper("NVIDIA H800", 8, 4), "2.28.9", 8, Map.of("NCCL_NVLS_ENABLE", "0")))
                .communicator();
        assertThat(four.ringGraph().nChannels()).isEqualTo(4);
        assertThat(four.ringGraph().bwIntra()).isEqualTo(20.0);
        assertThat(four.collChannels()).isEqualTo(8);
    }
}
