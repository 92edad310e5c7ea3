package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** run and prove share one mixin of run flags, each with its own defaults and its own wording in the help. */
class RunFlagsTest {
    @Test
    void eachVerbKeepsItsDefaults() {
        RunCommand run = new RunCommand();
        new CommandLine(run).parseArgs("--workload", "one-64mib-fp32", "--out", "r");
        assertThat(new long[] {run.runs.warmup, run.runs.iters, run.runs.profileIters, run.runs.timeout})
                .containsExactly(5, 48, 3, 0);
        assertThat(run.runs.python).isNull();
        ProveCommand prove = new ProveCommand();
        new CommandLine(prove).parseArgs();
        assertThat(new long[] {prove.runs.warmup, prove.runs.iters, prove.runs.profileIters, prove.runs.timeout})
                .containsExactly(3, 24, 1, 300);
    }

    @Test
    void bothVerbsParseTheSharedFlags() {
        String[] flags = {"--warmup", "2", "--iters", "9", "--profile-iters", "0", "--python", "py3", "--timeout", "60"
        };
        RunCommand run = new RunCommand();
        String[] runArgs = new String[flags.length + 4];
        System.arraycopy(flags, 0, runArgs, 0, flags.length);
        System.arraycopy(new String[] {"--workload", "w", "--out", "r"}, 0, runArgs, flags.length, 4);
        new CommandLine(run).parseArgs(runArgs);
        ProveCommand prove = new ProveCommand();
        new CommandLine(prove).parseArgs(flags);
        for (RunFlags f : new RunFlags[] {run.runs, prove.runs}) {
            assertThat(new long[] {f.warmup, f.iters, f.profileIters, f.timeout})
                    .containsExactly(2, 9, 0, 60);
            assertThat(f.python).isEqualTo("py3");
        }
    }

    @Test
    void helpWordsEachVerbsFlagsItsOwnWay() {
        String run = MainTest.run("run", "--help").out;
        String prove = MainTest.run("prove", "--help").out;
        assertThat(run)
                .contains(
                        "measured iterations (default: 48)",
                        "warm-up iterations (default: 5)",
                        "seconds before every rank is killed (0 = none)",
                        "$PATHPROOF_PYTHON");
        assertThat(prove)
                .contains(
                        "measured steps per run (default: 24; the fault",
                        "warm-up steps per run (default: 3)",
                        "steps under the profiler (default: 1)",
                        "Python with torch (default: as for run)");
        assertThat(prove.replaceAll("\\s+", " ")).contains("seconds before a run's ranks are killed (default: 300)");
    }
}
