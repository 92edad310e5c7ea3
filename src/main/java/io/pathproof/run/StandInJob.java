package io.pathproof.run;

import io.pathproof.scenario.Workload;
import java.util.Objects;

/**
 * pathproof's own DDP job: the {@code workload} its harness builds, and how the manifest names it and the machine
 * ({@code workloadLabel}, {@code topologyLabel}: a preset's name or a file; either may be null).
 */
public record StandInJob(Workload workload, String workloadLabel, String topologyLabel) {
    public StandInJob {
        Objects.requireNonNull(workload, "workload");
    }
}
