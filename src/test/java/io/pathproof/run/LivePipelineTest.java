package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.cli.Main;
import io.pathproof.core.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole pipeline, live, on CPU with gloo: a sealed prediction written before the run, the run, acceptance, and
 * blind diagnosis of the gloo faults prove injects (a compute slowdown, a corrupted gradient on one rank, a bucket-cap
 * change, find_unused_parameters) and an A/A pair — issue 5's "the gloo cases also run live".
 */
@Tag("live")
class LivePipelineTest {
    record Out(int code, String out, String err) {}

    static Out cli(String... args) {
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        int code = Main.run(args, new PrintWriter(o, true), new PrintWriter(e, true));
        return new Out(code, o.toString(), e.toString());
    }

    static Out run(Path dir, String workload, Path prediction, String... inject) {
        return run(dir, workload, 12, prediction, inject);
    }

    /**
     * The diagnosed pairs run 40 iterations: the small model's step is short, so they cost seconds, and on a busy 2-core
     * machine 12 iterations could not decide a 40 ms slowdown (step median 144 → 205 ms, 95 % CI 0.74..3.25).
     */
    static Out small(Path dir, Path workload, String... inject) {
        return run(dir, workload.toString(), 40, null, inject);
    }

    static Out run(Path dir, String workload, int iters, Path prediction, String... inject) {
        List<String> a = new ArrayList<>(List.of(
                "run",
                "--backend",
                "gloo",
                "--nproc",
                "4",
                "--workload",
                workload,
                "--warmup",
                "2",
                "--iters",
                Integer.toString(iters),
                "--profile-iters",
                "1",
                "--timeout",
                "300",
                "--out",
                dir.toString()));
        if (prediction != null) {
            a.addAll(List.of("--prediction", prediction.toString()));
        }
        for (String i : inject) {
            a.addAll(List.of("--inject", i));
        }
        return cli(a.toArray(String[]::new));
    }

    @Test
    void predictRunAcceptThenDiagnoseTwoFaultsBlind(@TempDir Path tmp) throws Exception {
        Live.requireTorch();
        Path pred = tmp.resolve("pred.json");
        Out p = cli("predict", "--scenario", "cpu-x4-gloo", "-o", pred.toString());
        assertThat(p.code()).as(p.err()).isZero();

        Path base = tmp.resolve("baseline");
        Out r = run(base, "one-64mib-fp32", pred);
        assertThat(r.code()).as(r.err()).isZero();

        Out acc = cli("accept", "--prediction", pred.toString(), "--run", base.toString(), "--format", "json");
        assertThat(acc.code()).as(acc.out() + acc.err()).isZero();
        JsonNode table = Json.mapper().readTree(acc.out());
        assertThat(table.path("verdict").asText()).isEqualTo("PASS");
        boolean replicasPass = false;
        for (JsonNode row : table.path("rows")) {
            assertThat(row.path("verdict").asText()).as(row.toString()).isIn("PASS", "N/A");
            replicasPass |= row.path("id").asText().equals("replicas")
                    && row.path("verdict").asText().equals("PASS");
        }
        assertThat(replicasPass).isTrue();

        // Diagnosis on a small model: its CPU step is short, so an injected 40 ms of compute stands far above gloo's
        // noise.
        Path small = tmp.resolve("small.json");
        java.nio.file.Files.writeString(
                small,
                "{\"name\":\"small\",\"parameters\":["
                        + "{\"name\":\"a\",\"shape\":[512,512],\"dtype\":\"float32\",\"requiresGrad\":true},"
                        + "{\"name\":\"b\",\"shape\":[512],\"dtype\":\"float32\",\"requiresGrad\":true},"
                        + "{\"name\":\"c\",\"shape\":[512,512],\"dtype\":\"float32\",\"requiresGrad\":true},"
                        + "{\"name\":\"d\",\"shape\":[512,512],\"dtype\":\"float32\",\"requiresGrad\":true}],\"bucketCapMb\":25}");
        Path smallBase = tmp.resolve("small-baseline");
        Out sb = small(smallBase, small);
        assertThat(sb.code()).as(sb.err()).isZero();
        Path slow = tmp.resolve("slow");
        // A flake seen once beside two CPU burners (exit 4, a rank failed): the message says which rank and why.
        Out sv = small(slow, small, "compute_delay_ms=40");
        assertThat(sv.code()).as(sv.err()).isZero();
        Out d = cli("diagnose", "--baseline", smallBase.toString(), "--variant", slow.toString(), "--format", "json");
        JsonNode dj = Json.mapper().readTree(d.out());
        assertThat(dj.at("/rootCause/layer").asText()).as(d.out()).isEqualTo("compute");
        // On a quiet machine the step regresses with it. On an oversubscribed one (seen: load average 20 on 2 cores)
        // the
        // ranks' 40 ms sleep overlaps their wait for a CPU and the step hardly moves (148.6 → 154.9 ms) while compute
        // outside communication rises 4.6×: then the diagnosis must say the step-time effect is undecided, not claim
        // it.
        assertThat(dj.at("/regression/detected").asBoolean()
                        || dj.at("/rootCause/evidence").toString().contains("undecided"))
                .as(d.out())
                .isTrue();
        assertThat(d.code()).isEqualTo(1);

        Path corrupt = tmp.resolve("corrupt");
        assertThat(small(corrupt, small, "corrupt_grad_rank=1").code()).isZero();
        Out c = cli(
                "diagnose", "--baseline", smallBase.toString(), "--variant", corrupt.toString(), "--format", "json");
        JsonNode cj = Json.mapper().readTree(c.out());
        assertThat(cj.at("/rootCause/layer").asText()).as(c.out()).isEqualTo("correctness");
        assertThat(c.code()).isEqualTo(1);

        // A smaller bucket cap is a DDP-bucket change. Rebuilt limits are [first bucket, cap]; torch 1.13's first
        // bucket is
        // always 1 MiB, so with d, c, b, a ready in that order: cap 25 MiB → [d] [c b a]; cap 0.2 MiB → [d] [c] [b a].
        Path capped = tmp.resolve("capped");
        assertThat(small(capped, small, "bucket_cap_mb=0.2").code()).isZero();
        Out b = cli("diagnose", "--baseline", smallBase.toString(), "--variant", capped.toString(), "--format", "json");
        JsonNode bj = Json.mapper().readTree(b.out());
        assertThat(bj.at("/rootCause/layer").asText()).as(b.out()).isEqualTo("ddp-buckets");
        assertThat(bj.at("/rootCause/owner").asText()).as(b.out()).isEqualTo("PyTorch");

        // find_unused_parameters: a DDP flag, seen in DDP's own logging data; the fix restores it in the constructor.
        Path unused = tmp.resolve("unused");
        assertThat(small(unused, small, "find_unused_parameters=true").code()).isZero();
        Out u = cli("diagnose", "--baseline", smallBase.toString(), "--variant", unused.toString(), "--format", "json");
        JsonNode uj = Json.mapper().readTree(u.out());
        assertThat(uj.at("/rootCause/layer").asText()).as(u.out()).isEqualTo("ddp-config");
        assertThat(uj.at("/rootCause/owner").asText()).as(u.out()).isEqualTo("PyTorch");
        assertThat(uj.at("/rootCause/fix").asText()).as(u.out()).contains("find_unused_parameters");

        // A/A: the same configuration again changes nothing on the path. (Whether a live CPU A/A pair shows no
        // step-time
        // regression depends on the machine's other load, so that part is asserted on recorded samples in
        // DiagnosisTest.)
        Path again = tmp.resolve("again");
        assertThat(small(again, small).code()).isZero();
        Out aa = cli("diagnose", "--baseline", smallBase.toString(), "--variant", again.toString(), "--format", "json");
        JsonNode aj = Json.mapper().readTree(aa.out());
        assertThat(aj.at("/correctness/verdict").asText()).as(aa.out()).isEqualTo("PASS");
        // A busier machine during the second run is named as such ("machine-load"), never a change of the job's path.
        assertThat(aj.at("/rootCause/layer").asText()).as(aa.out()).isIn("none", "compute", "machine-load");
    }
}
