package io.pathproof.diagnose;

/**
 * Both runs' machine load, the step-time comparison with each step's run-queue wait taken out, the compute estimate's
 * comparison (null without hook records), the job's CPU time per step compared (null where not recorded) and the size
 * of the step change in ms: whether the machine, not the job, explains the change.
 */
record LoadComparison(
        MachineLoad baseline,
        MachineLoad variant,
        StepStats.Comparison withoutWait,
        String stepVerdict,
        StepStats.Comparison compute,
        StepStats.Comparison jobCpu,
        double stepChangeMs) {
    /**
     * The two sides' loads compared by {@code rule} for a step judged {@code stepVerdict} that changed by
     * {@code stepChangeMs}: the steps without each rank's run-queue wait, and the job's CPU time per step where both
     * recorded it.
     */
    static LoadComparison of(
            MachineLoad baseline,
            MachineLoad variant,
            String stepVerdict,
            StepStats.Comparison compute,
            double stepChangeMs,
            Diagnosis.Rule rule) {
        return new LoadComparison(
                baseline,
                variant,
                StepStats.compare(baseline.stepsWithoutWait(), variant.stepsWithoutWait(), rule),
                stepVerdict,
                compute,
                baseline.hasJobCpu() && variant.hasJobCpu()
                        ? StepStats.compare(baseline.jobCpuPerStep(), variant.jobCpuPerStep(), rule)
                        : null,
                stepChangeMs);
    }

    /**
     * The step changed, the slower run's ranks waited longer for a CPU by at least the change, and either without that
     * wait the step did not change, or the compute estimate did not move with the step, or the job's CPU work did not.
     * A rank's wall time holds its own run-queue wait but also the time it sleeps in the AllReduce while a peer waits
     * for a CPU, so subtracting each rank's own wait leaves most of the load in (gloo's 4 ranks on 2 cores, two identical runs: 21.9 → 39.4 ms, 1.5x "without wait").
     * What does separate the job from the machine is where the time went: a slower job spends it outside
     * communication (the compute estimate rises with the step), a busier machine stretches the CPU-run AllReduce while
     * the compute estimate stays or falls. Either direction: a faster run whose baseline waited longer is the same.
     */
    boolean explains() {
        boolean slower = "regression".equals(stepVerdict);
        if (!slower && !"improvement".equals(stepVerdict)) {
            return false;
        }
        MachineLoad busy = slower ? variant : baseline;
        MachineLoad calm = slower ? baseline : variant;
        // The machine can delay a synchronous step by at most the time the job's ranks waited for a CPU: the critical
        // path is running, in the run queue, or blocked on a peer that is. The slower run's extra wait, summed over its
        // ranks, must cover the change (a sleep slowed the step by 41 ms with 1 ms more wait; two identical baselines
        // 11.5 ms apart differed by 19.9 ms of wait).
        if (!(busy.jobWaitMs() - calm.jobWaitMs() >= stepChangeMs)) {
            return false;
        }
        // The wait can fall inside the compute window, so a compute estimate that rose with it is no evidence against.
        boolean waitAlone = slower ? !withoutWait.regression() : !withoutWait.improvement();
        return waitAlone || computeStill() || sameWork();
    }

    /**
     * The job did the same work in both runs: the CPU time of all its ranks per step did not change by the diagnose
     * rule (two identical baselines: 7.86 and 7.92 ms per rank and step while the step went 35.4 → 23.9 ms). A slower
     * job costs CPU (more math), or frees the CPU and waits less for it (a sleep, a sync): the slower run then did not
     * wait longer for a CPU.
     */
    boolean sameWork() {
        return jobCpu != null && !jobCpu.regression() && !jobCpu.improvement();
    }

    /** The compute estimate did not move with the step: not decided in its direction, and its ratio on the other side. */
    boolean computeStill() {
        if (compute == null) {
            return false;
        }
        boolean slower = "regression".equals(stepVerdict);
        return slower
                ? !compute.regression() && compute.ratio() < 1 + StepStats.MIN_EFFECT
                : !compute.improvement() && compute.ratio() > 1 - StepStats.MIN_EFFECT;
    }
}
