package io.pathproof.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What one reader got from one file, one small record per format: each reader fills only its own, and
 * {@link Assembly} joins them across files. The defaults are what a format does not say.
 */
sealed interface Facts {
    /** GPU kernels: a trace's, ncu's, or the launches an emulated NCCL printed in its log. */
    default List<Evidence.Kernel> kernels() {
        return List.of();
    }

    /** Conclusions the reader drew within its file. */
    default List<Evidence.Finding> findings() {
        return List.of();
    }

    /** The NCCL version the file names, or null. */
    default String ncclVersion() {
        return null;
    }

    /** Where {@link #ncclVersion()} was read. */
    default Source ncclVersionSource() {
        return null;
    }

    /**
     * An NCCL debug log, or DDP's own debug log read by the same reader: the comm-init facts per rank of each
     * communicator with its COLL and TUNING aggregates, the environment NCCL printed, WARN lines, the emulator's lines
     * (how many, the first, its kernel launches) and DDP's debug-log messages.
     */
    record Log(
            List<CommRank> commRanks,
            String ncclVersion,
            Source ncclVersionSource,
            Map<String, String> env,
            Map<String, Source> envSources,
            List<Evidence.Warning> warnings,
            List<Evidence.Finding> findings,
            long emulationLines,
            Source emulationFirst,
            List<Evidence.Kernel> kernels,
            List<Evidence.DdpLogMessage> ddpLog)
            implements Facts {}

    /**
     * A timeline of one rank (Kineto trace, nsys export): kernels, ranges, copies, the trace's distributedInfo and clock,
     * and the collectives it recorded ({@code nccl:*} ranges and {@code record_param_comms} ops, counted apart).
     */
    record Trace(
            List<Evidence.Kernel> kernels,
            List<Evidence.Range> ranges,
            List<Evidence.Copy> copies,
            List<Evidence.Distributed> distributed,
            Long baseNs,
            Source baseSource,
            Integer worldSize,
            String backend,
            long collectiveMarkers,
            long paramCommsOps,
            Source firstCollectiveMarker,
            List<Evidence.Finding> findings)
            implements Facts {
        /** The collectives the trace recorded: each has an nccl:* range and a record_param_comms op, so the larger. */
        long collectives() {
            return Math.max(collectiveMarkers, paramCommsOps);
        }

        /** A trace being read: what {@link KinetoReader} and {@link NsysReader} add to as they go. */
        static final class Builder {
            final List<Evidence.Kernel> kernels = new ArrayList<>();
            final List<Evidence.Range> ranges = new ArrayList<>();
            final List<Evidence.Copy> copies = new ArrayList<>();
            final List<Evidence.Distributed> distributed = new ArrayList<>();
            final List<Evidence.Finding> findings = new ArrayList<>();
            Long baseNs;
            Source baseSource;
            Integer worldSize;
            /** The trace's own backend (distributedInfo.backend): a gloo run launches no NCCL kernel. */
            String backend;

            long collectiveMarkers;
            long paramCommsOps;
            Source firstCollectiveMarker;

            /** An nccl:* range (a Work's title). */
            void marker(Source src) {
                if (collectiveMarkers++ == 0) {
                    firstCollectiveMarker = src;
                }
            }

            Trace build() {
                return new Trace(
                        kernels,
                        ranges,
                        copies,
                        distributed,
                        baseNs,
                        baseSource,
                        worldSize,
                        backend,
                        collectiveMarkers,
                        paramCommsOps,
                        firstCollectiveMarker,
                        findings);
            }
        }
    }

    /** Nsight Compute's kernels (counters of single kernels, no timeline). */
    record Ncu(List<Evidence.Kernel> kernels) implements Facts {}

    /** A flight-recorder dump: the dump as a whole and its entries. */
    record Flight(
            List<Evidence.FlightDump> dumps,
            List<Evidence.FlightRecord> records,
            String ncclVersion,
            Source ncclVersionSource)
            implements Facts {}

    /** What pathproof's NCCL profiler plugin recorded for one rank, its decisions aggregated. */
    record Profiler(Integer apiVersion, List<Evidence.ProfiledColl> colls, List<Evidence.Finding> findings)
            implements Facts {}

    /** A dump of {@code _get_ddp_logging_data()} (any file name); its rank is the data's own, the file's rank. */
    record DdpLogging(JsonNode data) implements Facts {}

    /** A file whose reader failed before it could hand over anything. */
    record Unread() implements Facts {}
}
