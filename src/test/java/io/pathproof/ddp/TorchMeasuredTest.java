package io.pathproof.ddp;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.scenario.DType;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Version;
import io.pathproof.scenario.Workload;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The planner against what torch itself did: 2.11.0 on the project's H200 machine ({@code
 * testdata/torch-2.11-measured.txt}) and 1.13.1 on a Debian build machine ({@code testdata/torch-1.13-measured.txt}):
 * the raw assignment function, DDP's logging data for seven configurations, and the buckets a comm hook saw in each
 * iteration. The files are the measurements as printed; this test parses them, it holds no expected number of its own.
 */
class TorchMeasuredTest {
    static final Map<String, Version> FILES = Map.of(
            "testdata/torch-2.11-measured.txt",
            Version.parse("2.11.0+cu130"),
            "testdata/torch-1.13-measured.txt",
            Version.parse("1.13.0a0"));
    static final Pattern LINE = Pattern.compile("^(assign|logging|hook) (\\S+) (.*)$");

    /** Lines of all files: kind, config, measured text, torch version. */
    static List<String[]> lines() throws IOException {
        List<String[]> out = new ArrayList<>();
        for (Map.Entry<String, Version> f : new java.util.TreeMap<>(FILES).entrySet()) {
            out.addAll(lines(f.getKey(), f.getValue().text()));
        }
        return out;
    }

    static List<String[]> lines(String file, String version) throws IOException {
        try (InputStream in = TorchMeasuredTest.class.getResourceAsStream(file)) {
            List<String[]> out = new ArrayList<>();
            for (String l : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                Matcher m = LINE.matcher(l);
                if (m.matches()) {
                    out.add(new String[] {m.group(1), m.group(2), m.group(3), version});
                }
            }
            return out;
        }
    }

    /** The §1.6 model with the shapes torch gives its Linear layers. */
    static List<Parameter> model() {
        return List.of(
                new Parameter("fc1.weight", List.of(256L, 1024L), DType.FLOAT32, true),
                new Parameter("fc1.bias", List.of(256L), DType.FLOAT32, true),
                new Parameter("fc2.weight", List.of(8192L, 256L), DType.FLOAT32, true),
                new Parameter("fc2.bias", List.of(8192L), DType.FLOAT32, true),
                new Parameter("fc3.weight", List.of(10L, 8192L), DType.FLOAT32, true),
                new Parameter("fc3.bias", List.of(10L), DType.FLOAT32, true),
                new Parameter("frozen.weight", List.of(4L, 10L), DType.FLOAT32, false),
                new Parameter("frozen.bias", List.of(4L), DType.FLOAT32, true));
    }

    record Config(Workload workload, Map<String, String> env) {}

    static Config config(String spec) {
        Double cap = null;
        boolean fu = false;
        boolean sg = false;
        Map<String, String> env = new HashMap<>();
        if (!spec.equals("default")) {
            for (String kv : spec.split(",")) {
                String[] p = kv.split("=", 2);
                switch (p[0]) {
                    case "bucket_cap_mb" -> cap = Double.parseDouble(p[1]);
                    case "find_unused_parameters" -> fu = Boolean.parseBoolean(p[1].toLowerCase());
                    case "static_graph" -> sg = Boolean.parseBoolean(p[1].toLowerCase());
                    default -> env.put(p[0].replaceFirst("^env:", ""), p[1]);
                }
            }
        }
        return new Config(new Workload("m", model(), cap, fu, sg, false), env);
    }

    static String field(String dict, String key) {
        Matcher m = Pattern.compile("'" + key + "': (None|'([^']*)')").matcher(dict);
        assertThat(m.find()).as("%s in %s", key, dict).isTrue();
        return m.group(2);
    }

    static String sizes(List<Bucket> bs) {
        return String.join(", ", bs.stream().map(b -> Long.toString(b.bytes())).toList());
    }

    static String indices(List<Bucket> bs) {
        List<String> names = new ArrayList<>();
        for (Parameter p : model()) {
            if (p.requiresGrad()) {
                names.add(p.name());
            }
        }
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
    void loggingDataOfEveryConfiguration() throws IOException {
        int checked = 0;
        for (String[] l : lines()) {
            if (!l[0].equals("logging")) {
                continue;
            }
            Config c = config(l[1]);
            BucketPlan plan = BucketPlanner.plan(c.workload(), Version.parse(l[3]), c.env());
            assertThat(sizes(plan.construction())).as("torch %s %s", l[3], l[1]).isEqualTo(field(l[2], "bucket_sizes"));
            String rebuilt = field(l[2], "rebuilt_bucket_sizes");
            if (rebuilt == null) {
                assertThat(plan.rebuilt()).as("torch %s %s", l[3], l[1]).isEmpty();
            } else {
                assertThat(sizes(plan.rebuilt())).as("torch %s %s", l[3], l[1]).isEqualTo(rebuilt);
                assertThat(indices(plan.rebuilt()))
                        .as("torch %s %s", l[3], l[1])
                        .isEqualTo(field(l[2], "rebuilt_per_bucket_param_indices"));
            }
            checked++;
        }
        assertThat(checked).isEqualTo(14);
    }

    @Test
    void bucketsSeenByTheCommHookInEachIteration() throws IOException {
        Pattern entry = Pattern.compile("\\((\\d+), (\\d+), (\\d+), (True|False)\\)");
        int checked = 0;
        for (String[] l : lines()) {
            if (!l[0].equals("hook")) {
                continue;
            }
            Config c = config(l[1]);
            BucketPlan plan = BucketPlanner.plan(c.workload(), Version.parse(l[3]), c.env());
            Map<Integer, List<String>> seen = new HashMap<>();
            Matcher m = entry.matcher(l[2]);
            while (m.find()) {
                seen.computeIfAbsent(Integer.parseInt(m.group(1)), k -> new ArrayList<>())
                        .add(m.group(2) + "/" + m.group(3) + "/" + m.group(4).toLowerCase());
            }
            for (Map.Entry<Integer, List<String>> e : seen.entrySet()) {
                List<String> predicted = plan.bucketsAt(e.getKey()).stream()
                        .map(b -> b.index() + "/" + b.bytes() / b.dtype().elementSize() + "/" + b.isLast())
                        .toList();
                assertThat(predicted)
                        .as("torch %s %s iteration %d", l[3], l[1], e.getKey())
                        .isEqualTo(e.getValue());
            }
            checked++;
        }
        assertThat(checked).isEqualTo(6);
    }

    @Test
    void rawAssignmentFunction() throws IOException {
        Pattern size = Pattern.compile("^(?:(f16|f32|bf16|f64):)?(\\d+)(MiB|KiB)?$");
        int checked = 0;
        for (String[] l : lines()) {
            if (!l[0].equals("assign")) {
                continue;
            }
            String[] spec = l[1].split("/");
            List<BucketAssignment.Tensor> tensors = new ArrayList<>();
            for (String t : spec[0].substring(1, spec[0].length() - 1).split(",")) {
                Matcher m = size.matcher(t);
                assertThat(m.matches()).as(t).isTrue();
                long bytes = Long.parseLong(m.group(2))
                        * ("MiB".equals(m.group(3)) ? 1 << 20 : "KiB".equals(m.group(3)) ? 1 << 10 : 1);
                DType type = m.group(1) == null
                        ? DType.FLOAT32
                        : switch (m.group(1)) {
                            case "f16" -> DType.FLOAT16;
                            case "bf16" -> DType.BFLOAT16;
                            case "f64" -> DType.FLOAT64;
                            default -> DType.FLOAT32;
                        };
                tensors.add(new BucketAssignment.Tensor(bytes, type));
            }
            List<Integer> idx = null;
            if (spec.length > 1) {
                idx = new ArrayList<>();
                for (String s : spec[1].substring(1, spec[1].length() - 1).split(",")) {
                    idx.add(Integer.parseInt(s));
                }
            }
            var r = BucketAssignment.bySize(tensors, List.of(1L << 20, 25L << 20), idx);
            String printed = "(" + r.buckets().toString() + ", " + r.limits().toString() + ")";
            assertThat(printed).as("torch %s %s", l[3], l[1]).isEqualTo(l[2]);
            checked++;
        }
        assertThat(checked).isGreaterThanOrEqualTo(15);
    }
}
