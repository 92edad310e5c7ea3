package io.pathproof.ddp;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.DType;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Version;
import io.pathproof.scenario.Workload;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The public entry of the DDP room: the bucket plan torch of the given version builds for a workload.
 *
 * <p>Construction ({@code DistributedDataParallel._ddp_init_helper}): the parameters that require a gradient, in
 * {@code named_parameters()} order, are assigned by {@link BucketAssignment} with the construction limits of the
 * version's {@link TorchDdpRules}; the Reducer receives the buckets reversed, so bucket 0 holds the highest indices.
 * Rebuild ({@code Reducer::rebuild_buckets}): the parameters in gradient-ready order, assigned with
 * {@code [first_bucket_bytes_cap, bucket_bytes_cap]} and not sorted, so bucket 0 holds the first gradients ready.
 * The ready order is not known before a run; the plan assumes reverse parameter order and says so.
 */
public final class BucketPlanner {
    /** The environment switch read by {@code Reducer::rebuild_buckets}: "1" makes the small bucket the last one. */
    static final String SET_LAST_BUCKET_CAP = "DDP_SET_LAST_BUCKET_CAP";

    private BucketPlanner() {}

    /**
     * The family of DDP bucket rules a torch version follows ({@code torch-1.13}, {@code torch-2.5+}), or null when
     * its rules were not checked against its source. Two versions of one family bucket alike: a prediction for one is a
     * prediction for the other (accept's torch-version row judges this, not the version string).
     */
    public static String ruleFamily(Version torch) {
        for (TorchDdpRules r : TorchDdpRules.TABLE) {
            if (torch != null
                    && torch.compareTo(r.from()) >= 0
                    && (r.until() == null || torch.compareTo(r.until()) < 0)) {
                return r.id();
            }
        }
        return null;
    }

    /** The plan for a scenario: its workload, its torch version and its environment. */
    public static BucketPlan plan(io.pathproof.scenario.Scenario scenario) {
        return plan(scenario.workload(), scenario.versions().torch(), scenario.env());
    }

    public static BucketPlan plan(Workload workload, Version torch, Map<String, String> env) {
        return plan(workload, torch, env, null);
    }

    /**
     * As {@link #plan(Workload, Version, Map)}, with the gradient-ready order of a run instead of the assumed one:
     * {@code readyOrder} lists DDP parameter indices (trainable parameters, numbered in {@code named_parameters()}
     * order) first-ready first, as DDP logs it in {@code prev_iteration_grad_ready_order_indices}. null = assume.
     */
    public static BucketPlan plan(Workload workload, Version torch, Map<String, String> env, List<Integer> readyOrder) {
        if (workload == null) {
            throw PathproofException.badInput("workload: missing");
        }
        TorchDdpRules rules = TorchDdpRules.forVersion(torch);
        Map<String, String> environment = env == null ? Map.of() : env;
        List<Parameter> params = trainable(workload);
        boolean capIsDefault = workload.bucketCapMb() == null;
        long cap = TorchDdpRules.capBytes(workload.bucketCapMb());
        boolean staticGraph = workload.staticGraph();
        boolean findUnused = workload.findUnusedParameters();

        List<String> assumptions = new ArrayList<>();
        assumptions.add("torch " + torch + ": bucket rules " + rules.id() + " from " + rules.source());

        List<Long> constructionLimits =
                rules.constructionLimits(workload.staticAtConstruction(), findUnused, capIsDefault, cap);
        if (workload.staticGraphAfterConstruction()) {
            assumptions.add("static graph set after DDP's construction (_set_static_graph): constructed as for a graph"
                    + " that is not static, run statically from the first forward");
        }
        List<BucketAssignment.Tensor> inOrder = new ArrayList<>();
        for (Parameter p : params) {
            inOrder.add(new BucketAssignment.Tensor(p.bytes(), p.dtype()));
        }
        List<Bucket> construction = construction(params, inOrder, constructionLimits);

        List<Bucket> rebuilt = List.of();
        List<Long> rebuildLimits = List.of();
        int firstRebuilt = -1;
        if (rules.rebuilds(staticGraph, findUnused)) {
            rebuildLimits = rules.rebuildLimits(capIsDefault, cap);
            List<Integer> ready = readyOrder(readyOrder, params.size(), assumptions);
            boolean setLast = "1".equals(environment.get(SET_LAST_BUCKET_CAP));
            rebuilt = rebuild(params, inOrder, ready, rebuildLimits, setLast, assumptions);
            firstRebuilt = rules.firstRebuiltIteration(staticGraph);
        } else {
            assumptions.add("find_unused_parameters=True without static_graph: DDP never rebuilds its buckets");
        }
        return new BucketPlan(construction, rebuilt, firstRebuilt, constructionLimits, rebuildLimits, assumptions);
    }

    /** _build_params_for_reducer: parameters with requires_grad=False do not exist for DDP. */
    private static List<Parameter> trainable(Workload workload) {
        List<Parameter> params = new ArrayList<>();
        for (Parameter p : workload.parameters()) {
            if (p.requiresGrad()) {
                params.add(p);
            }
        }
        if (params.isEmpty()) {
            throw PathproofException.badInput(
                    "workload.parameters: no parameter requires a gradient; DDP refuses such a module"
                            + " (\"DistributedDataParallel is not needed when a module doesn't have any parameter that requires a"
                            + " gradient\")");
        }
        return params;
    }

    /** Construction: parameters in order into buckets by size, the last-filled bucket first. */
    private static List<Bucket> construction(
            List<Parameter> params, List<BucketAssignment.Tensor> inOrder, List<Long> limits) {
        BucketAssignment.Result built = BucketAssignment.bySize(inOrder, limits, null);
        List<List<Integer>> constructionIdx = new ArrayList<>(built.buckets());
        List<Long> constructionLim = new ArrayList<>(built.limits());
        Collections.reverse(constructionIdx);
        Collections.reverse(constructionLim);
        return buckets(params, constructionIdx, constructionLim);
    }

    /** The gradient-ready order the rebuild follows: the given one, or the reverse parameter order assumed. */
    private static List<Integer> readyOrder(List<Integer> readyOrder, int n, List<String> assumptions) {
        List<Integer> ready = new ArrayList<>();
        if (readyOrder == null) {
            for (int i = n - 1; i >= 0; i--) {
                ready.add(i);
            }
            assumptions.add("gradient-ready order = reverse parameter order (" + describeOrder(ready)
                    + "); autograd decides it at run time and rank 0's order is used; the logged"
                    + " prev_iteration_grad_ready_order_indices is ground truth");
        } else {
            checkPermutation(readyOrder, n);
            ready.addAll(readyOrder);
            assumptions.add("gradient-ready order given (" + describeOrder(ready) + "), e.g. from a run's"
                    + " prev_iteration_grad_ready_order_indices");
        }
        return ready;
    }

    /** Rebuild: parameters in gradient-ready order into buckets by size. */
    private static List<Bucket> rebuild(
            List<Parameter> params,
            List<BucketAssignment.Tensor> inOrder,
            List<Integer> ready,
            List<Long> rebuildLimits,
            boolean setLast,
            List<String> assumptions) {
        if (setLast) {
            Collections.reverse(ready);
            assumptions.add(
                    SET_LAST_BUCKET_CAP + "=1: ready order reversed before assignment and buckets reversed after,"
                            + " so the first-bucket limit applies to the last bucket");
        }
        List<BucketAssignment.Tensor> readyTensors = new ArrayList<>();
        for (int i : ready) {
            readyTensors.add(inOrder.get(i));
        }
        BucketAssignment.Result re = BucketAssignment.bySize(readyTensors, rebuildLimits, ready);
        List<List<Integer>> idx = new ArrayList<>(re.buckets());
        List<Long> lim = new ArrayList<>(re.limits());
        if (setLast) {
            Collections.reverse(idx);
            Collections.reverse(lim);
        }
        if (re.unorderedLeftovers()) {
            assumptions.add(
                    "several dtypes left a partly filled bucket after the rebuild; torch emits those in std::unordered_map"
                            + " order, assumed to be the reverse of the order in which each dtype first became ready (observed"
                            + " with libstdc++ on torch 1.13.1 and 2.11.0; not guaranteed)");
        }
        return buckets(params, idx, lim);
    }

    private static void checkPermutation(List<Integer> order, int n) {
        boolean[] seen = new boolean[n];
        for (Integer i : order) {
            if (i == null || i < 0 || i >= n || seen[i]) {
                throw PathproofException.badInput("ready order: " + i + " is not a new parameter index in 0.." + (n - 1)
                        + " (indices count trainable parameters only)");
            }
            seen[i] = true;
        }
        if (order.size() != n) {
            throw PathproofException.badInput(
                    "ready order: " + order.size() + " indices for " + n + " trainable parameters");
        }
    }

    private static List<Bucket> buckets(List<Parameter> params, List<List<Integer>> idx, List<Long> limits) {
        List<Bucket> out = new ArrayList<>();
        for (int b = 0; b < idx.size(); b++) {
            long bytes = 0;
            List<String> names = new ArrayList<>();
            DType dtype = null;
            for (int i : idx.get(b)) {
                Parameter p = params.get(i);
                bytes = Math.addExact(bytes, p.bytes());
                names.add(p.name());
                dtype = p.dtype();
            }
            out.add(new Bucket(b, bytes, names, b == idx.size() - 1, dtype, limits.get(b)));
        }
        return List.copyOf(out);
    }

    private static String describeOrder(List<Integer> order) {
        if (order.size() <= 8) {
            StringBuilder s = new StringBuilder("indices");
            for (int i : order) {
                s.append(' ').append(i);
            }
            return s.toString();
        }
        return "indices " + order.get(0) + " down to " + order.get(order.size() - 1);
    }
}
