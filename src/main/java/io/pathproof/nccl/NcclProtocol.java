package io.pathproof.nccl;

import java.util.Locale;

/**
 * NCCL's protocols in the order of their ids (NCCL_PROTO_LL 0, LL128 1, SIMPLE 2: include/nccl_common.h@v2.22.3-1,
 * the same in include/plugin/nccl_tuner.h@v2.30.7-1). A constant's name is the spelling of the TUNING line of NCCL ≥
 * 2.24; {@link #ncclName()} is ncclProtoStr's ("Simple"), the one NCCL_PROTO accepts and the tuning table prints.
 */
public enum NcclProtocol {
    LL("LL"),
    LL128("LL128"),
    SIMPLE("Simple");

    private static final NcclProtocol[] BY_ID = values();

    private final String ncclName;

    NcclProtocol(String ncclName) {
        this.ncclName = ncclName;
    }

    /** NCCL's id (NCCL_PROTO_LL 0 … NCCL_PROTO_SIMPLE 2). */
    public int id() {
        return ordinal();
    }

    /** ncclProtoStr's spelling: "LL", "LL128", "Simple". */
    public String ncclName() {
        return ncclName;
    }

    /** The protocol of an id, or null when NCCL has no protocol of that id. */
    public static NcclProtocol ofId(long id) {
        return id >= 0 && id < BY_ID.length ? BY_ID[(int) id] : null;
    }

    /**
     * The upper-case name of a protocol given by id (when NCCL has one of that id) or else by name in either spelling; a
     * name NCCL does not know comes back upper-cased, and no name gives null.
     */
    public static String canonical(String name, Integer id) {
        NcclProtocol p = id == null ? null : ofId(id);
        if (p != null) {
            return p.name();
        }
        return name == null ? null : name.trim().toUpperCase(Locale.ROOT);
    }

    /** The protocol a name in either spelling names, or null. */
    public static NcclProtocol parse(String name) {
        String k = canonical(name, null);
        for (NcclProtocol x : BY_ID) {
            if (x.name().equals(k)) {
                return x;
            }
        }
        return null;
    }

    /** ncclProtoStr by id, the list NCCL_PROTO is parsed against. */
    static String[] ncclNames() {
        String[] names = new String[BY_ID.length];
        for (NcclProtocol x : BY_ID) {
            names[x.id()] = x.ncclName;
        }
        return names;
    }
}
