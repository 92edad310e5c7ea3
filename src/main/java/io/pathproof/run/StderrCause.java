package io.pathproof.run;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Why a user's command failed before any rank built its DDP model (so no rank wrote a status file): the first Python
 * exception its stderr holds, and the rank torchrun names as the root cause. A job that hard-codes NCCL or CUDA on a
 * machine without them (torch's own messages, listed in {@link #NO_GPU}) is told apart: that is exit 7, not a rank's
 * bug. Read line by line, in constant memory.
 */
record StderrCause(String exception, long line, Integer rank, boolean noGpu) {
    /** "RuntimeError: …", "torch.cuda.OutOfMemoryError: …" at the start of a line: a traceback's last line. */
    private static final Pattern EXCEPTION =
            Pattern.compile("^((?:[A-Za-z_][\\w]*\\.)*[A-Za-z_]\\w*(?:Error|Exception|Interrupt)): ?(.*)$");

    /** torchrun's summary: "Root Cause (first observed failure):" then "  rank      : 0 (local_rank: 0)". */
    private static final Pattern ROOT_RANK = Pattern.compile("^\\s*rank\\s*:\\s*(\\d+)");

    /** What torch says when a job asks for CUDA or NCCL that this torch or machine does not have. */
    private static final String[] NO_GPU = {
        "doesn't have NCCL built in",
        "Torch not compiled with CUDA enabled",
        "has no attribute '_cuda_setDevice'",
        "No CUDA GPUs are available",
        "Found no NVIDIA driver",
        "ProcessGroupNCCL is only supported with GPUs",
        "no CUDA-capable device is detected"
    };

    /** The cause in {@code stderr}, or null when it names none (or cannot be read). */
    static StderrCause of(Path stderr) {
        String exception = null;
        long at = 0;
        Integer rank = null;
        boolean rootCause = false;
        try (BufferedReader r = Files.newBufferedReader(stderr, StandardCharsets.UTF_8)) {
            String s;
            long n = 0;
            while ((s = r.readLine()) != null) {
                n++;
                if (s.startsWith("Root Cause")) {
                    rootCause = true;
                    continue;
                }
                Matcher rk = ROOT_RANK.matcher(s);
                if (rootCause && rank == null && rk.find()) {
                    rank = Integer.valueOf(rk.group(1));
                }
                Matcher m = EXCEPTION.matcher(s);
                // torchrun's own ChildFailedError only says a child failed; the child's exception is the cause
                if (exception == null && m.matches() && !m.group(1).endsWith("ChildFailedError")) {
                    exception = (m.group(1) + ": " + m.group(2)).strip();
                    at = n;
                }
            }
        } catch (IOException | java.io.UncheckedIOException e) {
            return null; // no stderr, or not text: the message points at the file
        }
        if (exception == null) {
            return null;
        }
        boolean noGpu = false;
        for (String k : NO_GPU) {
            noGpu |= exception.contains(k);
        }
        return new StderrCause(exception, at, rank, noGpu);
    }

    /** "rank 0: RuntimeError: … (command.stderr:15)". */
    String describe(String file) {
        return (rank == null ? "" : "rank " + rank + ": ") + exception + " (" + file + ":" + line + ")";
    }
}
