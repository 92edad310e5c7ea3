package io.pathproof.run;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Finds a Python that can {@code import torch}: {@code --python}, then {@code PATHPROOF_PYTHON}, then {@code python3}
 * on PATH, then {@code /usr/bin/python3} (Debian's python3-torch lives there while a pyenv python3 may shadow it).
 */
final class PythonProbe {
    /** What the chosen Python reports about itself. */
    record Python(
            String executable,
            String pythonVersion,
            String torchVersion,
            boolean cuda,
            int gpus,
            boolean nccl,
            boolean gloo,
            String ncclVersion) {}

    /**
     * Seven lines; the last is the NCCL this Python's torch loads (the library's own ncclGetVersion, through the
     * job package's loaded_nccl_version, its facts module prepended to the probe), else the one torch was built with, else "-".
     */
    private static final String PROBE = "import sys, torch, torch.distributed as d\n"
            + "print(sys.version.split()[0]); print(torch.__version__); print(int(torch.cuda.is_available()))\n"
            + "print(torch.cuda.device_count() if torch.cuda.is_available() else 0)\n"
            + "print(int(d.is_available() and d.is_nccl_available())); print(int(d.is_available() and d.is_gloo_available()))\n"
            + "b = None\n"
            + "try:\n    b = '.'.join(str(x) for x in torch.cuda.nccl.version())\nexcept Exception:\n    pass\n"
            + "print(loaded_nccl_version() or b or '-')\n";

    /** The probe with the function it calls: the facts module imports only the standard library, defines functions. */
    private static String probeScript() {
        try (java.io.InputStream in = PythonProbe.class.getResourceAsStream(RunDirectory.FACTS_RESOURCE)) {
            if (in == null) {
                throw new PathproofException(ExitCode.INTERNAL, "run: the facts module is missing from the jar");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8) + "\n" + PROBE;
        } catch (IOException e) {
            throw new PathproofException(ExitCode.INTERNAL, "run: cannot read the facts module from the jar");
        }
    }

    private PythonProbe() {}

    /** The candidates in order, without duplicates; {@code explicit} and {@code envValue} may be null. */
    static List<String> candidates(String explicit, String envValue, String pathEnv) {
        LinkedHashSet<String> c = new LinkedHashSet<>();
        if (explicit != null && !explicit.isBlank()) {
            c.add(explicit);
            return new ArrayList<>(c); // an explicit choice is not second-guessed
        }
        if (envValue != null && !envValue.isBlank()) {
            c.add(envValue);
        }
        if (pathEnv != null) {
            for (String dir : pathEnv.split(java.io.File.pathSeparator)) {
                if (!dir.isEmpty()) {
                    Path p = Path.of(dir, "python3");
                    if (Files.isExecutable(p)) {
                        c.add(p.toString());
                        break;
                    }
                }
            }
        }
        c.add("/usr/bin/python3");
        return new ArrayList<>(c);
    }

    /** The first candidate with torch, or TORCH_MISSING naming what was tried. */
    static Python find(String explicit) {
        Map<String, String> env = System.getenv();
        List<String> tried = candidates(explicit, env.get("PATHPROOF_PYTHON"), env.get("PATH"));
        List<String> why = new ArrayList<>();
        for (String exe : tried) {
            Python p = probe(exe, why);
            if (p != null) {
                return p;
            }
        }
        throw new PathproofException(
                ExitCode.TORCH_MISSING,
                "run: no Python with torch found (tried " + String.join(", ", why)
                        + "); pass --python or set PATHPROOF_PYTHON");
    }

    static Python probe(String exe, List<String> why) {
        Process p;
        try {
            p = new ProcessBuilder(exe, "-c", probeScript())
                    .redirectErrorStream(true)
                    .start();
        } catch (IOException e) {
            why.add(exe + ": cannot run");
            return null;
        }
        try {
            p.getOutputStream().close();
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                why.add(exe + ": import torch did not finish in 120 s");
                return null;
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            String[] l = out.strip().split("\\R");
            if (p.exitValue() != 0 || l.length < 7) {
                why.add(exe + ": no torch");
                return null;
            }
            int n = l.length - 7; // torch may print warnings first; the probe's seven lines are the last ones
            return new Python(
                    exe,
                    l[n].strip(),
                    l[n + 1].strip(),
                    "1".equals(l[n + 2].strip()),
                    Integer.parseInt(l[n + 3].strip()),
                    "1".equals(l[n + 4].strip()),
                    "1".equals(l[n + 5].strip()),
                    "-".equals(l[n + 6].strip()) ? null : l[n + 6].strip());
        } catch (IOException | NumberFormatException e) {
            why.add(exe + ": unreadable probe output");
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new PathproofException(ExitCode.INTERNAL, "run: interrupted while probing " + exe);
        }
    }

    /** Python + torch versions where {@code python -m torch.distributed.run} starts workers (see the Debian trap). */
    static boolean torchrunWorks(Python py) {
        // torch 1.13's elastic Std.from_str returns None under Python 3.11's IntFlag and torchrun dies before starting
        // workers unless --tee/--redirects are single values 1/2 (pytorch-ddp-model.md section 6, Debian bookworm).
        // RankProcesses.torchrun passes exactly those, and an explicit --launcher torchrun was seen to work there, but
        // AUTO still spawns on that pair: any later flag change would hit the parser trap, and spawning gives the exit
        // status of every rank instead of torchrun's one. torch >= 2 or Python < 3.11 has no trap.
        int torchMajor = leadingInt(py.torchVersion());
        String[] pv = py.pythonVersion().split("\\.");
        boolean py311 =
                pv.length >= 2 && (leadingInt(pv[0]) > 3 || (leadingInt(pv[0]) == 3 && leadingInt(pv[1]) >= 11));
        return torchMajor >= 2 || !py311;
    }

    private static int leadingInt(String s) {
        int i = 0;
        while (i < s.length() && Character.isDigit(s.charAt(i))) {
            i++;
        }
        return i == 0 ? 0 : Integer.parseInt(s.substring(0, i));
    }
}
