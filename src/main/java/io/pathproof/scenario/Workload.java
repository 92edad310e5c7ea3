package io.pathproof.scenario;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.pathproof.core.PathproofException;
import java.util.List;

/**
 * What DDP is given: the model's parameters in {@code named_parameters()} order and the DDP constructor flags.
 * {@code bucketCapMb} null means the caller did not pass {@code bucket_cap_mb} (torch's default applies, and in
 * torch ≥ 2.x that also changes the first-bucket rule). {@code readyOrder} is the order in which autograd makes the
 * trainable parameters' gradients ready (indices into them, first ready first), when it is known before the run (the
 * in-run prediction's addendum derives it from the autograd graph of the first forward); null = assume it.
 * {@code commHook} names the communication hook the job registered (null = none: DDP's own allreduce).
 * {@code staticGraphAfterConstruction}: the job made the graph static with {@code ddp._set_static_graph()} after DDP's
 * construction (torch before 1.11 had no {@code static_graph} argument; frameworks still call it): DDP had bucketed its
 * parameters by then as for a graph that is not static (distributed.py _ddp_init_helper@v1.13.1 reads
 * {@code static_graph} for the construction limits), and runs statically from the first forward on.
 */
public record Workload(
        String name,
        List<Parameter> parameters,
        Double bucketCapMb,
        boolean findUnusedParameters,
        boolean staticGraph,
        boolean gradientAsBucketView,
        @JsonInclude(JsonInclude.Include.NON_NULL) List<Integer> readyOrder,
        @JsonInclude(JsonInclude.Include.NON_NULL) String commHook,
        @JsonInclude(JsonInclude.Include.NON_DEFAULT) boolean staticGraphAfterConstruction) {
    public Workload {
        if (parameters == null || parameters.isEmpty()) {
            throw PathproofException.badInput("workload.parameters: empty; DDP needs at least one parameter");
        }
        parameters = List.copyOf(parameters);
        if (bucketCapMb != null && !(bucketCapMb > 0)) {
            throw PathproofException.badInput("workload.bucketCapMb: must be > 0, got " + bucketCapMb);
        }
        name = name == null ? "workload" : name;
        readyOrder = readyOrder == null ? null : List.copyOf(readyOrder);
        commHook = commHook == null || commHook.isBlank() ? null : commHook;
        if (staticGraphAfterConstruction && !staticGraph) {
            throw PathproofException.badInput(
                    "workload.staticGraphAfterConstruction: true needs staticGraph true (the graph DDP runs is static)");
        }
    }

    /** DDP's flags as given to its constructor, nothing changed after it. */
    public Workload(
            String name,
            List<Parameter> parameters,
            Double bucketCapMb,
            boolean findUnusedParameters,
            boolean staticGraph,
            boolean gradientAsBucketView,
            List<Integer> readyOrder,
            String commHook) {
        this(
                name,
                parameters,
                bucketCapMb,
                findUnusedParameters,
                staticGraph,
                gradientAsBucketView,
                readyOrder,
                commHook,
                false);
    }

    /** Whether DDP bucketed its parameters at construction as for a static graph. */
    public boolean staticAtConstruction() {
        return staticGraph && !staticGraphAfterConstruction;
    }

    /** A workload whose ready order is not known before the run and which registers no comm hook. */
    public Workload(
            String name,
            List<Parameter> parameters,
            Double bucketCapMb,
            boolean findUnusedParameters,
            boolean staticGraph,
            boolean gradientAsBucketView) {
        this(name, parameters, bucketCapMb, findUnusedParameters, staticGraph, gradientAsBucketView, null, null);
    }

    /**
     * The same parameters with other DDP constructor flags (e.g. command-line flags over a parameter dump, which carries
     * none). {@code bucketCapMb} null = torch's default.
     */
    public Workload withDdpFlags(Double bucketCapMb, boolean findUnused, boolean staticGraph, boolean asView) {
        return new Workload(
                name,
                parameters,
                bucketCapMb,
                findUnused,
                staticGraph,
                asView,
                readyOrder,
                commHook,
                staticGraph && staticGraphAfterConstruction);
    }

    /** The same workload with the gradient-ready order given (indices into the trainable parameters). */
    public Workload withReadyOrder(List<Integer> order) {
        return new Workload(
                name,
                parameters,
                bucketCapMb,
                findUnusedParameters,
                staticGraph,
                gradientAsBucketView,
                order,
                commHook,
                staticGraphAfterConstruction);
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
