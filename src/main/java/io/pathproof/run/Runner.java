package io.pathproof.run;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.predict.PredictionIo;
import io.pathproof.rundir.LaunchRequest;
import io.pathproof.rundir.LaunchStart;
import io.pathproof.rundir.RunManifest;
import io.pathproof.rundir.RunOutcome;
import io.pathproof.rundir.RunOutcome.RankExit;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Workload;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The public entry of the run room: turns a {@link Request} into a run directory written by real torch processes
 * (one per rank), or, for Slurm, into the exact {@code srun} command that would do so.
 */
public final class Runner {
  private Runner() {}

  /** Which communication backend the ranks use; AUTO = nccl when CUDA GPUs are visible, else gloo. */
  public enum Backend { NCCL, GLOO, AUTO }

  /**
   * How ranks are started. AUTO = {@code python -m torch.distributed.run} where it works, else SPAWN (each rank
   * started here with torchrun's worker environment). SRUN only prints the command (a dry run).
   */
  public enum Launcher { AUTO, SPAWN, TORCHRUN, SRUN }

  /** Everything {@code pathproof run} was asked to do. {@code commandLine} is recorded in the manifest as given. */
  public record Request(
      Workload workload,
      String workloadLabel,
      String topologyLabel,
      Backend backend,
      int nproc,
      int nnodes,
      int nodeRank,
      String rdzvEndpoint,
      int iters,
      int warmup,
      int profileIters,
      List<String> inject,
      Path prediction,
      long timeoutSec,
      Path out,
      Launcher launcher,
      String python,
      boolean overhead,
      List<String> commandLine,
      String tool) {
    public Request {
      Objects.requireNonNull(workload, "workload");
      Objects.requireNonNull(out, "out");
      backend = backend == null ? Backend.AUTO : backend;
      launcher = launcher == null ? Launcher.AUTO : launcher;
      inject = inject == null ? List.of() : List.copyOf(inject);
      commandLine = commandLine == null ? List.of() : List.copyOf(commandLine);
      tool = tool == null ? "pathproof" : tool;
      if (nproc < 1) {
        throw PathproofException.usage("--nproc: must be >= 1, got " + nproc);
      }
      if (nnodes < 1) {
        throw PathproofException.usage("--nnodes: must be >= 1, got " + nnodes);
      }
      if (nodeRank < 0 || nodeRank >= nnodes) {
        throw PathproofException.usage("--node-rank: must be in 0.." + (nnodes - 1) + ", got " + nodeRank);
      }
      if (nnodes > 1 && (rdzvEndpoint == null || rdzvEndpoint.isBlank())) {
        throw PathproofException.usage("--rdzv-endpoint H:P is required with --nnodes > 1");
      }
      if (iters < 1) {
        throw PathproofException.usage("--iters: must be >= 1, got " + iters);
      }
      if (warmup < 0 || profileIters < 0) {
        throw PathproofException.usage("--warmup/--profile-iters: must be >= 0");
      }
      if (timeoutSec < 0) {
        throw PathproofException.usage("--timeout: must be >= 0 (0 = none), got " + timeoutSec);
      }
    }

    int worldSize() {
      return nproc * nnodes;
    }

    /**
     * A request to run {@code workload} into {@code out}, everything else by name and otherwise as {@code pathproof
     * run} defaults it: one node of one rank, 5 warm-up and 48 measured iterations, 3 under the profiler, no timeout.
     */
    public static Builder builder(Workload workload, Path out) {
      return new Builder(workload, out);
    }

    /** Request's parts by name, so that no caller lists twenty values in order. */
    public static final class Builder {
      private final Workload workload;
      private final Path out;
      private String workloadLabel;
      private String topologyLabel;
      private Backend backend = Backend.AUTO;
      private int nproc = 1;
      private int nnodes = 1;
      private int nodeRank;
      private String rdzvEndpoint;
      private int iters = 48;
      private int warmup = 5;
      private int profileIters = 3;
      private List<String> inject = List.of();
      private Path prediction;
      private long timeoutSec;
      private Launcher launcher = Launcher.AUTO;
      private String python;
      private boolean overhead;
      private List<String> commandLine = List.of();
      private String tool;

      private Builder(Workload workload, Path out) {
        this.workload = workload;
        this.out = out;
      }

      /** How the manifest names the workload and the topology (a preset's name or a file). */
      public Builder labels(String workloadName, String topologyName) {
        workloadLabel = workloadName;
        topologyLabel = topologyName;
        return this;
      }

      public Builder backend(Backend v) {
        backend = v;
        return this;
      }

      /** Ranks per node, nodes, and the node this launcher is. */
      public Builder ranks(int perNode, int nodes, int node) {
        nproc = perNode;
        nnodes = nodes;
        nodeRank = node;
        return this;
      }

      public Builder rdzvEndpoint(String v) {
        rdzvEndpoint = v;
        return this;
      }

      /** Measured, warm-up and profiled iterations. */
      public Builder sizes(int measured, int warmupIters, int profiled) {
        iters = measured;
        warmup = warmupIters;
        profileIters = profiled;
        return this;
      }

      public Builder inject(List<String> v) {
        inject = v;
        return this;
      }

      public Builder prediction(Path v) {
        prediction = v;
        return this;
      }

      public Builder timeoutSec(long v) {
        timeoutSec = v;
        return this;
      }

      public Builder launcher(Launcher v) {
        launcher = v;
        return this;
      }

      public Builder python(String v) {
        python = v;
        return this;
      }

      public Builder overhead(boolean v) {
        overhead = v;
        return this;
      }

      /** The command line the manifest records (as given) and the tool's version. */
      public Builder recorded(List<String> givenCommandLine, String toolVersion) {
        commandLine = givenCommandLine;
        tool = toolVersion;
        return this;
      }

      public Request build() {
        return new Request(workload, workloadLabel, topologyLabel, backend, nproc, nnodes, nodeRank, rdzvEndpoint, iters, warmup,
            profileIters, inject, prediction, timeoutSec, out, launcher, python, overhead, commandLine, tool);
      }
    }
  }

  /**
   * What the instrumentation costs: the recording Python comm hook runs on every {@code hookEvery}-th
   * measured iteration (and iterations 0, 1 and the profiler window; 1 = every iteration), DDP's own C++ allreduce on
   * the others; {@code profilerPlugin} is "auto", "none" or the path of pathproof's NCCL profiler plugin.
   */
  public record Instrumentation(int hookEvery, String profilerPlugin) {
    /** Chosen by measurement: docs/PERFORMANCE.md, "Instrumentation overhead"; vocabulary.json holds it for both sides. */
    public static final int DEFAULT_HOOK_EVERY = io.pathproof.rundir.Vocabulary.hookEvery();

    public static final Instrumentation DEFAULT = new Instrumentation(DEFAULT_HOOK_EVERY, "auto");

    public Instrumentation {
      if (hookEvery < 1) {
        throw PathproofException.usage("--hook-every: must be >= 1 (1 = the comm hook on every iteration), got " + hookEvery);
      }
      profilerPlugin = profilerPlugin == null || profilerPlugin.isBlank() ? "auto" : profilerPlugin;
    }
  }


  /**
   * The outcome. {@code exitCode} is one of {@link ExitCode}; {@code message} is one line (null on success);
   * {@code command} is the printed command of a dry run (srun), else null.
   */
  public record Result(Path runDir, boolean complete, int exitCode, String message, List<RankExit> ranks, String command) {}

  /**
   * {@code run --emulate}: the machine to emulate on the one real GPU ({@code topologyLabel} as given, for the
   * manifest), the directory (or file) of the patched NCCL, and an optional compute capability NCCL reports. A
   * {@code topology} of several nodes is an emulated cluster, as NCCL will see it
   * ({@link io.pathproof.scenario.Scenarios#emulatedCluster}): {@code ranksPerNode} ranks on each node (every node
   * holding exactly that many GPUs), each node's ranks with the node's own host hash and topology file; its nodes
   * reach each other through NCCL's Socket transport over loopback, or, with {@code netPlugin} (an NCCL net plugin
   * library that exposes the topology's NICs), through that plugin.
   */
  public record Emulate(String topologyLabel, io.pathproof.scenario.Topology topology, Path ncclLib, Integer compCap,
      Integer ranksPerNode, Path netPlugin) {
    public Emulate {
      Objects.requireNonNull(topology, "topology");
      topologyLabel = topologyLabel == null ? topology.name() : topologyLabel;
      if (topology.nodes().size() > 1) {
        int per = topology.nodes().get(0).gpus().size();
        ranksPerNode = ranksPerNode == null ? per : ranksPerNode;
        java.util.Set<String> hosts = new java.util.HashSet<>();
        for (io.pathproof.scenario.Topology.Node n : topology.nodes()) {
          if (n.gpus().size() != ranksPerNode) {
            throw PathproofException.badInput("--emulate " + topologyLabel + ": node " + n.hostname() + " has "
                + n.gpus().size() + " GPU(s), not " + ranksPerNode + ": an emulated cluster holds one GPU per rank");
          }
          if (!hosts.add(n.hostname())) {
            throw PathproofException.badInput("--emulate " + topologyLabel + ": two nodes named '" + n.hostname()
                + "'; each emulated node needs its own name (it is the node's NCCL_HOSTID)");
          }
          // Without a plugin the network is the Socket transport over lo: one NIC named lo, no GPUDirect.
          boolean loopback = n.nics().size() == 1 && n.nics().get(0).name().equals("lo") && !n.nics().get(0).gdr();
          if (netPlugin == null && !loopback) {
            throw PathproofException.badInput("--emulate " + topologyLabel + ": node " + n.hostname() + " is not"
                + " joined over loopback (one NIC 'lo', no GPUDirect): Scenarios.emulatedCluster makes it so");
          }
        }
      } else if (netPlugin != null) {
        throw PathproofException.usage("--net-plugin goes with an emulated cluster (--emulate TOPOLOGY --nodes N)");
      }
    }

    /** A single node: no network, every rank one GPU of it. */
    public Emulate(String topologyLabel, io.pathproof.scenario.Topology topology, Path ncclLib, Integer compCap) {
      this(topologyLabel, topology, ncclLib, compCap, null, null);
    }

    /** Emulated nodes (1 for a single machine). */
    public int nodes() {
      return topology.nodes().size();
    }

    /** Whether the emulated machine is a cluster (several nodes, ranks told apart by host). */
    public boolean cluster() {
      return nodes() > 1;
    }
  }

  /**
   * What the Python that would run the ranks sees ({@code --python}, $PATHPROOF_PYTHON, python3, /usr/bin/python3):
   * its path, torch's version, the CUDA GPUs torch sees (0 without CUDA) and whether torch has NCCL.
   */
  public record Machine(String python, String torch, int gpus, boolean nccl) {}

  /**
   * {@code pathproof run --out DIR -- COMMAND}: the user's own job, run as given. {@code topology} (a preset or file,
   * or null to let the job find its machine) is what the in-run prediction is made for; {@code prediction} non-null
   * means a sealed prediction was given and none is made in the run. The warm-up and the profiler window count the
   * job's iterations (DDP forwards with gradient sync). {@code passThrough}: the command's stdout and stderr also go
   * to this process's (they are kept in the run directory either way). {@code nodeRank}: the node this launcher
   * stands for when several launchers (one torchrun per node) share the run directory; null = read torchrun's
   * {@code --node_rank} in the command, else 0. {@code emulate}: every rank on this machine's one GPU, NCCL believing
   * it runs on the emulated machine (the ranks' device index is mapped to that GPU, each reports its emulated busId).
   * {@code topologyNodes}: {@code --nodes N}, the topology being one node of N identical ones (null: as given).
   */
  public record CommandRequest(
      List<String> command,
      Path out,
      List<String> inject,
      Path prediction,
      String topology,
      long timeoutSec,
      Integer hookEvery,
      int warmup,
      int profileIters,
      List<String> commandLine,
      String tool,
      boolean passThrough,
      Integer nodeRank,
      Emulate emulate,
      Integer topologyNodes) {
    public CommandRequest {
      if (command == null || command.isEmpty()) {
        throw PathproofException.usage("run -- COMMAND: the command is missing");
      }
      command = List.copyOf(command);
      Objects.requireNonNull(out, "out");
      inject = inject == null ? List.of() : List.copyOf(inject);
      commandLine = commandLine == null ? List.of() : List.copyOf(commandLine);
      tool = tool == null ? "pathproof" : tool;
      if (timeoutSec < 0) {
        throw PathproofException.usage("--timeout: must be >= 0 (0 = none), got " + timeoutSec);
      }
      if (hookEvery != null && hookEvery < 0) {
        throw PathproofException.usage("--hook-every: must be >= 0 (0 = no recording comm hook), got " + hookEvery);
      }
      if (warmup < 0 || profileIters < 0) {
        throw PathproofException.usage("--warmup/--profile-iters: must be >= 0");
      }
      if (nodeRank != null && nodeRank < 0) {
        throw PathproofException.usage("--node-rank: must be >= 0, got " + nodeRank);
      }
      if (topologyNodes != null && (topologyNodes < 1 || topology == null)) {
        throw PathproofException.usage("--nodes N: goes with --topology NODE (the machine is N such nodes), N >= 1");
      }
    }

    /** A request for {@code command} into {@code out}, everything else at its default, set by name. */
    public static Builder of(List<String> command, Path out) {
      return new Builder(command, out);
    }

    /** CommandRequest's optional parts by name, so that no caller lists fourteen values in order. */
    public static final class Builder {
      private final List<String> command;
      private final Path out;
      private List<String> inject = List.of();
      private Path prediction;
      private String topology;
      private long timeoutSec;
      private Integer hookEvery; // null: each rank chooses by its backend (vocabulary.json hookEvery, hookEveryNccl)
      private int warmup = 5;
      private int profileIters = 3;
      private List<String> commandLine = List.of();
      private String tool;
      private boolean passThrough;
      private Integer nodeRank;
      private Emulate emulate;
      private Integer topologyNodes;

      private Builder(List<String> command, Path out) {
        this.command = command;
        this.out = out;
      }

      public Builder inject(List<String> v) {
        inject = v;
        return this;
      }

      public Builder prediction(Path v) {
        prediction = v;
        return this;
      }

      public Builder topology(String v) {
        topology = v;
        return this;
      }

      public Builder timeoutSec(long v) {
        timeoutSec = v;
        return this;
      }

      /** The recording comm hook's period; null (the default) lets each rank choose by its backend. */
      public Builder hookEvery(Integer v) {
        hookEvery = v;
        return this;
      }

      public Builder sizes(int warmupIters, int profiled) {
        warmup = warmupIters;
        profileIters = profiled;
        return this;
      }

      public Builder recorded(List<String> givenCommandLine, String toolVersion) {
        commandLine = givenCommandLine;
        tool = toolVersion;
        return this;
      }

      public Builder passThrough(boolean v) {
        passThrough = v;
        return this;
      }

      public Builder nodeRank(Integer v) {
        nodeRank = v;
        return this;
      }

      public Builder emulate(Emulate v) {
        emulate = v;
        return this;
      }

      public Builder topologyNodes(Integer v) {
        topologyNodes = v;
        return this;
      }

      public CommandRequest build() {
        return new CommandRequest(command, out, inject, prediction, topology, timeoutSec, hookEvery, warmup, profileIters,
            commandLine, tool, passThrough, nodeRank, emulate, topologyNodes);
      }
    }
  }

  /** Runs the user's command with pathproof's instrumentation in every rank (see {@link CommandRequest}). */
  public static Result wrap(CommandRequest req) {
    return CommandRun.run(req);
  }

  /** Probes the Python the ranks would use; exit 6 (TORCH_MISSING) naming what was tried when none has torch. */
  public static Machine probe(String python) {
    PythonProbe.Python p = PythonProbe.find(python);
    return new Machine(p.executable(), p.torchVersion(), p.cuda() ? p.gpus() : 0, p.nccl());
  }

  /**
   * The patched NCCL for {@code --emulate}, as found without --emulate having been asked for: the library file (null
   * when none was found), where it came from, and why it cannot be used (null when it can).
   */
  public record EmulatorLibrary(Path file, String how, String refusal) {
    public boolean usable() {
      return file != null && refusal == null;
    }
  }

  /**
   * Looks for the emulator library: {@code given} (--nccl-lib DIR), else $PATHPROOF_NCCL_EMULATOR, else
   * target/nccl-emulator/ under {@code cwd} (scripts/build-nccl-emulator.sh NCCL_SRC target/nccl-emulator); each
   * checked as --emulate checks it (the patch's mark in the file). Never throws for a missing or unpatched library.
   */
  public static EmulatorLibrary findEmulator(Path given, Map<String, String> env, Path cwd) {
    return Emulation.find(given, env, cwd);
  }

  /** Progress of the measured run: steps done by rank 0 of the total; called from the monitoring thread. */
  public interface Progress {
    void steps(int done, int total);
  }

  /** The harness resource's name inside the jar (and the file name it gets in the run directory). */
  static final String HARNESS = "harness.py";

  /** NCCL's log and the flight recorder, for every rank unless the user's environment sets them (vocabulary.json). */
  static final Map<String, String> NCCL_DEFAULTS = io.pathproof.rundir.Vocabulary.rankEnv();

  /** Runs the job (or, for srun, prepares the run directory and returns the command). */
  public static Result run(Request req, Progress progress) {
    return run(req, Instrumentation.DEFAULT, progress, null);
  }

  /** As {@link #run(Request, Progress)}; {@code emulate} non-null runs the ranks under the NCCL emulator. */
  public static Result run(Request req, Progress progress, Emulate emulate) {
    return run(req, Instrumentation.DEFAULT, progress, emulate);
  }

  /** As {@link #run(Request, Progress)} with the given instrumentation. */
  public static Result run(Request req, Instrumentation ins, Progress progress) {
    return run(req, ins, progress, null);
  }

  /**
   * As {@link #run(Request, Progress)} with the given instrumentation; {@code emulate} non-null runs the ranks under
   * the NCCL emulator.
   */
  public static Result run(Request req, Instrumentation ins, Progress progress, Emulate emulate) {
    Launch launch = new Launch(req, ins, emulate);
    launch.writeRequest();
    if (req.launcher() == Launcher.SRUN) {
      return launch.srunDryRun();
    }
    Result refused = launch.chooseMachine();
    return refused != null ? refused : launch.startAndWait(progress);
  }

  /**
   * One launch of the stand-in job, step by step: what is checked before any file is written (the injection, the
   * emulator library, the prediction's seal, the rendezvous endpoint), the manifest's request turn, then the machine
   * (port, Python, backend, launcher) and the ranks. Each step writes what it learnt to the manifest's start turn, so
   * a launch refused half way leaves its reasons in the run directory.
   */
  private static final class Launch {
    private final Request req;
    private final Instrumentation ins;
    private final Emulate emulate;
    private final ProfilerPlugin.Choice plugin;
    private final Injection inj;
    private final Emulation.Library emuLib;
    private final String sealSha;
    private final String addr;
    private final Path dir;
    private final LaunchStart.Builder started = LaunchStart.builder();
    /** 0 until the machine is chosen: a free local port, chosen when the ranks are about to start. */
    private int port;
    private PythonProbe.Python py;
    private Backend backend;
    private Launcher launcher;

    /** Everything that can be refused before a file is written: a wrong request leaves no run directory behind. */
    Launch(Request req, Instrumentation ins, Emulate emulate) {
      this.req = req;
      this.ins = ins;
      this.emulate = emulate;
      plugin = ProfilerPlugin.resolve(ins.profilerPlugin(), System.getenv(), Path.of(""));
      inj = Injection.parse(req.inject(), req.worldSize());
      emuLib = emulate == null ? null : Emulation.check(req, emulate, inj);
      sealSha = req.prediction() == null ? null : PredictionIo.readVerified(req.prediction()).seal().sha256(); // exit 9
      String endpoint = req.rdzvEndpoint() == null || req.rdzvEndpoint().isBlank() ? null : req.rdzvEndpoint().trim();
      addr = endpoint == null ? "127.0.0.1" : host(endpoint);
      port = endpoint == null ? 0 : port(endpoint);
      dir = req.out().toAbsolutePath().normalize();
    }

    /** The run directory with the workload and the harness, and the manifest's request turn. */
    void writeRequest() {
      prepareDir(dir);
      writeWorkload(req.workload(), dir.resolve("workload.json"));
      copyHarness(dir.resolve(HARNESS));
      RunManifest.write(dir, LaunchRequest.builder(req.tool(), Instant.now().toString())
          .commandLine(Injection.blind(req.commandLine(), "--inject")) // the fault is in fault.sealed.json only
          .workload(req.workload().name(), req.workloadLabel()).topology(req.topologyLabel()).backendRequested(lower(req.backend()))
          .ranks(req.nproc(), req.nnodes(), req.nodeRank()).sizes(req.iters(), req.warmup()).timeoutSec(req.timeoutSec())
          .prediction(req.prediction() == null ? null : req.prediction().toString(), sealSha).build());
      // Blind by construction: what was injected goes to a file diagnose never opens, not the manifest, so a
      // diagnosis cannot be told what it has to find.
      inj.writeSealed(dir);
      RunManifest.write(dir, RunOutcome.pending(null));
    }

    /** Slurm: the exact srun command, printed and recorded, not run. */
    Result srunDryRun() {
      String python = req.python() == null ? "python3" : req.python();
      String be = req.backend() == Backend.AUTO ? "auto" : lower(req.backend());
      String cmd = SrunCommand.render(req, dir, python, be, inj);
      if (ins.hookEvery() != Instrumentation.DEFAULT_HOOK_EVERY) {
        cmd += " --hook-every " + ins.hookEvery(); // harness arguments end the srun command line
      }
      RunManifest.write(dir, started.launcher("srun (dry run: not started)").srunCommand(cmd).build());
      RunManifest.write(dir, RunOutcome.pending("dry run: the srun command was printed, not run"));
      return new Result(dir, false, ExitCode.OK, null, List.of(), cmd);
    }

    /** The rendezvous port, the Python with torch, the backend and the launcher; a refusal as the failed result. */
    Result chooseMachine() {
      if (port == 0) {
        port = freePort();
      }
      started.master(addr, port);
      if (req.nodeRank() == 0 && !canBind(addr, port)) {
        return fail(dir, started, ExitCode.PORT_IN_USE,
            "run: rendezvous port " + port + " on " + addr + " is in use; choose another with --rdzv-endpoint " + addr + ":PORT");
      }
      try {
        py = PythonProbe.find(req.python());
      } catch (PathproofException e) {
        return fail(dir, started, e.exitCode(), e.getMessage());
      }
      started.python(new LaunchStart.PythonInfo(py.executable(), py.pythonVersion(), py.torchVersion(), py.gpus()));
      backend = emulate != null ? Backend.NCCL : req.backend();
      if (backend == Backend.AUTO) {
        // nccl needs one GPU per rank (it refuses two ranks on one GPU); with fewer GPUs, gloo still runs
        backend = py.cuda() && py.gpus() >= req.nproc() && py.nccl() ? Backend.NCCL : Backend.GLOO;
      }
      started.backend(lower(backend));
      String refusal = backendRefusal(backend, py, req.nproc(), emulate != null);
      if (refusal != null) {
        return fail(dir, started, ExitCode.NO_GPU, refusal);
      }
      launcher = emulate != null ? Launcher.SPAWN : req.launcher();
      if (launcher == Launcher.AUTO) {
        launcher = torchrunWorks(py) ? Launcher.TORCHRUN : Launcher.SPAWN;
      }
      return null;
    }

    /** The ranks' arguments and environment, the manifest's start turn, then the ranks until they end. */
    Result startAndWait(Progress progress) {
      String be = lower(backend);
      List<String> harnessArgs = harnessArgs(req, dir, be, inj);
      harnessArgs.addAll(List.of("--hook-every", Integer.toString(ins.hookEvery())));
      Map<String, String> env = rankEnv(req, dir, backend, inj, addr, port);
      java.util.function.IntFunction<Map<String, String>> perRank = emulate != null ? emulation(env) : r -> Map.of();
      if (backend == Backend.NCCL) {
        env.putAll(ProfilerPlugin.env(plugin, dir, System.getenv(), inj.env()));
      }
      Map<String, String> launcherEnv = new java.util.TreeMap<>();
      env.forEach((k, v) -> {
        if (!inj.env().containsKey(k)) {
          launcherEnv.put(k, v);
        }
      });
      RankProcesses ranks = launcher == Launcher.TORCHRUN
          ? RankProcesses.torchrun(py.executable(), req, dir, harnessArgs, env, addr, port)
          : RankProcesses.spawn(py.executable(), req, dir, harnessArgs, env, perRank);
      RunManifest.write(dir, started.launcher(lower(launcher)).ncclProfilerPlugin(ProfilerPlugin.manifest(plugin, be))
          .hookEvery(ins.hookEvery()).launcherEnv(launcherEnv)
          .rankArgv(ranks.argvs().stream().map(a -> Injection.blind(a, "--knob")).toList()).build());
      RankProcesses.Outcome o = ranks.startAndWait(req.timeoutSec(), progress, req.warmup() + req.iters());
      return finish(dir, req, o);
    }

    /**
     * {@code --emulate}: the emulated machine's NCCL topology written beside the run (one file per node of a
     * cluster), the patched NCCL in {@code env}, and each rank's own variables (the result, by rank): its emulated
     * busId and, on a cluster, its node's host id and topology file.
     */
    private java.util.function.IntFunction<Map<String, String>> emulation(Map<String, String> env) {
      Emulation.RealGpu real = Emulation.probe(py.executable());
      Emulation.Nodes nodes = Emulation.write(dir, emulate, real.busId());
      started.emulation(Emulation.manifest(emulate, emuLib, real, nodes, req.nproc()));
      env.putAll(Emulation.env(dir, emuLib, emulate));
      return r -> nodes.rank(dir, r);
    }

    /** The host of a {@code --rdzv-endpoint HOST:PORT}. */
    private static String host(String endpoint) {
      int c = endpoint.lastIndexOf(':');
      if (c <= 0 || c == endpoint.length() - 1) {
        throw PathproofException.usage("--rdzv-endpoint '" + endpoint + "': expected HOST:PORT");
      }
      return endpoint.substring(0, c);
    }

    /** The port of a {@code --rdzv-endpoint HOST:PORT} (its host checked first, by {@link #host}). */
    private static int port(String endpoint) {
      int port;
      try {
        port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
      } catch (NumberFormatException e) {
        throw PathproofException.usage("--rdzv-endpoint '" + endpoint + "': port is not a number");
      }
      if (port < 1 || port > 65535) {
        throw PathproofException.usage("--rdzv-endpoint '" + endpoint + "': port must be in 1..65535");
      }
      return port;
    }
  }

  private static String lower(Enum<?> e) {
    return e.name().toLowerCase(java.util.Locale.ROOT);
  }

  /** Why {@code backend} cannot run here (one line), or null when it can. */
  private static String backendRefusal(Backend backend, PythonProbe.Python py, int nproc, boolean emulated) {
    if (backend != Backend.NCCL) {
      return null;
    }
    if (!py.cuda() || py.gpus() == 0) {
      return "run: --backend nccl but " + py.executable() + " (torch " + py.torchVersion() + ") sees no CUDA GPU; use --backend gloo";
    }
    if (emulated && !py.nccl()) {
      return "run: --emulate but " + py.executable() + " (torch " + py.torchVersion() + ") has no NCCL backend";
    }
    if (!emulated && nproc > py.gpus()) { // emulated ranks share one GPU on purpose
      return "run: --backend nccl needs one GPU per rank: --nproc " + nproc + " but " + py.gpus()
          + " GPU(s) visible (NCCL refuses two ranks on one GPU)";
    }
    return null;
  }

  /** Python + torch versions where {@code python -m torch.distributed.run} starts workers (see the Debian trap). */
  static boolean torchrunWorks(PythonProbe.Python py) {
    // torch 1.13's elastic Std.from_str returns None under Python 3.11's IntFlag and torchrun dies before starting
    // workers unless --tee/--redirects are single values 1/2 (pytorch-ddp-model.md section 6, Debian bookworm).
    // RankProcesses.torchrun passes exactly those, and an explicit --launcher torchrun was seen to work there, but
    // AUTO still spawns on that pair: any later flag change would hit the parser trap, and spawning gives the exit
    // status of every rank instead of torchrun's one. torch >= 2 or Python < 3.11 has no trap.
    int torchMajor = leadingInt(py.torchVersion());
    String[] pv = py.pythonVersion().split("\\.");
    boolean py311 = pv.length >= 2 && (leadingInt(pv[0]) > 3 || (leadingInt(pv[0]) == 3 && leadingInt(pv[1]) >= 11));
    return torchMajor >= 2 || !py311;
  }

  private static int leadingInt(String s) {
    int i = 0;
    while (i < s.length() && Character.isDigit(s.charAt(i))) {
      i++;
    }
    return i == 0 ? 0 : Integer.parseInt(s.substring(0, i));
  }

  static List<String> harnessArgs(Request req, Path dir, String backend, Injection inj) {
    List<String> a = new ArrayList<>(List.of(
        dir.resolve(HARNESS).toString(),
        "--run-dir", dir.toString(),
        "--workload", dir.resolve("workload.json").toString(),
        "--backend", backend,
        "--iters", Integer.toString(req.iters()),
        "--warmup", Integer.toString(req.warmup()),
        "--profile-iters", Integer.toString(req.profileIters())));
    if (req.timeoutSec() > 0) {
      a.add("--pg-timeout");
      a.add(Long.toString(req.timeoutSec()));
    }
    if (req.overhead()) {
      a.add("--overhead");
    }
    a.addAll(inj.knobArgs());
    return a;
  }

  /**
   * The environment every rank gets on top of this process's: the NCCL evidence switches (unless the user's
   * environment or an injection sets them), the injections, and for gloo a malloc tunable.
   */
  static Map<String, String> rankEnv(Request req, Path dir, Backend backend, Injection inj, String addr, int port) {
    Map<String, String> parent = System.getenv();
    Map<String, String> env = new LinkedHashMap<>();
    NCCL_DEFAULTS.forEach((k, v) -> {
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
    if (!parent.containsKey("OMP_NUM_THREADS")) {
      env.put("OMP_NUM_THREADS", "1"); // as torchrun does for nproc > 1: ranks must not fight over the cores
    }
    if (backend == Backend.GLOO && !parent.containsKey("GLIBC_TUNABLES")) {
      // On CPU every step allocates gradient-sized tensors; glibc returns them to the kernel and the next step
      // faults them in again, 4 KiB at a time (0.3 s per 64 MiB measured on a 2-core VM). Transparent huge pages
      // for malloc's mmap'd chunks (glibc >= 2.35; older glibc ignores the tunable) cut that fifteen-fold.
      env.put("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1");
    }
    env.put("PYTHONUNBUFFERED", "1");
    env.put("MASTER_ADDR", addr);
    env.put("MASTER_PORT", Integer.toString(port));
    env.put("WORLD_SIZE", Integer.toString(req.worldSize()));
    env.put("LOCAL_WORLD_SIZE", Integer.toString(req.nproc()));
    env.put("GROUP_RANK", Integer.toString(req.nodeRank()));
    env.putAll(inj.env());
    return env;
  }

  private static Result finish(Path dir, Request req, RankProcesses.Outcome o) {
    RunManifest m = RunManifest.read(dir);
    Emulation.complete(dir, m);
    boolean allZero = !o.ranks().isEmpty() && o.ranks().stream().allMatch(r -> Integer.valueOf(0).equals(r.exitCode()));
    boolean harnessDone = req.nodeRank() != 0 || Boolean.TRUE.equals(m.job().harnessFinished());
    int code;
    String msg;
    if (o.timedOut()) {
      code = ExitCode.TIMEOUT;
      msg = "run: timed out after " + req.timeoutSec() + " s; every rank was killed; files kept in " + dir;
    } else if (!allZero && o.portInUse()) {
      code = ExitCode.PORT_IN_USE;
      msg = "run: a rank could not bind the rendezvous port " + m.start().masterPort() + " (address in use); see "
          + dir.resolve(o.firstFailure() == null ? "" : o.firstFailure().stderr());
    } else if (!allZero) {
      code = ExitCode.RANK_FAILED;
      RankExit f = o.firstFailure();
      msg = f == null
          ? "run: the launcher failed; see " + dir
          : "run: rank " + f.rank() + " exited with status " + f.exitCode() + " (" + f.ended() + "); last line of "
              + f.stderr() + ": " + o.firstFailureLine();
    } else if (!harnessDone) {
      code = ExitCode.RANK_FAILED;
      msg = "run: every rank exited 0 but rank 0 did not finish the harness; see " + dir.resolve("rank0.stderr");
    } else {
      code = ExitCode.OK;
      msg = null;
    }
    boolean complete = code == ExitCode.OK;
    if (complete) {
      RunManifest.remove(dir, "incompleteReason");
    }
    RunManifest.write(dir, new RunOutcome(Instant.now().toString(), complete, code, msg, o.ranks()));
    return new Result(dir, complete, code, msg, o.ranks(), null);
  }

  private static Result fail(Path dir, LaunchStart.Builder started, int code, String msg) {
    RunManifest.write(dir, started.build());
    RunManifest.write(dir, RunOutcome.failed(Instant.now().toString(), code, msg));
    return new Result(dir, false, code, msg, List.of(), null);
  }

  /** A run directory is new or empty: evidence of two runs must never mix. */
  static void prepareDir(Path dir) {
    try {
      if (Files.exists(dir)) {
        if (!Files.isDirectory(dir)) {
          throw PathproofException.usage("--out " + dir + ": exists and is not a directory");
        }
        try (var s = Files.list(dir)) {
          if (s.findAny().isPresent()) {
            throw PathproofException.usage("--out " + dir + ": not empty; a run directory holds one run (choose a new one)");
          }
        }
      }
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw PathproofException.badInput("--out " + dir + ": cannot create: " + e.getMessage());
    }
  }

  /** The workload as the harness reads it: parameters in order with torch dtype names, and the DDP flags. */
  static void writeWorkload(Workload w, Path file) {
    ObjectNode n = Json.mapper().createObjectNode();
    n.put("name", w.name());
    ArrayNode ps = n.putArray("parameters");
    for (Parameter p : w.parameters()) {
      ObjectNode pn = ps.addObject();
      pn.put("name", p.name());
      ArrayNode sh = pn.putArray("shape");
      p.shape().forEach(sh::add);
      pn.put("dtype", p.dtype().torchName());
      pn.put("requiresGrad", p.requiresGrad());
    }
    if (w.bucketCapMb() == null) {
      n.putNull("bucketCapMb");
    } else {
      n.put("bucketCapMb", w.bucketCapMb());
    }
    n.put("findUnusedParameters", w.findUnusedParameters());
    n.put("staticGraph", w.staticGraph());
    n.put("gradientAsBucketView", w.gradientAsBucketView());
    io.pathproof.rundir.RunManifest.writeJson(file, n);
  }

  static void writeText(Path target, String text) {
    try {
      Files.writeString(target, text);
    } catch (IOException e) {
      throw PathproofException.badInput("run: cannot write " + target + ": " + e.getMessage());
    }
  }

  /** The harness's own module (instrumentation cost), copied beside it: harness.py imports it from its directory. */
  static final String HARNESS_MODULE = "pathproof_instrumentation.py";

  static void copyHarness(Path target) {
    copyResource(HARNESS, target);
    copyResource(HARNESS_MODULE, target.resolveSibling(HARNESS_MODULE));
    copyResource(io.pathproof.rundir.Vocabulary.RESOURCE, target.resolveSibling("vocabulary.json"));
  }

  private static void copyResource(String name, Path target) {
    try (InputStream in = Runner.class.getResourceAsStream(name)) {
      if (in == null) {
        throw new PathproofException(ExitCode.INTERNAL, "run: the harness resource is missing from the jar");
      }
      Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw PathproofException.badInput("run: cannot write " + target + ": " + e.getMessage());
    }
  }

  static int freePort() {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new PathproofException(ExitCode.PORT_IN_USE, "run: no free local port: " + e.getMessage());
    }
  }

  static boolean canBind(String addr, int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(false);
      String bindTo = addr.equals("localhost") || addr.startsWith("127.") ? addr : "0.0.0.0";
      s.bind(new InetSocketAddress(bindTo, port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
