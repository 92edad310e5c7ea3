package io.pathproof.nccl;

import static io.pathproof.nccl.TopoSystem.GPU;
import static io.pathproof.nccl.TopoSystem.NET;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The channel lines ncclTopoPrintGraph logs under a graph's {@code Pattern …} line (search.cc@v2.28.9-1:1200-1227):
 * per channel {@code "%2d :"}, the NET it enters by when the communicator spans hosts, its GPUs in order, and the NET
 * it leaves by. Each node is printed by its topology id, {@code TYPE/<system id>-<local id>} in hex: a GPU's local id is
 * its PCI bus id as a number (topo.cc@v2.28.9-1:446, utils.cc@v2.28.9-1:30-45), a NET's its device index
 * (topo.cc@v2.28.9-1:360). The system id is the host's place among the hosts of one system (topo.cc@v2.28.9-1:500-507):
 * 0, as a system holds only its own host without MNNVL.
 */
final class GraphListing {
    /** graph->id of the NVLS graph, of which only the first GPU is printed (search.cc@v2.28.9-1:1217). */
    private static final int NVLS_GRAPH_ID = 3;

    private GraphListing() {}

    /**
     * @param print how this NCCL version names the nodes
     * @param rankBase added to the graph's ranks, which are those of the first host with this structure, to give this
     *     host's own (NCCL searches each host with its own ranks)
     */
    static List<String> lines(TopoGraph graph, TopoSystem sys, NcclVersionTable.GraphPrint print, int rankBase) {
        int ngpus = sys.count(GPU);
        List<String> out = new ArrayList<>();
        for (int c = 0; c < graph.nChannels; c++) {
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%2d :", c));
            if (sys.inter) {
                line.append(net(sys, graph.inter[2 * c], print));
            }
            for (int i = 0; i < ngpus; i++) {
                int rank = graph.intra[ngpus * c + i];
                line.append(
                        print == NcclVersionTable.GraphPrint.TOPO_IDS ? gpu(sys, rank) : " GPU/" + (rank + rankBase));
                if (graph.id == NVLS_GRAPH_ID) {
                    break;
                }
            }
            if (sys.inter) {
                line.append(net(sys, graph.inter[2 * c + 1], print));
            }
            out.add(line.toString());
        }
        return out;
    }

    private static String net(TopoSystem sys, int n, NcclVersionTable.GraphPrint print) {
        String dev = Long.toHexString(sys.node(NET, n).dev);
        return print == NcclVersionTable.GraphPrint.NET_ID_GPU_RANK ? " NET/" + dev : " NET/0-" + dev;
    }

    /** ncclTopoRankToIndex then the node's id; a GPU given without a bus id prints {@code ?} in its place. */
    private static String gpu(TopoSystem sys, int rank) {
        for (TopoSystem.Node g : sys.nodes[GPU]) {
            if (g.rank == rank) {
                return " GPU/0-" + (g.busId < 0 ? "?" : Long.toHexString(g.busId));
            }
        }
        throw new IllegalStateException("rank " + rank + " is not on this host");
    }

    /**
     * busIdToInt64 (utils.cc@v2.28.9-1:30-45): the hex digits of {@code "0000:18:00.0"}, separators skipped, up to
     * the first other character, as one number ({@code 0x18000}); -1 for no bus id.
     */
    static long busId(String busId) {
        if (busId == null) {
            return -1;
        }
        StringBuilder hex = new StringBuilder();
        for (int i = 0; i < busId.length() && hex.length() < 16; i++) {
            char c = busId.charAt(i);
            if (c == '.' || c == ':') {
                continue;
            }
            if (Character.digit(c, 16) < 0) {
                break;
            }
            hex.append(c);
        }
        return hex.length() == 0 ? 0 : Long.parseLong(hex.toString(), 16);
    }
}
