package io.pathproof.ddp;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.Version;
import io.pathproof.scenario.Workload;
import java.util.Map;

/** The public entry of the DDP room: the bucket plan torch of the given version builds for a workload. */
public final class BucketPlanner {
  private BucketPlanner() {}

  public static BucketPlan plan(Workload workload, Version torch, Map<String, String> env) {
    throw PathproofException.usage("ddp bucket planner: not built yet");
  }
}
