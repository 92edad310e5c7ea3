package io.pathproof.bench;

import io.pathproof.diagnose.Diagnosis;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Source;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Power and false-alarm rate of {@code diagnose}'s step-time rule, measured through the public entry
 * ({@link Diagnosis#diagnose}) on runs that hold only step times: 48 measured iterations per run, A/A pairs and pairs
 * whose variant is 5 % slower. Not a unit test (a main; *Bench is never run by surefire).
 *
 * <p>Noise sources: (1) a lognormal model, step = median × exp(σZ) with σ = ln(1+CV²)^½ for CV in 1..8 %, the
 * spread of GPU step times of a fixed canary (assumption, documented in docs/PERFORMANCE.md); (2) resampling with
 * replacement from recorded step times (src/test/resources/io/pathproof/diagnose/steps/): the real one-H200 run
 * (plain and instrumented phases) and a gloo CPU run on a shared 2-core machine.
 *
 * <p>Run: {@code ./mvnw -q -B -o test-compile && ./mvnw -q -B -o dependency:build-classpath -Dmdep.includeScope=test
 * -Dmdep.outputFile=cp.txt && java -cp target/test-classes:target/classes:$(cat cp.txt) io.pathproof.bench.DiagnosePowerBench}
 * (optional arguments: trials per cell, default 1000; seed, default 2026; a third argument, trials per cell of the
 * adaptive rule, prints only its table: {@code … DiagnosePowerBench 1000 2026 200}).
 */
public final class DiagnosePowerBench {
    private DiagnosePowerBench() {}

    static final int ITERATIONS = 48;
    static final double EFFECT = 1.05;

    public static void main(String[] args) throws IOException {
        int trials = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        long seed = args.length > 1 ? Long.parseLong(args[1]) : 2026L;
        if (args.length > 3 && args[3].equals("pairs")) {
            pairedRuns(
                    Integer.parseInt(args[2]),
                    seed,
                    args.length > 4 ? Integer.parseInt(args[4]) : 6,
                    args.length > 5 ? Double.parseDouble(args[5]) : 0.05);
            return;
        }
        if (args.length > 3 && args[3].equals("runs")) {
            pooledRuns(
                    Integer.parseInt(args[2]),
                    seed,
                    args.length > 4 ? Integer.parseInt(args[4]) : 1,
                    args.length > 5 ? Double.parseDouble(args[5]) : 0.05);
            return;
        }
        if (args.length > 2) {
            adaptive(Integer.parseInt(args[2]), seed);
            return;
        }
        System.out.printf(
                Locale.ROOT, "%-40s %8s %12s %12s %10s%n", "noise", "trials", "false alarm", "power(+5%)", "ms/diag");
        for (double cv : new double[] {0.01, 0.02, 0.03, 0.04, 0.05, 0.08, 0.10}) {
            double sigma = Math.sqrt(Math.log(1 + cv * cv));
            SplittableRandom rnd = new SplittableRandom(seed);
            row(String.format(Locale.ROOT, "lognormal CV %.0f%%", cv * 100), trials, () -> {
                double[] s = new double[ITERATIONS];
                for (int i = 0; i < s.length; i++) {
                    s[i] = 2.33 * Math.exp(sigma * gauss(rnd));
                }
                return s;
            });
        }
        resampled("recorded H200 plain steps (48), resampled", "h200-1rank-plain.csv", trials, seed);
        resampled("recorded H200 instrumented steps (48)", "h200-1rank-instrumented.csv", trials, seed);
        resampled("recorded gloo CPU (CV 0.90), resampled", "gloo-cpu-2rank-16mib.csv", trials, seed);
    }

    /** The looks of the adaptive rule: 48, 96, 192, then the cap of 384 iterations per run. */
    static final int[] LOOKS = {48, 96, 192, 384};

    /**
     * Adaptive iterations (issue 11 §3): baseline and variant grow together, look by look, and stop at the first look
     * that decides ({@link Diagnosis#decideSteps}); a run still undecided at the cap counts as no alarm. Lognormal noise
     * at CV 2, 5 and 10 %.
     */
    static void adaptive(int trials, long seed) {
        System.out.printf(
                Locale.ROOT,
                "%n%-28s %8s %12s %12s %14s %14s%n",
                "adaptive (48..384 iters)",
                "trials",
                "false alarm",
                "power(+5%)",
                "mean iters A/A",
                "mean iters +5%");
        for (double cv : new double[] {0.02, 0.05, 0.10}) {
            double sigma = Math.sqrt(Math.log(1 + cv * cv));
            SplittableRandom rnd = new SplittableRandom(seed);
            int alarms = 0;
            int hits = 0;
            long itersAa = 0;
            long itersAb = 0;
            for (int t = 0; t < trials; t++) {
                double[] base = lognormal(rnd, sigma, LOOKS[LOOKS.length - 1]);
                double[] same = lognormal(rnd, sigma, LOOKS[LOOKS.length - 1]);
                double[] slow = lognormal(rnd, sigma, LOOKS[LOOKS.length - 1]);
                for (int i = 0; i < slow.length; i++) {
                    slow[i] *= EFFECT;
                }
                int[] a = sequential(base, same);
                int[] b = sequential(base, slow);
                alarms += a[0];
                hits += b[0];
                itersAa += a[1];
                itersAb += b[1];
            }
            System.out.printf(
                    Locale.ROOT,
                    "%-28s %8d %11.2f%% %11.2f%% %14.1f %14.1f%n",
                    String.format(Locale.ROOT, "lognormal CV %.0f%%", cv * 100),
                    trials,
                    100.0 * alarms / trials,
                    100.0 * hits / trials,
                    (double) itersAa / trials,
                    (double) itersAb / trials);
        }
    }

    /**
     * prove's sequence of runs (issue 19 §2): runs of 24 measured steps (prove's default), a pair per look, up to 3
     * looks, each look at alpha/3 with every run of a side pooled (Diagnosis.diagnose over lists, as prove.Sequential
     * calls it). Lognormal noise, each run with its own level drawn around the configuration's (a machine's drift
     * between runs, {@code drift} of the step as a standard deviation, default 5 %), true ratios 1, 1.05 and 1.10. Per
     * cell: how often each final verdict came, and the runs per side used. {@code minRuns}: the runs per side before the
     * first look (1 as prove does it). Run: {@code … DiagnosePowerBench 0 2026 TRIALS runs [MIN_RUNS [DRIFT]]}.
     */
    static void pooledRuns(int trials, long seed, int minRuns, double drift) {
        int steps = 24;
        int looks = 3;
        System.out.printf(
                Locale.ROOT,
                "%n%-34s %6s %7s %12s %12s %12s %12s %10s%n",
                "runs of 24, " + minRuns + "..3 runs, drift " + Math.round(drift * 100) + "%",
                "ratio",
                "trials",
                "regression",
                "no change",
                "inconclusive",
                "improvement",
                "runs/side");
        for (double cv : new double[] {0.02, 0.10, 0.25}) {
            double sigma = Math.sqrt(Math.log(1 + cv * cv));
            for (double ratio : new double[] {1.0, 1.05, 1.10}) {
                SplittableRandom rnd = new SplittableRandom(seed);
                java.util.Map<String, Integer> verdicts = new java.util.TreeMap<>();
                long runsUsed = 0;
                for (int t = 0; t < trials; t++) {
                    List<Evidence> b = new ArrayList<>();
                    List<Evidence> v = new ArrayList<>();
                    String verdict = "inconclusive";
                    for (int k = 1; k <= looks; k++) {
                        b.add(run("b" + k, drawRun(rnd, sigma, drift, 1.0, steps)));
                        v.add(run("v" + k, drawRun(rnd, sigma, drift, ratio, steps)));
                        if (k < minRuns) {
                            continue;
                        }
                        verdict = Diagnosis.diagnose(
                                        b, v, Diagnosis.Rule.DEFAULT.at(k - minRuns + 1, looks - minRuns + 1))
                                .regression()
                                .verdict();
                        if (!verdict.equals("inconclusive")) {
                            break;
                        }
                    }
                    verdicts.merge(verdict, 1, Integer::sum);
                    runsUsed += b.size();
                }
                System.out.printf(
                        Locale.ROOT,
                        "%-34s %6.2f %7d %11.1f%% %11.1f%% %11.1f%% %11.1f%% %10.2f%n",
                        String.format(Locale.ROOT, "lognormal CV %.0f%%", cv * 100),
                        ratio,
                        trials,
                        pct(verdicts, "regression", trials),
                        pct(verdicts, "no change", trials),
                        pct(verdicts, "inconclusive", trials),
                        pct(verdicts, "improvement", trials),
                        (double) runsUsed / trials);
            }
        }
    }

    /**
     * prove's sequence as it is now: time-adjacent pairs of 24-step runs, at least {@link Diagnosis.Rule#PROVE_PAIRS}
     * pairs before a verdict, looks after each further pair up to {@code maxPairs}, alpha spent over the looks that can
     * decide; each run's level drawn around its configuration's ({@code drift} as a standard deviation: the machine
     * between runs), true ratios 1, 1.10 and 1.25. Per cell the share of each final verdict and the pairs used. Run:
     * {@code … DiagnosePowerBench 0 2026 TRIALS pairs [MAX_PAIRS [DRIFT]]}.
     */
    static void pairedRuns(int trials, long seed, int maxPairs, double drift) {
        int steps = 24;
        Diagnosis.Rule rule = Diagnosis.Rule.DEFAULT.withPairs(Diagnosis.Rule.PROVE_PAIRS);
        int looks = Math.max(1, maxPairs - rule.pairs() + 1);
        System.out.printf(
                Locale.ROOT,
                "%n%-34s %6s %7s %12s %12s %12s %12s %10s%n",
                "pairs of 24, up to " + maxPairs + ", drift " + Math.round(drift * 100) + "%",
                "ratio",
                "trials",
                "regression",
                "no change",
                "inconclusive",
                "improvement",
                "pairs");
        for (double cv : new double[] {0.02, 0.10, 0.25}) {
            double sigma = Math.sqrt(Math.log(1 + cv * cv));
            for (double ratio : new double[] {1.0, 1.10, 1.25}) {
                SplittableRandom rnd = new SplittableRandom(seed);
                java.util.Map<String, Integer> verdicts = new java.util.TreeMap<>();
                long pairsUsed = 0;
                for (int t = 0; t < trials; t++) {
                    List<Evidence> b = new ArrayList<>();
                    List<Evidence> v = new ArrayList<>();
                    String verdict = "inconclusive";
                    for (int k = 1; k <= maxPairs; k++) {
                        b.add(run("b" + k, drawRun(rnd, sigma, drift, 1.0, steps)));
                        v.add(run("v" + k, drawRun(rnd, sigma, drift, ratio, steps)));
                        if (k < rule.pairs()) {
                            continue;
                        }
                        verdict = Diagnosis.diagnose(b, v, rule.at(k - rule.pairs() + 1, looks))
                                .regression()
                                .verdict();
                        if (!verdict.equals("inconclusive")) {
                            break;
                        }
                    }
                    verdicts.merge(verdict, 1, Integer::sum);
                    pairsUsed += b.size();
                }
                System.out.printf(
                        Locale.ROOT,
                        "%-34s %6.2f %7d %11.1f%% %11.1f%% %11.1f%% %11.1f%% %10.2f%n",
                        String.format(Locale.ROOT, "lognormal CV %.0f%%", cv * 100),
                        ratio,
                        trials,
                        pct(verdicts, "regression", trials),
                        pct(verdicts, "no change", trials),
                        pct(verdicts, "inconclusive", trials),
                        pct(verdicts, "improvement", trials),
                        (double) pairsUsed / trials);
            }
        }
    }

    private static double pct(java.util.Map<String, Integer> m, String k, int trials) {
        return 100.0 * m.getOrDefault(k, 0) / trials;
    }

    /** One run: its level drawn around {@code ratio} (the drift between runs), then its steps around that level. */
    static double[] drawRun(SplittableRandom rnd, double sigma, double drift, double ratio, int n) {
        double level = ratio * Math.exp(drift * gauss(rnd));
        double[] s = new double[n];
        for (int i = 0; i < n; i++) {
            s[i] = 2.33 * level * Math.exp(sigma * gauss(rnd));
        }
        return s;
    }

    /** {regression called (1/0), iterations per run used}. */
    static int[] sequential(double[] base, double[] variant) {
        for (int n : LOOKS) {
            String d = Diagnosis.decideSteps(
                    java.util.Arrays.copyOf(base, n), java.util.Arrays.copyOf(variant, n), LOOKS.length, EFFECT - 1);
            if (!d.equals("undecided")) {
                return new int[] {d.equals("regression") ? 1 : 0, n};
            }
        }
        return new int[] {0, LOOKS[LOOKS.length - 1]};
    }

    static double[] lognormal(SplittableRandom rnd, double sigma, int n) {
        double[] s = new double[n];
        for (int i = 0; i < n; i++) {
            s[i] = 2.33 * Math.exp(sigma * gauss(rnd));
        }
        return s;
    }

    static void resampled(String name, String file, int trials, long seed) throws IOException {
        double[] pool = recorded("/io/pathproof/diagnose/steps/" + file);
        SplittableRandom rnd = new SplittableRandom(seed);
        row(name, trials, () -> {
            double[] s = new double[ITERATIONS];
            for (int i = 0; i < s.length; i++) {
                s[i] = pool[rnd.nextInt(pool.length)];
            }
            return s;
        });
    }

    interface Sampler {
        double[] draw();
    }

    static void row(String name, int trials, Sampler sampler) {
        int alarms = 0;
        int hits = 0;
        long t0 = System.nanoTime();
        for (int t = 0; t < trials; t++) {
            double[] base = sampler.draw();
            if (detected(base, sampler.draw(), 1.0)) {
                alarms++;
            }
            if (detected(base, sampler.draw(), EFFECT)) {
                hits++;
            }
        }
        double msPer = (System.nanoTime() - t0) / 1e6 / (2.0 * trials);
        System.out.printf(
                Locale.ROOT,
                "%-40s %8d %11.2f%% %11.2f%% %10.2f%n",
                name,
                trials,
                100.0 * alarms / trials,
                100.0 * hits / trials,
                msPer);
    }

    static boolean detected(double[] base, double[] variant, double factor) {
        double[] v = variant.clone();
        for (int i = 0; i < v.length; i++) {
            v[i] *= factor;
        }
        return Diagnosis.diagnose(run("baseline", base), run("variant", v))
                .regression()
                .detected();
    }

    static Evidence run(String name, double[] ms) {
        List<Evidence.Step> steps = new ArrayList<>();
        for (int i = 0; i < ms.length; i++) {
            steps.add(new Evidence.Step(0, i, ms[i], true, Source.line(name + "/steps.jsonl", i + 1), null, null));
        }
        return Evidence.builder().runDir(name).steps(steps).build();
    }

    static double[] recorded(String resource) throws IOException {
        try (InputStream in = DiagnosePowerBench.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("missing resource " + resource);
            }
            String[] lines = new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n");
            List<Double> v = new ArrayList<>();
            for (int i = 1; i < lines.length; i++) {
                String[] f = lines[i].trim().split(",");
                if (f.length == 2) {
                    v.add(Double.parseDouble(f[1]));
                }
            }
            return v.stream().mapToDouble(Double::doubleValue).toArray();
        }
    }

    static double gauss(SplittableRandom r) {
        double u1 = r.nextDouble();
        double u2 = r.nextDouble();
        return Math.sqrt(-2 * Math.log(Math.max(u1, 1e-300))) * Math.cos(2 * Math.PI * u2);
    }
}
