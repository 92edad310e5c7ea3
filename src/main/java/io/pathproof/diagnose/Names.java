package io.pathproof.diagnose;

import java.util.Locale;

/** Canonical NCCL algorithm/protocol names (ids of nccl_common.h:53-68@v2.22.3-1, unchanged in v2.30.7-1). */
final class Names {
  private static final String[] ALGOS = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
  private static final String[] PROTOS = {"LL", "LL128", "SIMPLE"};

  private Names() {}

  static String algorithm(String name, Integer id) {
    if (id != null && id >= 0 && id < ALGOS.length) {
      return ALGOS[id];
    }
    return name == null ? "?" : name.trim().toUpperCase(Locale.ROOT).replace("COLLNETDIRECT", "COLLNET_DIRECT")
        .replace("COLLNETCHAIN", "COLLNET_CHAIN").replace("NVLSTREE", "NVLS_TREE");
  }

  static String protocol(String name, Integer id) {
    if (id != null && id >= 0 && id < PROTOS.length) {
      return PROTOS[id];
    }
    return name == null ? "?" : name.trim().toUpperCase(Locale.ROOT);
  }
}
