package io.pathproof.rundir;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Map;

/**
 * The manifest's second turn, still before any rank starts: how the ranks were started. {@code launcherEnv} is the
 * environment pathproof added on top of its own (never an injected variable); {@code rankArgv} is each started
 * process's argument vector; {@code emulation} and {@code ncclProfilerPlugin} keep the objects their own writers
 * ({@code run.Emulation}, {@code run.ProfilerPlugin}) give them.
 */
public record LaunchStart(
        String launcher,
        String srunCommand,
        String masterAddr,
        Integer masterPort,
        PythonInfo python,
        String backend,
        JsonNode emulation,
        JsonNode ncclProfilerPlugin,
        Integer hookEvery,
        Map<String, String> launcherEnv,
        List<List<String>> rankArgv) {

    public static Builder builder() {
        return new Builder();
    }

    /** The turn as its facts become known: a launch that fails early writes the ones it has. */
    public static final class Builder {
        private String launcher;
        private String srunCommand;
        private String masterAddr;
        private Integer masterPort;
        private PythonInfo python;
        private String backend;
        private JsonNode emulation;
        private JsonNode ncclProfilerPlugin;
        private Integer hookEvery;
        private Map<String, String> launcherEnv;
        private List<List<String>> rankArgv;

        private Builder() {}

        public Builder launcher(String launcher) {
            this.launcher = launcher;
            return this;
        }

        public Builder srunCommand(String srunCommand) {
            this.srunCommand = srunCommand;
            return this;
        }

        public Builder master(String addr, int port) {
            this.masterAddr = addr;
            this.masterPort = port;
            return this;
        }

        public Builder python(PythonInfo python) {
            this.python = python;
            return this;
        }

        public Builder backend(String backend) {
            this.backend = backend;
            return this;
        }

        public Builder emulation(JsonNode emulation) {
            this.emulation = emulation;
            return this;
        }

        public Builder ncclProfilerPlugin(JsonNode plugin) {
            this.ncclProfilerPlugin = plugin;
            return this;
        }

        public Builder hookEvery(Integer hookEvery) {
            this.hookEvery = hookEvery;
            return this;
        }

        public Builder launcherEnv(Map<String, String> env) {
            this.launcherEnv = new java.util.TreeMap<>(env);
            return this;
        }

        public Builder rankArgv(List<List<String>> argv) {
            this.rankArgv = List.copyOf(argv);
            return this;
        }

        public LaunchStart build() {
            return new LaunchStart(
                    launcher,
                    srunCommand,
                    masterAddr,
                    masterPort,
                    python,
                    backend,
                    emulation,
                    ncclProfilerPlugin,
                    hookEvery,
                    launcherEnv,
                    rankArgv);
        }
    }

    /** The Python the ranks run: its path, version, the torch it imports and the CUDA GPUs that torch sees. */
    public record PythonInfo(String executable, String version, String torch, Integer cudaGpus) {}
}
