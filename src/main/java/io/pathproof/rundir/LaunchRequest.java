package io.pathproof.rundir;

import java.util.List;

/**
 * The manifest's first turn: what {@code pathproof run} was asked to do, written before any rank starts. In a run of
 * pathproof's own stand-in job the workload and sizes are the launcher's; in a run that wraps a user's command
 * ({@code command} non-empty) the job decides them and they are null here. {@code commandLine} never names an
 * injected fault (it is in {@code fault.sealed.json}).
 */
public record LaunchRequest(
    String schema,
    String tool,
    List<String> commandLine,
    List<String> command,
    String start,
    String workloadName,
    String workloadSource,
    String topology,
    String backendRequested,
    Integer nproc,
    Integer nnodes,
    Integer nodeRank,
    Integer iters,
    Integer warmup,
    Long timeoutSec,
    PredictionRef prediction) {
  public LaunchRequest {
    commandLine = commandLine == null ? List.of() : List.copyOf(commandLine);
    command = command == null ? List.of() : List.copyOf(command);
  }

  /** The sealed prediction a run was started for: its file as given and its seal, or both null. */
  public record PredictionRef(String file, String sealSha256) {}
}
