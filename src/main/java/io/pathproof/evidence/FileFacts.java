package io.pathproof.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What one reader got from one file; merged by {@link Ingest} in input order, so the result is deterministic. */
final class FileFacts {
  /** Most problems listed per file; the rest are counted in one last problem, so nothing is silently lost. */
  static final int MAX_PROBLEMS = 200;

  final String file;
  final FileKind kind;
  Integer rank;
  long bytes;
  long facts;
  final List<Problem> problems = new ArrayList<>();
  long problemsDropped;

  // NCCL log
  final List<CommRank> commRanks = new ArrayList<>();
  String ncclVersion;
  Source ncclVersionSource;
  final Map<String, String> env = new LinkedHashMap<>();
  final Map<String, Source> envSources = new LinkedHashMap<>();
  final List<Evidence.Warning> warnings = new ArrayList<>();
  final List<Evidence.Finding> findings = new ArrayList<>();
  /** EMULATOR/ORACLE lines of pathproof's NCCL emulator: how many, the first. */
  long emulationLines;
  Source emulationFirst;

  // traces
  final List<Evidence.Kernel> kernels = new ArrayList<>();
  final List<Evidence.Range> ranges = new ArrayList<>();
  final List<Evidence.FlightRecord> flight = new ArrayList<>();
  final List<Evidence.FlightDump> flightDumps = new ArrayList<>();
  final List<Evidence.Distributed> distributed = new ArrayList<>();
  final List<Evidence.Copy> copies = new ArrayList<>();
  /** The trace's baseTimeNanoseconds and where it was read; null when the trace has none. */
  Long traceBaseNs;
  Source traceBaseSource;
  Integer worldSize;
  /** The trace's own backend (distributedInfo.backend): a gloo run launches no NCCL kernel. */
  String backend;
  /** nccl:* ranges (Work titles) seen; each collective also has a record_param_comms op, counted apart. */
  long collectiveMarkers;
  long paramCommsOps;
  Source firstCollectiveMarker;

  // NCCL profiler plugin
  NcclProfilerReader.Facts profiler;

  /** Messages of DDP's own debug log (TORCH_DISTRIBUTED_DEBUG) in a text log, in file order. */
  final List<Evidence.DdpLogMessage> ddpLog = new ArrayList<>();

  /** A dump of {@code _get_ddp_logging_data()} (any file name); its rank is {@link #rank}, the data's own. */
  JsonNode ddpLogging;

  long collectives() {
    return Math.max(collectiveMarkers, paramCommsOps);
  }

  FileFacts(String file, FileKind kind, Integer rank) {
    this.file = file;
    this.kind = kind;
    this.rank = rank;
  }

  void problem(long line, String message) {
    if (problems.size() < MAX_PROBLEMS) {
      problems.add(new Problem(file, line, message));
    } else {
      problemsDropped++;
    }
  }

  List<Problem> allProblems() {
    if (problemsDropped == 0) {
      return problems;
    }
    List<Problem> all = new ArrayList<>(problems);
    all.add(new Problem(file, 0, problemsDropped + " more problems in this file not listed"));
    return all;
  }
}
