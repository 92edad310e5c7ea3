package io.pathproof.nccl;

import io.pathproof.core.PathproofException;
import java.util.Locale;
import java.util.Map;

/** The NCCL_* environment variables the model reads, parsed as NCCL parses them (misc/param.cc, graph/tuning.cc). */
final class NcclEnv {
    private NcclEnv() {}

    /**
     * An integer parameter as NCCL_PARAM reads it (strtoll, base 0); null or unparsable gives the default, as NCCL
     * ignores a value it cannot read.
     */
    static long longOr(String v, long def) {
        if (v == null) {
            return def;
        }
        String s = v.trim();
        try {
            if (s.startsWith("0x") || s.startsWith("0X")) {
                return Long.parseLong(s.substring(2), 16);
            }
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return def;
        }
    }

    static String get(Map<String, String> env, String key) {
        String v = env.get(key);
        return v == null || v.isEmpty() ? null : v;
    }

    /**
     * parseList of tuning.cc. 2.22 (@v2.22.3-1:34-52): a comma list, {@code ^} excludes, unknown names are ignored.
     * 2.28+ (@v2.28.9-1:54-131): {@code ;}-separated entries with an optional {@code func:} prefix, an unknown name or
     * prefix is an error (ncclInvalidUsage). Returns the AllReduce row.
     */
    static int[] parseList(String var, String str, String[] names, int n, boolean prefixes) {
        if (!prefixes) {
            return selection(var, str, str, names, n, false);
        }
        String[] funcs = {"Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce"};
        int[] list = new int[n];
        // Defaults as in ncclTopoTuneModel@v2.28.9-1:400-408: LL128 "2" (by rule), others 1.
        for (int i = 0; i < n; i++) {
            list[i] = names.length == 3 && i == 1 ? 2 : 1;
        }
        String[] entries = str.split(";");
        for (int k = 0; k < entries.length; k++) {
            String entry = entries[k];
            String prefix = null;
            String elems = entry;
            int colon = entry.indexOf(':');
            if (colon >= 0) {
                prefix = entry.substring(0, colon);
                elems = entry.substring(colon + 1);
            } else if (k > 0) {
                throw PathproofException.badInput(
                        var + ": all entries except the first must have a prefix: \"" + str + "\"");
            }
            boolean known = prefix == null;
            for (String f : funcs) {
                known |= f.equalsIgnoreCase(prefix == null ? "" : prefix);
            }
            if (!known) {
                throw PathproofException.badInput(var + ": unrecognized prefix \"" + prefix + "\" in \"" + str + "\"");
            }
            int[] row = selection(var, str, elems, names, n, true);
            if (prefix == null || prefix.toLowerCase(Locale.ROOT).equals("allreduce")) {
                list = row;
            }
        }
        return list;
    }

    /**
     * One comma list of names: those named are 1, the others 0; a leading {@code ^} turns it round. An unknown name is
     * ignored, or with {@code strict} an error naming the variable {@code var} and its value {@code str}.
     */
    private static int[] selection(String var, String str, String elems, String[] names, int n, boolean strict) {
        boolean excluding = elems.startsWith("^");
        int[] row = new int[n];
        java.util.Arrays.fill(row, excluding ? 1 : 0);
        for (String tok : (excluding ? elems.substring(1) : elems).split(",")) {
            int e = 0;
            while (e < n && !tok.trim().equalsIgnoreCase(names[e])) {
                e++;
            }
            if (e < n) {
                row[e] = excluding ? 0 : 1;
            } else if (strict) {
                throw PathproofException.badInput(var + ": unrecognized element \"" + tok + "\" in \"" + str
                        + "\" (known: " + String.join(",", java.util.Arrays.copyOf(names, n)) + ")");
            }
        }
        return row;
    }

    /** ncclMinNchannels (graph/connect.cc@v2.28.9-1:328-339): NCCL_MIN_NRINGS, then NCCL_MIN_NCHANNELS, in [0, MAX]. */
    static int minNchannels(Map<String, String> env, int maxChannels) {
        int min = 0;
        long rings = longOr(get(env, "NCCL_MIN_NRINGS"), -2);
        long ch = longOr(get(env, "NCCL_MIN_NCHANNELS"), -2);
        if (rings != -2) {
            min = (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, rings));
        }
        if (ch != -2) {
            min = (int) Math.max(Integer.MIN_VALUE, Math.min(Integer.MAX_VALUE, ch));
        }
        if (min > maxChannels) {
            min = maxChannels;
        }
        return Math.max(min, 0);
    }

    /** ncclMaxNchannels (graph/connect.cc@v2.28.9-1:342-354): NCCL_MAX_NRINGS, then NCCL_MAX_NCHANNELS, in [1, MAX]. */
    static int maxNchannels(Map<String, String> env, int maxChannels) {
        long max = maxChannels;
        long rings = longOr(get(env, "NCCL_MAX_NRINGS"), -2);
        long ch = longOr(get(env, "NCCL_MAX_NCHANNELS"), -2);
        if (rings != -2) {
            max = rings;
        }
        if (ch != -2) {
            max = ch;
        }
        if (max > maxChannels) {
            max = maxChannels;
        }
        return (int) Math.max(max, 1);
    }

    /** NCCL_P2P_DISABLE / NCCL_P2P_LEVEL (paths.cc ncclGetLevel): null when the user set neither. */
    static Integer userP2pLevel(Map<String, String> env) {
        return userLevel(env, "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL");
    }

    /**
     * NCCL_NET_GDR_LEVEL as ncclTopoCheckGdr reads it (graph/paths.cc@v2.28.9-1:452-454, through ncclGetLevel without a
     * disable variable): the farthest GPU–NIC path type that may still use GPUDirect RDMA; null where unset.
     */
    static Integer userGdrLevel(Map<String, String> env) {
        return userLevel(env, null, "NCCL_NET_GDR_LEVEL");
    }

    /**
     * ncclGetLevel (graph/paths.cc@v2.28.9-1:217-253): {@code disableVar}=1 is LOC; else the level variable by path
     * name (LOC, NVL, …, SYS) or by the old numbering; null where neither is set or the value is not understood.
     */
    private static Integer userLevel(Map<String, String> env, String disableVar, String levelVar) {
        String dis = disableVar == null ? null : get(env, disableVar);
        if (dis != null && longOr(dis, 0) == 1) {
            return NcclVersionTable.PATH_LOC;
        }
        String lvl = get(env, levelVar);
        if (lvl == null) {
            return null;
        }
        for (int i = 0; i <= NcclVersionTable.PATH_SYS; i++) {
            if (lvl.equals(NcclVersionTable.PATH_NAMES[i])) {
                return i;
            }
        }
        if (!lvl.isEmpty() && Character.isDigit(lvl.charAt(0))) {
            int[] oldToNew = {
                NcclVersionTable.PATH_LOC,
                NcclVersionTable.PATH_PIX,
                NcclVersionTable.PATH_PXB,
                NcclVersionTable.PATH_PHB,
                NcclVersionTable.PATH_SYS,
                NcclVersionTable.PATH_SYS
            };
            long old = Math.min(longOr(lvl, 0), oldToNew.length - 1);
            return oldToNew[(int) Math.max(0, old)];
        }
        return null;
    }
}
