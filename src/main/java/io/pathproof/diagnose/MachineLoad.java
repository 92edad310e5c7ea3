package io.pathproof.diagnose;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.evidence.Evidence;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;

/**
 * The machine's load during one run, or during the runs of one configuration pooled, as every rank records it beside
 * each measured step ({@link Evidence.StepLoad}: process CPU ms, the main thread's run-queue wait from
 * {@code /proc/thread-self/schedstat}, the 1-minute load average; the step rows of the stand-in harness and of a
 * user's own job alike, so a user's job is judged with the same load evidence). Run-queue wait is time the rank was runnable
 * but not running: the machine was busy with something else. {@code jobWaitMs}: the median over steps of that wait
 * summed over the ranks, the most the machine can have added to one synchronous step. A step that is slower only by
 * that much is slower because of the machine, not the job (an A/A pair three minutes apart on a shared
 * 2-core machine read as +14 %). {@code stepsWithoutWait} and {@code jobCpuPerStep} hold one array per run, so a
 * comparison pools them like the step times.
 */
record MachineLoad(
        List<double[]> stepsWithoutWait,
        List<double[]> jobCpuPerStep,
        double jobWaitMs,
        double runQueueMs,
        double cpuMs,
        double loadavg1,
        Integer cpuCount) {
    MachineLoad {
        stepsWithoutWait = List.copyOf(stepsWithoutWait);
        jobCpuPerStep = List.copyOf(jobCpuPerStep);
    }

    /** The load of {@code e}, or null where the run recorded none (an older harness, or no schedstat). */
    static MachineLoad of(Evidence e) {
        return of(List.of(e));
    }

    /** The load of the runs of one configuration together; null when any of them recorded none. */
    static MachineLoad of(List<Evidence> runs) {
        List<double[]> without = new ArrayList<>();
        List<double[]> jobCpu = new ArrayList<>();
        List<Double> jobWaits = new ArrayList<>();
        List<Double> waits = new ArrayList<>();
        List<Double> cpus = new ArrayList<>();
        List<Double> loads = new ArrayList<>();
        Integer cpuCount = null;
        for (Evidence e : runs) {
            if (e == null || e.steps() == null) {
                return null;
            }
            TreeMap<Integer, Double> perIt = new TreeMap<>();
            TreeMap<Integer, Double> cpuPerIt = new TreeMap<>();
            TreeMap<Integer, Double> waitPerIt = new TreeMap<>();
            for (Evidence.Step s : e.steps()) {
                Evidence.StepLoad l = s.load();
                if (!s.measured() || l == null || l.runQueueMs() == null) {
                    continue;
                }
                // The slowest rank gates a synchronous step; without its wait, what the job itself took.
                perIt.merge(s.iteration(), Math.max(0.0, s.ms() - l.runQueueMs()), Math::max);
                waits.add(l.runQueueMs());
                waitPerIt.merge(s.iteration(), l.runQueueMs(), Double::sum);
                cpus.add(l.cpuMs());
                // The job's work in this step: the CPU time of all its ranks together, whatever the machine gave them.
                cpuPerIt.merge(s.iteration(), l.cpuMs(), Double::sum);
                if (l.loadavg1() != null) {
                    loads.add(l.loadavg1());
                }
            }
            if (perIt.isEmpty()) {
                return null;
            }
            without.add(perIt.values().stream().mapToDouble(Double::doubleValue).toArray());
            jobCpu.add(
                    cpuPerIt.values().stream().mapToDouble(Double::doubleValue).toArray());
            jobWaits.addAll(waitPerIt.values());
            JsonNode count = e.manifest() == null
                    ? null
                    : e.manifest().path("machineLoad").path("cpuCount");
            if (cpuCount == null && count != null && count.canConvertToInt()) {
                cpuCount = count.asInt();
            }
        }
        if (without.isEmpty()) {
            return null;
        }
        return new MachineLoad(without, jobCpu, median(jobWaits), median(waits), median(cpus), median(loads), cpuCount);
    }

    private static double median(List<Double> l) {
        return l.isEmpty()
                ? Double.NaN
                : StepStats.median(l.stream().mapToDouble(Double::doubleValue).toArray());
    }

    /** Whether every run recorded the job's CPU time per step. */
    boolean hasJobCpu() {
        return jobCpuPerStep.stream().allMatch(a -> a.length > 0);
    }

    /**
     * The load in words. Deliberately no wall time: the step time of a run has one definition and one median
     * ({@link Diagnosis#stepTimes}); a second "wall" figure per rank here read as a second median of the same run.
     */
    String describe() {
        return String.format(
                Locale.ROOT,
                "run-queue wait %.3f ms per rank and step (%.3f ms per step summed over the ranks), CPU %.3f ms per "
                        + "rank and step; load average %.2f%s",
                runQueueMs,
                jobWaitMs,
                cpuMs,
                loadavg1,
                cpuCount == null ? "" : " on " + cpuCount + " CPU(s)");
    }
}
