package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

class MainTest {
    static final class Result {
        final int code;
        final String out;
        final String err;

        Result(int code, String out, String err) {
            this.code = code;
            this.out = out;
            this.err = err;
        }
    }

    static Result run(String... args) {
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        int code = Main.run(args, new PrintWriter(o, true), new PrintWriter(e, true));
        return new Result(code, o.toString(), e.toString());
    }

    @Test
    void helpListsEveryVerb() {
        Result r = run("--help");
        assertThat(r.code).isZero();
        assertThat(r.out).contains("predict", "ingest", "run", "accept", "diagnose", "verify-fix", "explain", "prove");
    }

    @Test
    void unknownVerbIsAUsageError() {
        Result r = run("frobnicate");
        assertThat(r.code).isEqualTo(2);
        assertThat(r.err).contains("frobnicate");
    }
}
