package io.pathproof.ddp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Scenarios;
import io.pathproof.scenario.Version;
import io.pathproof.scenario.Workload;
import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * A real model end to end: {@code make-transformer-dump.py} (testdata) wrote the parameter dump of a 3-layer
 * TransformerEncoder with a frozen embedding through the README's snippet, and DDP's own logging data for six
 * configurations, on Debian's torch 1.13.1 (gloo, CPU) and on torch 2.11.0 (the project's H200 machine, gloo; there
 * the first bucket follows {@code bucket_cap_mb}, so two configurations differ from 1.13). The dump is loaded as a
 * user would load it; the construction
 * buckets must equal DDP's; the rebuilt buckets must equal DDP's once the plan is given the ready order DDP logged —
 * which here is not the reverse parameter order the planner assumes without a run.
 */
class RealModelDumpTest {
    /** DDP's logging of the same model under each torch version. */
    static final Map<String, Version> LOGS = Map.of(
            "testdata/transformer-torch-1.13.ddp.txt", Version.parse("1.13.0a0"),
            "testdata/transformer-torch-2.11.ddp.txt", Version.parse("2.11.0+cu130"));

    static final Version TORCH = Version.parse("1.13.0a0");
    static final Pattern LOG = Pattern.compile("^logging (\\S+) (\\{.*\\})$");

    static Workload dump() throws URISyntaxException {
        Path p = Path.of(RealModelDumpTest.class
                .getResource("testdata/transformer-torch-1.13.params.jsonl")
                .toURI());
        return Scenarios.workload(p.toString());
    }

    static List<String[]> logs() throws IOException {
        return logs("testdata/transformer-torch-1.13.ddp.txt");
    }

    static List<String[]> logs(String file) throws IOException {
        try (InputStream in = RealModelDumpTest.class.getResourceAsStream(file)) {
            List<String[]> out = new ArrayList<>();
            for (String l : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                Matcher m = LOG.matcher(l);
                if (m.matches()) {
                    out.add(new String[] {m.group(1), m.group(2)});
                }
            }
            return out;
        }
    }

    static List<Integer> readyOrder(String dict) {
        List<Integer> out = new ArrayList<>();
        for (String s : TorchMeasuredTest.field(dict, "prev_iteration_grad_ready_order_indices")
                .split(", ")) {
            out.add(Integer.parseInt(s));
        }
        return out;
    }

    static String indices(Workload w, List<Bucket> bs) {
        List<String> names = w.parameters().stream()
                .filter(Parameter::requiresGrad)
                .map(Parameter::name)
                .toList();
        List<String> out = new ArrayList<>();
        for (Bucket b : bs) {
            out.add(String.join(
                    " ",
                    b.params().stream()
                            .map(n -> Integer.toString(names.indexOf(n)))
                            .toList()));
        }
        return String.join(", ", out);
    }

    @Test
    void constructionAndRebuiltBucketsOfARealModel() throws Exception {
        Workload dumped = dump();
        assertThat(dumped.parameters()).hasSize(39);
        assertThat(dumped.parameters().get(0).requiresGrad()).isFalse();
        int checked = 0;
        for (Map.Entry<String, Version> file : new java.util.TreeMap<>(LOGS).entrySet()) {
            Version torch = file.getValue();
            for (String[] l : logs(file.getKey())) {
                TorchMeasuredTest.Config c = TorchMeasuredTest.config(l[0]);
                Workload w = dumped.withDdpFlags(
                        c.workload().bucketCapMb(),
                        c.workload().findUnusedParameters(),
                        c.workload().staticGraph(),
                        false);
                BucketPlan assumed = BucketPlanner.plan(w, torch, c.env());
                assertThat(TorchMeasuredTest.sizes(assumed.construction()))
                        .as("%s %s", torch, l[0])
                        .isEqualTo(TorchMeasuredTest.field(l[1], "bucket_sizes"));
                String rebuilt = TorchMeasuredTest.field(l[1], "rebuilt_bucket_sizes");
                BucketPlan measured = BucketPlanner.plan(w, torch, c.env(), readyOrder(l[1]));
                if (rebuilt == null) {
                    assertThat(measured.rebuilt()).as("%s %s", torch, l[0]).isEmpty();
                } else {
                    assertThat(TorchMeasuredTest.sizes(measured.rebuilt()))
                            .as("%s %s", torch, l[0])
                            .isEqualTo(rebuilt);
                    assertThat(indices(w, measured.rebuilt()))
                            .as("%s %s", torch, l[0])
                            .isEqualTo(TorchMeasuredTest.field(l[1], "rebuilt_per_bucket_param_indices"));
                    assertThat(measured.assumptions()).anyMatch(a -> a.startsWith("gradient-ready order given"));
                }
                checked++;
            }
        }
        assertThat(checked).isEqualTo(12);
    }

    @Test
    void theAssumedReadyOrderIsOnlyAnAssumption() throws Exception {
        Workload w = dump().withDdpFlags(0.25, false, false, false);
        String[] log = logs().stream()
                .filter(l -> l[0].equals("bucket_cap_mb=0.25"))
                .findFirst()
                .orElseThrow();
        BucketPlan assumed = BucketPlanner.plan(w, TORCH, Map.of());
        BucketPlan measured = BucketPlanner.plan(w, TORCH, Map.of(), readyOrder(log[1]));
        // LayerNorm gradients become ready before the Linear ones they follow: the assumed split differs from DDP's.
        assertThat(indices(w, assumed.rebuilt())).isNotEqualTo(indices(w, measured.rebuilt()));
        assertThat(assumed.assumptions()).anyMatch(a -> a.contains("reverse parameter order"));
    }

    @Test
    void aReadyOrderMustBeAPermutation() throws Exception {
        Workload w = dump();
        assertThatThrownBy(() -> BucketPlanner.plan(w, TORCH, Map.of(), List.of(0, 1, 1)))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("ready order");
    }
}
