package io.pathproof.accept;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Source;
import io.pathproof.scenario.DType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Each rank's gradient-bucket AllReduces per iteration, as torch's flight recorder saw them: the evidence of the buckets
 * on every iteration of a run that records no comm hook (the default on NCCL, where the hook would be the
 * instrumentation's largest cost). Why the flight recorder can witness buckets:
 * <ul>
 *   <li>DDP's Reducer launches one AllReduce per bucket, in bucket-index order ({@code next_bucket_},
 *       reducer.cpp mark_bucket_ready), from autograd hooks, and every one of them is enqueued before
 *       {@code loss.backward()} returns (finalize_backward waits on them): an iteration's buckets are the AllReduces its
 *       rank created between its backward's start and end (the step rows' host phases, {@code time.time_ns()}; the
 *       recorder's {@code time_created_ns} is {@code c10::getTime()}, CLOCK_REALTIME on Linux: the same clock).</li>
 *   <li>A bucket holds gradients, which are floating point; an integer AllReduce in the same window is DDP's
 *       unused-parameter map ({@code all_reduce_local_used_map}, find_unused_parameters), not a bucket.</li>
 *   <li>The recorder is a ring ({@code TORCH_NCCL_TRACE_BUFFER_SIZE} entries): when its first kept entry is not the
 *       communicator's first ({@code record_id} 0), the iterations whose backward began before that entry may have
 *       lost some of theirs, and are not used.</li>
 *   <li>A comm hook that is not size-preserving (PowerSGD, the job's own) sends other collectives than the buckets:
 *       then these records witness nothing about buckets ({@link #sizePreserving}).</li>
 *   <li>Another DDP object of the job (a GAN's discriminator beside the watched generator; the manifest's
 *       {@code instrumentation.otherDdpObjects}) launches its own buckets' AllReduces on the same process group, in
 *       the same backward when one loss reaches both: the window cannot tell whose they are, so these records witness
 *       nothing about the watched model's buckets either (its hook records do: the instrumentation records them
 *       when a second DDP object appears).</li>
 * </ul>
 */
final class FlightBuckets {
    /** One bucket's AllReduce: elements, element type on the wire, when it was created, its GPU time (timing on), where. */
    record Collective(long numel, DType wireDtype, Long createdNs, Double durationMs, Source source) {
        long wireBytes() {
            return numel * wireDtype.elementSize();
        }
    }

    private FlightBuckets() {}

    /**
     * Rank → iteration → the iteration's bucket AllReduces in launch (= bucket-index) order. Empty when the run has no
     * flight-recorder entries, no step phases, or a comm hook that changes the collectives.
     */
    static TreeMap<Integer, TreeMap<Integer, List<Collective>>> byRankIteration(EvidenceView v) {
        TreeMap<Integer, TreeMap<Integer, List<Collective>>> out = new TreeMap<>();
        if (!sizePreserving(v.manifestAt("instrumentation", "commHook").asText(null))
                || !v.manifestAt("instrumentation", "otherDdpObjects").isEmpty()) {
            return out;
        }
        Map<Integer, List<Evidence.FlightRecord>> byRank = new HashMap<>();
        for (Evidence.FlightRecord fr : v.flightRecords()) {
            if (fr.rank() != null && fr.timeCreatedNs() != null) {
                byRank.computeIfAbsent(fr.rank(), k -> new ArrayList<>()).add(fr);
            }
        }
        Map<Integer, List<Evidence.Step>> steps = new HashMap<>();
        for (Evidence.Step s : EvidenceView.list(v.evidence().steps())) {
            if (s.hostPhases() != null) {
                steps.computeIfAbsent(s.rank(), k -> new ArrayList<>()).add(s);
            }
        }
        for (Map.Entry<Integer, List<Evidence.FlightRecord>> en : byRank.entrySet()) {
            List<Evidence.FlightRecord> records = en.getValue();
            records.sort(Comparator.comparingLong(Evidence.FlightRecord::recordId));
            long firstKept = records.get(0).recordId() == 0
                    ? Long.MIN_VALUE
                    : records.get(0).timeCreatedNs();
            for (Evidence.Step s : steps.getOrDefault(en.getKey(), List.of())) {
                Evidence.HostPhases h = s.hostPhases();
                if (h.backwardStartNs() < firstKept) {
                    continue;
                }
                List<Collective> it = new ArrayList<>();
                for (Evidence.FlightRecord fr : records) {
                    Collective c = bucketCollective(fr);
                    if (c != null
                            && fr.timeCreatedNs() >= h.backwardStartNs()
                            && fr.timeCreatedNs() <= h.backwardEndNs()) {
                        it.add(c);
                    }
                }
                if (!it.isEmpty()) {
                    out.computeIfAbsent(en.getKey(), k -> new TreeMap<>()).put(s.iteration(), it);
                }
            }
        }
        return out;
    }

    /** A floating-point AllReduce of one flat tensor, or null (another collective, or DDP's integer map). */
    private static Collective bucketCollective(Evidence.FlightRecord fr) {
        if (fr.profilingName() == null
                || !fr.profilingName().endsWith("all_reduce")
                || fr.inputSizes() == null
                || fr.inputSizes().size() != 1
                || fr.inputDtypes() == null
                || fr.inputDtypes().size() != 1) {
            return null;
        }
        DType dt;
        try {
            dt = DType.parse(fr.inputDtypes().get(0));
        } catch (RuntimeException ex) {
            return null; // DType holds the floating-point types only: an integer AllReduce is no gradient bucket
        }
        long n = 1;
        for (Long d : fr.inputSizes().get(0)) {
            n *= d == null ? 0 : d;
        }
        return new Collective(n, dt, fr.timeCreatedNs(), fr.durationMs(), fr.source());
    }

    /**
     * Whether the job's comm hook (as the instrumentation named it) sends each bucket as one AllReduce of its elements:
     * none, DDP's own allreduce, and the fp16/bf16 compression hooks (default_hooks.py: one all_reduce of the cast
     * buffer) do; PowerSGD and hooks pathproof does not know send something else.
     */
    static boolean sizePreserving(String hook) {
        if (hook == null || hook.isBlank() || hook.equals("null")) {
            return true;
        }
        String h = hook.toLowerCase(Locale.ROOT);
        return h.endsWith("allreduce_hook")
                || h.endsWith("fp16_compress_hook")
                || h.endsWith("bf16_compress_hook")
                || h.equals("builtin allreduce")
                || h.equals("builtin fp16_compress");
    }
}
