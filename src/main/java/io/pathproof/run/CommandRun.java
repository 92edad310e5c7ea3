package io.pathproof.run;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import io.pathproof.rundir.LaunchRequest;
import io.pathproof.rundir.LaunchStart;
import io.pathproof.rundir.RunManifest;
import io.pathproof.rundir.RunOutcome;
import io.pathproof.rundir.RunOutcome.RankExit;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code pathproof run --out DIR -- COMMAND}: the user's own command, started as given, with pathproof's
 * instrumentation reaching every rank through the environment (the package first on PYTHONPATH, its sitecustomize,
 * the run directory, the evidence variables of NCCL and torch). The command's stdout and stderr pass through and are
 * kept in the run directory; what each rank did is read back from the status files the ranks write.
 */
final class CommandRun {
  static final String STDOUT = "command.stdout";
  static final String STDERR = "command.stderr";
  private static final Pattern RANK_FILE = Pattern.compile("^rank(\\d+)\\.json$");

  private CommandRun() {}

  static Runner.Result run(Runner.CommandRequest req) {
    Injection inj = Injection.parse(req.inject(), 0);
    Emulation.Library emuLib = req.emulate() == null ? null : Emulation.checkMachine(req.emulate(), inj);
    if (req.emulate() != null && req.emulate().cluster()) {
      Integer started = nprocPerNodeOf(req.command());
      int ranks = req.emulate().topology().gpuCount();
      if (started != null && started != ranks) {
        throw PathproofException.usage("--emulate " + req.emulate().topologyLabel() + ": the command starts "
            + started + " rank(s) (--nproc_per_node " + started + ") but the emulated cluster has "
            + req.emulate().nodes() + " nodes x " + req.emulate().ranksPerNode() + " = " + ranks
            + ": one launcher starts every emulated rank here, so give it --nproc_per_node " + ranks);
      }
    }
    String sealSha = null;
    if (req.prediction() != null) {
      Prediction p = PredictionIo.readVerified(req.prediction()); // exit 9 on a missing or broken seal
      sealSha = p.seal().sha256();
    }
    Path dir = req.out().toAbsolutePath().normalize();
    int node = req.nodeRank() != null ? req.nodeRank() : nodeRankOf(req.command());
    // This launcher's own files: the run directory for node 0; node-N/ for a later node's launcher sharing it
    // (its ranks still write their files into the run directory, as every rank has its own names).
    Path home = node == 0 ? dir : dir.resolve("node-" + node);
    prepare(dir, home, node);
    Path pythonPath = PythonPackage.extract(home);
    RunManifest.write(home, LaunchRequest.builder(req.tool(), Instant.now().toString())
        .commandLine(Injection.blind(req.commandLine(), "--inject")).command(req.command()).topology(req.topology())
        .timeoutSec(req.timeoutSec()).prediction(req.prediction() == null ? null : req.prediction().toString(), sealSha).build());
    inj.writeSealed(home); // blind by construction: the ranks read their knobs there, the manifest never names them
    RunManifest.write(home, RunOutcome.pending(null));

    Map<String, String> added = environment(req, dir, pythonPath, inj, System.getenv());
    added.put("PATHPROOF_NODE", Integer.toString(node));
    added.put("PATHPROOF_FAULT", home.resolve(Injection.SEALED_FILE).toString());
    LaunchStart.Builder started = LaunchStart.builder().launcher("command").hookEvery(req.hookEvery());
    if (req.emulate() != null) {
      emulate(req, home, emuLib, added, started);
    }
    Map<String, String> shown = new TreeMap<>(added);
    inj.env().keySet().forEach(shown::remove);
    RunManifest.write(home, started.launcherEnv(shown).rankArgv(List.of(req.command())).build());

    ProcessBuilder pb = new ProcessBuilder(req.command()).redirectInput(ProcessBuilder.Redirect.INHERIT);
    pb.environment().putAll(added);
    Process proc;
    try {
      proc = pb.start();
    } catch (IOException e) {
      String msg = "run: cannot start " + req.command().get(0) + ": " + e.getMessage();
      RunManifest.write(home, RunOutcome.failed(Instant.now().toString(), ExitCode.RANK_FAILED, msg));
      return new Runner.Result(dir, false, ExitCode.RANK_FAILED, msg, List.of(), null);
    }
    Thread reaper = new Thread(() -> {
      if (proc.isAlive()) {
        RankProcesses.killTree(proc);
      }
    }, "pathproof-command-reaper");
    Runtime.getRuntime().addShutdownHook(reaper);
    Thread out = tee(proc.getInputStream(), home.resolve(STDOUT), req.passThrough() ? System.out : null);
    Thread err = tee(proc.getErrorStream(), home.resolve(STDERR), req.passThrough() ? System.err : null);
    boolean timedOut = false;
    int code;
    try {
      if (req.timeoutSec() > 0 && !proc.waitFor(req.timeoutSec(), TimeUnit.SECONDS)) {
        timedOut = true;
        RankProcesses.killTree(proc);
      }
      code = proc.waitFor();
      out.join(5_000);
      err.join(5_000);
    } catch (InterruptedException e) {
      RankProcesses.killTree(proc);
      Thread.currentThread().interrupt();
      throw new PathproofException(ExitCode.RANK_FAILED, "run: interrupted; the command was killed; files kept in " + dir);
    } finally {
      try {
        Runtime.getRuntime().removeShutdownHook(reaper);
      } catch (IllegalStateException e) {
        // the JVM is shutting down; the reaper runs
      }
    }
    return finish(dir, home, node, req, code, timedOut);
  }

  /**
   * {@code --emulate} for a user's command: the emulated machine's NCCL topology, the patched NCCL preloaded, and
   * what the ranks take by local rank (the instrumentation maps every rank's CUDA device to the one real GPU before
   * the job picks its device): the emulated busIds, and on a cluster each node's host id and topology file.
   *
   * <p>A cluster's ranks come from the command's one launcher (e.g. one torchrun with --nproc_per_node N x P), and
   * the instrumentation puts local rank L on node L / P. One launcher, not N: the command runs as given (N torchruns
   * would need its --nnodes, --node_rank and rendezvous rewritten), its ranks' global rank equals their local rank,
   * and node by node is how NCCL and the model number the ranks of a cluster.
   */
  private static void emulate(Runner.CommandRequest req, Path home, Emulation.Library lib, Map<String, String> env,
      LaunchStart.Builder started) {
    Runner.Emulate emu = req.emulate();
    PythonProbe.Python py = PythonProbe.find(null);
    Emulation.RealGpu real = Emulation.probe(py.executable());
    Emulation.Nodes nodes = Emulation.write(home, emu, real.busId());
    env.putAll(Emulation.env(home, lib, emu));
    env.put("PATHPROOF_EMULATE_BUSIDS", String.join(",", nodes.busIds()));
    if (emu.cluster()) {
      env.put("PATHPROOF_EMULATE_NODES", nodes.json(home));
      // The in-run prediction is made for the cluster NCCL sees (each node's NIC as the emulation presents it).
      env.put("PATHPROOF_TOPOLOGY", home.resolve(Emulation.CLUSTER_JSON).toString());
      env.remove("PATHPROOF_TOPOLOGY_NODES");
    } else {
      env.putIfAbsent("PATHPROOF_TOPOLOGY", emu.topologyLabel());
    }
    started.emulation(Emulation.manifest(emu, lib, real, nodes, emu.topology().gpuCount()));
  }

  /**
   * The ranks a torchrun command starts on its node ({@code --nproc_per_node N}, {@code --nproc-per-node=N}), or
   * null when the command does not say it as a number (another launcher, "gpu", "auto").
   */
  static Integer nprocPerNodeOf(List<String> command) {
    for (int i = 0; i < command.size(); i++) {
      String a = command.get(i);
      String v = null;
      if ((a.equals("--nproc_per_node") || a.equals("--nproc-per-node")) && i + 1 < command.size()) {
        v = command.get(i + 1);
      } else if (a.startsWith("--nproc_per_node=") || a.startsWith("--nproc-per-node=")) {
        v = a.substring(a.indexOf('=') + 1);
      }
      if (v != null) {
        try {
          return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
          return null;
        }
      }
    }
    return null;
  }

  /**
   * The node a launcher stands for: {@code --node-rank} of pathproof run, else torchrun's own {@code --node_rank} /
   * {@code --node-rank} in the command (read, never changed), else 0. srun starts every node's ranks from one
   * launcher, so it is node 0 whatever the ranks' SLURM_NODEID.
   */
  static int nodeRankOf(List<String> command) {
    for (int i = 0; i < command.size(); i++) {
      String a = command.get(i);
      String v = null;
      if ((a.equals("--node_rank") || a.equals("--node-rank")) && i + 1 < command.size()) {
        v = command.get(i + 1);
      } else if (a.startsWith("--node_rank=") || a.startsWith("--node-rank=")) {
        v = a.substring(a.indexOf('=') + 1);
      }
      if (v != null) {
        try {
          return Math.max(0, Integer.parseInt(v.trim()));
        } catch (NumberFormatException e) {
          return 0;
        }
      }
    }
    return 0;
  }

  /**
   * Node 0's launcher needs a new run directory, or one where only later nodes' launchers have begun (node-N/); a
   * later node's launcher joins whatever is there and needs its own node-N/ to be new.
   */
  private static void prepare(Path dir, Path home, int node) {
    if (node == 0) {
      try (Stream<Path> s = Files.exists(dir) ? Files.list(dir) : Stream.empty()) {
        if (s.anyMatch(p -> !p.getFileName().toString().matches("node-\\d+"))) {
          throw PathproofException.usage("--out " + dir + ": not empty; a run directory holds one run (choose a new one)");
        }
        Files.createDirectories(dir);
      } catch (IOException e) {
        throw PathproofException.badInput("--out " + dir + ": cannot create: " + e.getMessage());
      }
      return;
    }
    Runner.prepareDir(home);
  }

  /**
   * What the command's processes get on top of this process's environment: the instrumentation (PYTHONPATH first,
   * the run directory, how to run pathproof for the in-run prediction, the sampling), the evidence variables of NCCL
   * and torch unless the user set them, and the injected variables.
   */
  static Map<String, String> environment(Runner.CommandRequest req, Path dir, Path pythonPath, Injection inj,
      Map<String, String> parent) {
    Map<String, String> env = new LinkedHashMap<>();
    String pp = parent.get("PYTHONPATH");
    env.put("PYTHONPATH", pythonPath + (pp == null || pp.isEmpty() ? "" : java.io.File.pathSeparator + pp));
    env.put("PATHPROOF_OUT", dir.toString());
    env.put("PATHPROOF_CLI", Json.mapper().valueToTree(selfCommand()).toString());
    env.put("PATHPROOF_HOOK_EVERY", req.hookEvery() == null ? "auto" : Integer.toString(req.hookEvery()));
    env.put("PATHPROOF_WARMUP", Integer.toString(req.warmup()));
    env.put("PATHPROOF_PROFILE_ITERS", Integer.toString(req.profileIters()));
    if (req.topology() != null) {
      env.put("PATHPROOF_TOPOLOGY", req.topology());
    }
    if (req.topologyNodes() != null) {
      env.put("PATHPROOF_TOPOLOGY_NODES", Integer.toString(req.topologyNodes()));
    }
    if (req.prediction() != null) {
      env.put("PATHPROOF_PREDICT", "0");
    }
    io.pathproof.rundir.Vocabulary.rankEnv().forEach((k, v) -> {
      if (!parent.containsKey(k)) {
        env.put(k, v);
      }
    });
    if (!parent.containsKey("NCCL_TOPO_DUMP_FILE")) {
      env.put("NCCL_TOPO_DUMP_FILE", dir.resolve("nccl-topo.xml").toString());
    }
    if (!parent.containsKey("NCCL_GRAPH_DUMP_FILE")) {
      env.put("NCCL_GRAPH_DUMP_FILE", dir.resolve("nccl-graph.xml").toString());
    }
    env.put("PYTHONUNBUFFERED", "1");
    env.putAll(inj.env());
    return env;
  }

  /**
   * How a rank runs this pathproof: the same Java, the same class path, the CLI's main class. A short-lived JVM
   * that stops at the first JIT tier starts faster, and a prediction is a few milliseconds of work.
   */
  static List<String> selfCommand() {
    String java = ProcessHandle.current().info().command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    return List.of(java, "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-cp", System.getProperty("java.class.path"),
        "io.pathproof.cli.Main");
  }

  /** Copies a stream of the command to its file in the run directory and, if given, to this process's own stream. */
  private static Thread tee(InputStream in, Path file, PrintStream mirror) {
    Thread t = new Thread(() -> {
      byte[] buf = new byte[8192];
      try (InputStream src = in; OutputStream f = Files.newOutputStream(file)) {
        int n;
        while ((n = src.read(buf)) > 0) {
          f.write(buf, 0, n);
          f.flush();
          if (mirror != null) {
            mirror.write(buf, 0, n);
            mirror.flush();
          }
        }
      } catch (IOException e) {
        // the command closed its end: what was read is kept
      }
    }, "pathproof-tee-" + file.getFileName());
    t.setDaemon(true);
    t.start();
    return t;
  }

  /** The ranks' own status files, by rank: how each ended as it said itself. */
  static Map<Integer, JsonNode> rankStatus(Path dir) {
    Map<Integer, JsonNode> out = new TreeMap<>();
    try (Stream<Path> s = Files.list(dir)) {
      for (Path p : s.toList()) {
        Matcher m = RANK_FILE.matcher(p.getFileName().toString());
        if (m.matches()) {
          try {
            out.put(Integer.parseInt(m.group(1)), Json.mapper().readTree(p.toFile()));
          } catch (IOException | NumberFormatException e) {
            out.put(Integer.parseInt(m.group(1)), Json.mapper().createObjectNode().put("status", "unreadable status file"));
          }
        }
      }
    } catch (IOException e) {
      // no directory listing: no rank reported
    }
    return out;
  }

  private static Runner.Result finish(Path dir, Path home, int node, Runner.CommandRequest req, int code, boolean timedOut) {
    Map<Integer, JsonNode> ranks = rankStatus(dir);
    ranks.values().removeIf(st -> st.path("node").asInt(0) != node); // the other nodes' launchers report theirs
    List<RankExit> exits = new ArrayList<>();
    exits.add(new RankExit(-1, code, timedOut ? "killed after the timeout" : "exited", STDOUT, STDERR));
    String firstBad = null;
    String firstEnd = null;
    int bad = 0;
    for (Map.Entry<Integer, JsonNode> e : ranks.entrySet()) {
      String status = e.getValue().path("status").asText("no status");
      boolean done = status.equals("finished");
      Integer rankCode = done ? Integer.valueOf(0) : e.getValue().path("exitCode").isInt() ? e.getValue().path("exitCode").asInt() : null;
      String ended = done ? "finished" : describe(e.getValue());
      exits.add(new RankExit(e.getKey(), rankCode, ended, STDOUT, STDERR));
      // The rank that failed first is the cause; the others usually fail because it left (a peer closed).
      String end = e.getValue().path("end").asText("~"); // no end time: it never said, so it sorts last
      if (!done) {
        bad++;
        if (firstBad == null || end.compareTo(firstEnd) < 0) {
          firstBad = "rank " + e.getKey() + ": " + ended.lines().findFirst().orElse(ended);
          firstEnd = end;
        }
      }
    }
    if (bad > 1) {
      firstBad += " (first of " + bad + " ranks that did not finish)";
    }
    int exit;
    String msg;
    if (timedOut) {
      exit = ExitCode.TIMEOUT;
      msg = "run: timed out after " + req.timeoutSec() + " s; the command was killed; files kept in " + dir;
    } else if (code != 0) {
      exit = ExitCode.RANK_FAILED;
      msg = "run: the command exited with status " + code + (firstBad == null ? "" : "; " + firstBad) + "; see "
          + home.resolve(STDERR);
    } else if (ranks.isEmpty()) {
      exit = ExitCode.BAD_INPUT;
      msg = "run: the command exited 0 but no rank built a DistributedDataParallel model: nothing was recorded in " + dir;
    } else if (firstBad != null) {
      exit = ExitCode.RANK_FAILED;
      msg = "run: the command exited 0 but " + firstBad + "; see " + home.resolve(STDERR);
    } else {
      exit = ExitCode.OK;
      msg = null;
    }
    boolean complete = exit == ExitCode.OK;
    if (complete) {
      RunManifest.remove(home, "incompleteReason");
    }
    RunManifest.write(home, new RunOutcome(Instant.now().toString(), complete, exit, msg, exits));
    return new Runner.Result(dir, complete, exit, msg, exits, null);
  }

  private static String describe(JsonNode status) {
    String s = status.path("status").asText("no status");
    if (status.hasNonNull("exception")) {
      return s + " (" + status.path("exception").asText() + ")";
    }
    if (status.hasNonNull("reason")) {
      return s + " (" + status.path("reason").asText() + ")";
    }
    return s.equals("running") ? "no exit record: the process ended without Python seeing it (killed, or a crash)" : s;
  }
}
