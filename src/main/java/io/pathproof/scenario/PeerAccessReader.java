package io.pathproof.scenario;

import io.pathproof.core.PathproofException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * {@code nvidia-smi topo -p2p r} (or {@code w}, or both one after the other): NVML's peer-access status per GPU pair,
 * the status NCCL asks before it uses P2P between two GPUs (ncclTopoCheckP2p, graph/paths.cc@v2.28.9-1:337-365: both
 * the read and the write status must be OK). A matrix of {@code GPU0 GPU1 …} rows and columns, each cell {@code X}
 * (self), {@code OK}, or why not: {@code CNS} chipset, {@code GNS} GPU, {@code TNS} topology, {@code NS} not supported,
 * {@code U} unknown (nvidia-smi's legend). Every pair not OK in any matrix is denied.
 */
public final class PeerAccessReader {
    private static final Set<String> CELLS = Set.of("X", "OK", "CNS", "GNS", "TNS", "NS", "U");

    private PeerAccessReader() {}

    /** The denied GPU pairs (smaller index first, each once) of the text {@code source} names. */
    public static List<List<Integer>> read(String text, String source) {
        Set<List<Integer>> denied = new TreeSet<>(
                java.util.Comparator.<List<Integer>>comparingInt(p -> p.get(0)).thenComparingInt(p -> p.get(1)));
        List<Integer> columns = null;
        int matrices = 0;
        String[] lines = text.split("\r?\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String[] cells = lines[i].trim().split("\\s+");
            if (cells.length == 0 || cells[0].isEmpty()) {
                columns = null;
                continue;
            }
            if (isHeader(cells)) {
                columns = new ArrayList<>();
                for (String c : cells) {
                    columns.add(Integer.parseInt(c.substring(3)));
                }
                matrices++;
                continue;
            }
            if (columns == null || !cells[0].matches("GPU\\d+")) {
                columns = null;
                continue;
            }
            int row = Integer.parseInt(cells[0].substring(3));
            if (cells.length - 1 != columns.size()) {
                throw PathproofException.badInput(source + ":" + (i + 1) + ": GPU" + row + " has " + (cells.length - 1)
                        + " cells for " + columns.size() + " columns");
            }
            for (int c = 1; c < cells.length; c++) {
                String v = cells[c];
                if (!CELLS.contains(v)) {
                    throw PathproofException.badInput(source + ":" + (i + 1) + ": '" + v + "' is not a peer-access"
                            + " status (X, OK, CNS, GNS, TNS, NS, U): give the output of `nvidia-smi topo -p2p r`,"
                            + " not of `topo -m`");
                }
                int col = columns.get(c - 1);
                if (!v.equals("X") && !v.equals("OK") && row != col) {
                    denied.add(List.of(Math.min(row, col), Math.max(row, col)));
                }
            }
        }
        if (matrices == 0) {
            throw PathproofException.badInput(source + ": no peer-access matrix (a `GPU0 GPU1 …` header and a row per"
                    + " GPU): give the output of `nvidia-smi topo -p2p r`");
        }
        return List.copyOf(denied);
    }

    private static boolean isHeader(String[] cells) {
        for (String c : cells) {
            if (!c.matches("GPU\\d+")) {
                return false;
            }
        }
        return true;
    }
}
