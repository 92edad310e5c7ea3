package io.pathproof.rundir;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;

/**
 * The manifest's turn that rank 0 of the job writes (Python: pathproof's stand-in harness, or the instrumentation of
 * a user's own job, {@code python/pathproof_torch}); Java only reads it. The {@code harness*} times are when rank 0's
 * instrumentation began and ended, whichever of the two wrote them. {@code backend}, {@code hookEvery} and
 * {@code ncclProfilerPlugin} are also launcher keys: the job's value is the one that ran. Lists are null when the job
 * did not write them (a rank that died early).
 */
public record JobFacts(
        String harnessStart,
        Boolean harnessFinished,
        String harnessEnd,
        String backend,
        Integer worldSize,
        Integer localWorldSize,
        List<String> argv,
        JsonNode workload,
        Versions versions,
        String hostname,
        Map<String, String> env,
        List<Gpu> gpus,
        String nvidiaSmiTopoM,
        List<Host> hosts,
        List<String> parameterOrder,
        List<Integer> profiledIterations,
        List<Integer> hookedIterations,
        Integer hookEvery,
        JsonNode ncclProfilerPlugin,
        JsonNode machineLoad,
        JsonNode instrumentation) {

    /**
     * The versions the job imported or found: torch, Python, CUDA (torch's build), NCCL (the library the rank loaded, by
     * its own ncclGetVersion; manifests of earlier pathproof hold torch's build version there), ncclBuild (the NCCL
     * headers torch was built against: torch.cuda.nccl.version(), a compile-time constant), the GPU driver.
     */
    public record Versions(String torch, String python, String cuda, String nccl, String ncclBuild, String driver) {}

    /** One visible GPU as torch and nvidia-smi describe it. */
    public record Gpu(
            Integer index,
            String name,
            String computeCapability,
            Long memoryBytes,
            Integer multiProcessors,
            String busId) {}

    /** One rank's process: its global and local rank, host, pid and device. */
    public record Host(Integer rank, Integer localRank, String host, Integer pid, String device) {}
}
