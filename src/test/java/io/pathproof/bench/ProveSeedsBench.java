package io.pathproof.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.cli.Main;
import io.pathproof.core.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * {@code prove --fault random --seed S} for S = first..last (default 1..10) on this machine's CPU (gloo): one line per
 * seed (the fault drawn, the layer diagnosed, fix verified, wall time, load) and a final count. Exit 1 when any seed's
 * diagnosis misses the injected layer or its fix is not verified. Slow (three or four real 4-rank runs per seed), so a
 * main, not a test; *Bench is never run by surefire.
 *
 * <p>Run: {@code ./mvnw -q -B -o test-compile && ./mvnw -q -B -o dependency:build-classpath -Dmdep.includeScope=test
 * -Dmdep.outputFile=cp.txt && java -cp target/test-classes:target/classes:$(cat cp.txt) io.pathproof.bench.ProveSeedsBench OUTDIR 1 10}
 */
public final class ProveSeedsBench {
    private ProveSeedsBench() {}

    public static void main(String[] args) throws Exception {
        Path out = Path.of(args.length > 0 ? args[0] : "prove-seeds");
        int first = args.length > 1 ? Integer.parseInt(args[1]) : 1;
        int last = args.length > 2 ? Integer.parseInt(args[2]) : 10;
        Files.createDirectories(out);
        int right = 0;
        int fixed = 0;
        int n = 0;
        for (int s = first; s <= last; s++) {
            Path dir = out.resolve("seed-" + s);
            long t0 = System.nanoTime();
            StringWriter o = new StringWriter();
            StringWriter e = new StringWriter();
            int code = Main.run(
                    new String[] {"prove", "--seed", Integer.toString(s), "--out", dir.toString()},
                    new PrintWriter(o, true),
                    new PrintWriter(e, true));
            double wall = (System.nanoTime() - t0) / 1e9;
            double load = Double.parseDouble(
                    Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
            n++;
            if (!Files.exists(dir.resolve("proof.json"))) {
                System.out.printf(
                        Locale.ROOT,
                        "seed %2d: exit %d, no proof (%s)%n",
                        s,
                        code,
                        e.toString().strip());
                continue;
            }
            JsonNode p = Json.mapper().readTree(dir.resolve("proof.json").toFile());
            boolean match = p.at("/reveal/match").asBoolean();
            boolean fix = p.at("/reveal/fixed").asBoolean();
            right += match ? 1 : 0;
            fixed += fix ? 1 : 0;
            System.out.printf(
                    Locale.ROOT,
                    "seed %2d: exit %d  injected %-24s %-32s diagnosed %-12s %s  fix %s  %.1f s wall, load %.1f%n",
                    s,
                    code,
                    p.at("/reveal/injected/kind").asText(),
                    String.join(",", Json.mapper().convertValue(p.at("/reveal/injected/settings"), String[].class)),
                    p.at("/reveal/diagnosed/layer").asText(),
                    match ? "RIGHT" : "WRONG",
                    fix ? "verified" : "NOT verified",
                    wall,
                    load);
        }
        System.out.printf(Locale.ROOT, "%d/%d diagnosed right, %d/%d fixes verified%n", right, n, fixed, n);
        System.exit(right == n && fixed == n ? 0 : 1);
    }
}
