package io.pathproof.diagnose;

/**
 * Student's t distribution: its quantiles, for intervals over a handful of runs where the spread between them is
 * itself estimated (Welch–Satterthwaite degrees of freedom may be fractional). The CDF from the regularized incomplete
 * beta function (continued fraction, Lentz's method), the quantile by bisection on it: exact to 1e-10, no tables.
 */
final class StudentT {
    private StudentT() {}

    /** The {@code p} quantile (0 < p < 1) of t with {@code df} > 0 degrees of freedom. */
    static double quantile(double p, double df) {
        if (!(p > 0 && p < 1) || !(df > 0)) {
            throw new IllegalArgumentException("t quantile: p " + p + ", df " + df);
        }
        if (p < 0.5) {
            return -quantile(1 - p, df);
        }
        if (p == 0.5) {
            return 0;
        }
        double lo = 0;
        double hi = 1;
        while (cdf(hi, df) < p) {
            hi *= 2;
            if (hi > 1e12) {
                return Double.POSITIVE_INFINITY;
            }
        }
        for (int i = 0; i < 200 && hi - lo > 1e-12 * Math.max(1, hi); i++) {
            double mid = (lo + hi) / 2;
            if (cdf(mid, df) < p) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return (lo + hi) / 2;
    }

    /** P(T ≤ t). */
    static double cdf(double t, double df) {
        double x = df / (df + t * t);
        double tail = 0.5 * incompleteBeta(x, df / 2, 0.5);
        return t >= 0 ? 1 - tail : tail;
    }

    /** The regularized incomplete beta function I_x(a, b). */
    static double incompleteBeta(double x, double a, double b) {
        if (x <= 0) {
            return 0;
        }
        if (x >= 1) {
            return 1;
        }
        double front = Math.exp(logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x));
        // The continued fraction converges fast for x below (a + 1) / (a + b + 2); above it, the symmetry
        // I_x(a,b) = 1 - I_{1-x}(b,a).
        if (x < (a + 1) / (a + b + 2)) {
            return front * fraction(x, a, b) / a;
        }
        return 1 - front * fraction(1 - x, b, a) / b;
    }

    private static double fraction(double x, double a, double b) {
        double tiny = 1e-300;
        double c = 1;
        double d = 1 - (a + b) * x / (a + 1);
        d = Math.abs(d) < tiny ? tiny : d;
        d = 1 / d;
        double h = d;
        for (int m = 1; m <= 500; m++) {
            int m2 = 2 * m;
            double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
            d = 1 + aa * d;
            d = Math.abs(d) < tiny ? tiny : d;
            c = 1 + aa / c;
            c = Math.abs(c) < tiny ? tiny : c;
            d = 1 / d;
            h *= d * c;
            aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
            d = 1 + aa * d;
            d = Math.abs(d) < tiny ? tiny : d;
            c = 1 + aa / c;
            c = Math.abs(c) < tiny ? tiny : c;
            d = 1 / d;
            double del = d * c;
            h *= del;
            if (Math.abs(del - 1) < 1e-15) {
                break;
            }
        }
        return h;
    }

    /** ln Γ(x) for x > 0 (Lanczos, g = 7, nine coefficients). */
    static double logGamma(double x) {
        double[] g = {
            0.99999999999980993,
            676.5203681218851,
            -1259.1392167224028,
            771.32342877765313,
            -176.61502916214059,
            12.507343278686905,
            -0.13857109526572012,
            9.9843695780195716e-6,
            1.5056327351493116e-7
        };
        if (x < 0.5) {
            return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
        }
        x -= 1;
        double a = g[0];
        double t = x + 7.5;
        for (int i = 1; i < 9; i++) {
            a += g[i] / (x + i);
        }
        return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
    }
}
