package io.pathproof.accept;

import java.util.Locale;

/**
 * Canonical algorithm and protocol names. Ids are those of {@code nccl_common.h} (v2.22.3-1
 * {@code src/include/nccl_common.h:53-68}; the same numbers in v2.30.7-1 {@code src/include/plugin/nccl_tuner.h}):
 * TREE 0, RING 1, COLLNET_DIRECT 2, COLLNET_CHAIN 3, NVLS 4, NVLS_TREE 5, PAT 6; LL 0, LL128 1, SIMPLE 2. The
 * {@code %s} TUNING line of NCCL ≥ 2.24 prints the upper-case names of {@code ncclAlgoToString}; the tuning table and
 * {@code NCCL_ALGO} use the mixed-case {@code ncclAlgoStr} ("Ring", "CollNetDirect", "Simple"): both map here.
 */
final class NcclNames {
  private static final String[] ALGOS = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
  private static final String[] PROTOS = {"LL", "LL128", "SIMPLE"};

  private NcclNames() {}

  static String algorithm(String name, Integer id) {
    if (id != null && id >= 0 && id < ALGOS.length) {
      return ALGOS[id];
    }
    if (name == null) {
      return null;
    }
    String k = name.trim().toUpperCase(Locale.ROOT).replace("-", "_");
    return switch (k) {
      case "COLLNETDIRECT" -> "COLLNET_DIRECT";
      case "COLLNETCHAIN" -> "COLLNET_CHAIN";
      case "NVLSTREE" -> "NVLS_TREE";
      default -> k;
    };
  }

  static String protocol(String name, Integer id) {
    if (id != null && id >= 0 && id < PROTOS.length) {
      return PROTOS[id];
    }
    return name == null ? null : name.trim().toUpperCase(Locale.ROOT);
  }

  /** "P2P", "SHM", "NET", "COLLNET" … : the transport module, the part before the first '/'. */
  static String transportFamily(String t) {
    if (t == null) {
      return null;
    }
    int i = t.indexOf('/');
    return (i < 0 ? t : t.substring(0, i)).trim().toUpperCase(Locale.ROOT);
  }
}
