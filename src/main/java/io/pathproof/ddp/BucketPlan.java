package io.pathproof.ddp;

import java.util.List;

/**
 * The bucket sequence of a DDP job: the construction buckets, the rebuilt buckets (empty when DDP never rebuilds,
 * e.g. find_unused_parameters=True) and the first iteration that uses the rebuilt ones. {@code assumptions} lists what
 * the plan rests on but cannot know before the run (the gradient-ready order).
 */
public record BucketPlan(
        List<Bucket> construction,
        List<Bucket> rebuilt,
        int firstRebuiltIteration,
        List<Long> constructionLimits,
        List<Long> rebuildLimits,
        List<String> assumptions) {
    public BucketPlan {
        construction = List.copyOf(construction);
        rebuilt = List.copyOf(rebuilt);
        constructionLimits = List.copyOf(constructionLimits);
        rebuildLimits = List.copyOf(rebuildLimits);
        assumptions = List.copyOf(assumptions);
    }

    /** The buckets DDP reduces in the given iteration (0-based). */
    public List<Bucket> bucketsAt(int iteration) {
        if (rebuilt.isEmpty() || firstRebuiltIteration < 0 || iteration < firstRebuiltIteration) {
            return construction;
        }
        return rebuilt;
    }
}
