package io.pathproof.diagnose;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.evidence.Evidence;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;

/**
 * The machine's load during one run, as the harness records it beside each measured step (manifest
 * {@code machineLoad.ranks[]}: wall ms, process CPU ms, the main thread's run-queue wait from
 * {@code /proc/thread-self/schedstat}, the 1-minute load average). Run-queue wait is time the rank was runnable but
 * not running: the machine was busy with something else. {@code jobWaitMs}: the median over steps of that wait summed over
 * the ranks, the most the machine can have added to one synchronous step. A step that is slower only by that much is slower because of
 * the machine, not the job (issue 11: an A/A pair three minutes apart on a shared 2-core machine read as +14 %).
 */
record MachineLoad(double[] stepsWithoutWait, double[] jobCpuPerStep, double jobWaitMs, double runQueueMs, double cpuMs, double wallMs, double loadavg1,
    Integer cpuCount) {
  /** The load of {@code e}, or null where the run recorded none (an older harness, or no schedstat). */
  static MachineLoad of(Evidence e) {
    JsonNode m = e.manifest() == null ? null : e.manifest().path("machineLoad");
    if (m == null || !m.path("ranks").isArray()) {
      return null;
    }
    TreeMap<Integer, Double> perIt = new TreeMap<>();
    TreeMap<Integer, Double> cpuPerIt = new TreeMap<>();
    TreeMap<Integer, Double> waitPerIt = new TreeMap<>();
    List<Double> waits = new ArrayList<>();
    List<Double> cpus = new ArrayList<>();
    List<Double> walls = new ArrayList<>();
    List<Double> loads = new ArrayList<>();
    for (JsonNode r : m.path("ranks")) {
      JsonNode its = r.path("iterations");
      for (int i = 0; i < its.size(); i++) {
        JsonNode wall = r.path("wallMs").path(i);
        JsonNode wait = r.path("runQueueMs").path(i);
        if (!wall.isNumber() || !wait.isNumber()) {
          continue;
        }
        // The slowest rank gates a synchronous step; without its wait, what the job itself took.
        perIt.merge(its.get(i).asInt(), Math.max(0.0, wall.asDouble() - wait.asDouble()), Math::max);
        waits.add(wait.asDouble());
        waitPerIt.merge(its.get(i).asInt(), wait.asDouble(), Double::sum);
        walls.add(wall.asDouble());
        if (r.path("cpuMs").path(i).isNumber()) {
          cpus.add(r.path("cpuMs").path(i).asDouble());
          // The job's work in this step: the CPU time of all its ranks together, whatever the machine gave them.
          cpuPerIt.merge(its.get(i).asInt(), r.path("cpuMs").path(i).asDouble(), Double::sum);
        }
        if (r.path("loadavg1").path(i).isNumber()) {
          loads.add(r.path("loadavg1").path(i).asDouble());
        }
      }
    }
    if (perIt.isEmpty()) {
      return null;
    }
    return new MachineLoad(perIt.values().stream().mapToDouble(Double::doubleValue).toArray(),
        cpuPerIt.values().stream().mapToDouble(Double::doubleValue).toArray(), median(new ArrayList<>(waitPerIt.values())), median(waits), median(cpus), median(walls),
        median(loads), m.path("cpuCount").canConvertToInt() ? m.path("cpuCount").asInt() : null);
  }

  private static double median(List<Double> l) {
    return l.isEmpty() ? Double.NaN : StepStats.median(l.stream().mapToDouble(Double::doubleValue).toArray());
  }

  String describe() {
    return String.format(Locale.ROOT, "per rank and step: wall %.3f ms, CPU %.3f ms, run-queue wait %.3f ms; load average %.2f%s", wallMs,
        cpuMs, runQueueMs, loadavg1, cpuCount == null ? "" : " on " + cpuCount + " CPU(s)");
  }
}
