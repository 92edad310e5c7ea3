/**
 * The command line: one picocli class per verb, shared flags as mixins ({@link io.pathproof.cli.ScenarioOptions},
 * {@link io.pathproof.cli.RunFlags}),
 * exit codes from {@link io.pathproof.core.ExitCode}. No domain logic: each verb turns its flags into values and calls
 * one public entry of a room. Only this package prints.
 */
package io.pathproof.cli;
