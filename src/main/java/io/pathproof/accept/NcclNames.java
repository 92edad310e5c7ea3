package io.pathproof.accept;

import java.util.Locale;

/** NCCL's transport names as accept compares them (algorithm and protocol names are the nccl room's enums). */
final class NcclNames {
    private NcclNames() {}

    /** "P2P", "SHM", "NET", "COLLNET" … : the transport module, the part before the first '/'. */
    static String transportFamily(String t) {
        if (t == null) {
            return null;
        }
        int i = t.indexOf('/');
        return (i < 0 ? t : t.substring(0, i)).trim().toUpperCase(Locale.ROOT);
    }
}
