package io.pathproof.cli;

import picocli.CommandLine.IVersionProvider;

/** The tool's version, from the jar manifest (or "dev" when run from classes). */
public final class ToolVersion implements IVersionProvider {
    public static String get() {
        String v = ToolVersion.class.getPackage().getImplementationVersion();
        return "pathproof " + (v == null ? "dev" : v);
    }

    @Override
    public String[] getVersion() {
        return new String[] {get()};
    }
}
