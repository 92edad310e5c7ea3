package io.pathproof.nccl;

import java.util.Locale;

/**
 * NCCL's algorithms in the order of their ids (include/nccl_common.h:53-68@v2.22.3-1, PAT added in 2.23; the same
 * numbers in include/plugin/nccl_tuner.h:27-43@v2.30.7-1). A constant's name is the upper-case spelling
 * ncclAlgoToString gives the TUNING line of NCCL ≥ 2.24 (collectives.cc:95-126@v2.30.7-1); {@link #ncclName()} is
 * ncclAlgoStr's mixed case (init.cc), the one NCCL_ALGO accepts and the tuning table prints.
 */
public enum NcclAlgorithm {
    TREE("Tree"),
    RING("Ring"),
    COLLNET_DIRECT("CollNetDirect"),
    COLLNET_CHAIN("CollNetChain"),
    NVLS("NVLS"),
    NVLS_TREE("NVLSTree"),
    PAT("PAT");

    private static final NcclAlgorithm[] BY_ID = values();

    private final String ncclName;

    NcclAlgorithm(String ncclName) {
        this.ncclName = ncclName;
    }

    /** NCCL's id (NCCL_ALGO_TREE 0 … NCCL_ALGO_PAT 6). */
    public int id() {
        return ordinal();
    }

    /** ncclAlgoStr's spelling: "Ring", "CollNetDirect", "NVLSTree". */
    public String ncclName() {
        return ncclName;
    }

    /** The algorithm of an id, or null when NCCL has no algorithm of that id. */
    public static NcclAlgorithm ofId(long id) {
        return id >= 0 && id < BY_ID.length ? BY_ID[(int) id] : null;
    }

    /**
     * The upper-case name of an algorithm given by id (when NCCL has one of that id) or else by name in either of NCCL's
     * spellings ("Ring" or "RING", "CollNetDirect" or "COLLNET_DIRECT"); a name NCCL does not know comes back
     * upper-cased, and no name gives null.
     */
    public static String canonical(String name, Integer id) {
        NcclAlgorithm a = id == null ? null : ofId(id);
        if (a != null) {
            return a.name();
        }
        if (name == null) {
            return null;
        }
        String k = name.trim().toUpperCase(Locale.ROOT).replace("-", "_");
        for (NcclAlgorithm x : BY_ID) {
            if (x.ncclName.toUpperCase(Locale.ROOT).equals(k)) {
                return x.name();
            }
        }
        return k;
    }

    /** The algorithm a name in either of NCCL's spellings names, or null. */
    public static NcclAlgorithm parse(String name) {
        String k = canonical(name, null);
        for (NcclAlgorithm x : BY_ID) {
            if (x.name().equals(k)) {
                return x;
            }
        }
        return null;
    }

    /** ncclAlgoStr by id, the list NCCL_ALGO is parsed against. */
    static String[] ncclNames() {
        String[] names = new String[BY_ID.length];
        for (NcclAlgorithm x : BY_ID) {
            names[x.id()] = x.ncclName;
        }
        return names;
    }
}
