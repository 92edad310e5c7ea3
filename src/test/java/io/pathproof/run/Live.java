package io.pathproof.run;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import org.junit.jupiter.api.Assumptions;

/**
 * Whether the live tests (real torch processes) can run here: they skip when no Python with torch is found, unless
 * {@code PATHPROOF_REQUIRE_LIVE=1} (CI), where a missing torch fails them.
 */
final class Live {
    private static PythonProbe.Python found;
    private static boolean probed;

    private Live() {}

    static synchronized PythonProbe.Python requireTorch() {
        if (!probed) {
            probed = true;
            for (String exe : PythonProbe.candidates(null, System.getenv("PATHPROOF_PYTHON"), System.getenv("PATH"))) {
                found = PythonProbe.probe(exe, new ArrayList<>());
                if (found != null && found.gloo()) {
                    break;
                }
                found = null;
            }
        }
        if (found == null) {
            if ("1".equals(System.getenv("PATHPROOF_REQUIRE_LIVE"))) {
                fail("PATHPROOF_REQUIRE_LIVE=1 but no Python with torch and gloo was found");
            }
            Assumptions.abort("no Python with torch found: live run skipped");
        }
        return found;
    }
}
