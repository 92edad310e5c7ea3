package io.pathproof.scenario;

import io.pathproof.core.PathproofException;
import java.util.List;

/**
 * What DDP is given: the model's parameters in {@code named_parameters()} order and the DDP constructor flags.
 * {@code bucketCapMb} null means the caller did not pass {@code bucket_cap_mb} (torch's default applies, and in
 * torch ≥ 2.x that also changes the first-bucket rule).
 */
public record Workload(
    String name,
    List<Parameter> parameters,
    Double bucketCapMb,
    boolean findUnusedParameters,
    boolean staticGraph,
    boolean gradientAsBucketView) {
  public Workload {
    if (parameters == null || parameters.isEmpty()) {
      throw PathproofException.badInput("workload.parameters: empty; DDP needs at least one parameter");
    }
    parameters = List.copyOf(parameters);
    if (bucketCapMb != null && !(bucketCapMb > 0)) {
      throw PathproofException.badInput("workload.bucketCapMb: must be > 0, got " + bucketCapMb);
    }
    name = name == null ? "workload" : name;
  }

  /**
   * The same parameters with other DDP constructor flags (e.g. command-line flags over a parameter dump, which carries
   * none). {@code bucketCapMb} null = torch's default.
   */
  public Workload withDdpFlags(
      Double bucketCapMb, boolean findUnusedParameters, boolean staticGraph, boolean gradientAsBucketView) {
    return new Workload(name, parameters, bucketCapMb, findUnusedParameters, staticGraph, gradientAsBucketView);
  }

  /** Bytes of all parameters that take a gradient (the "logical parameter" of the seed's acceptance). */
  public long gradientBytes() {
    long b = 0;
    for (Parameter p : parameters) {
      if (p.requiresGrad()) {
        b = Math.addExact(b, p.bytes());
      }
    }
    return b;
  }
}
