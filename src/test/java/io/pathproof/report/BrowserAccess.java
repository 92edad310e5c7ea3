package io.pathproof.report;

import java.nio.file.Path;

/** The browser helper for tests of other packages (the prove live test renders its proof's report). */
public final class BrowserAccess {
    private BrowserAccess() {}

    /** The DOM of {@code html} after its scripts ran in headless chromium (skips or fails as {@link Browser#require}). */
    public static String dumpDom(Path html, Path tmp) throws Exception {
        return Browser.dumpDom(Browser.require(), html, tmp).dom();
    }
}
