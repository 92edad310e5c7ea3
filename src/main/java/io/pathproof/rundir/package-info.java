/**
 * The run directory's format: what {@code run} writes and {@code evidence} reads, owned by neither. {@code manifest.json}
 * (schema {@value io.pathproof.rundir.RunManifest#SCHEMA}) is one flat JSON object written in turns by two writers
 * that never overlap in time, and each turn is a record here: {@link io.pathproof.rundir.LaunchRequest} and
 * {@link io.pathproof.rundir.LaunchStart} (the launcher, before the ranks start), {@link io.pathproof.rundir.JobFacts}
 * (rank 0 of the job: pathproof's harness or the instrumentation of a user's own job, both Python) and
 * {@link io.pathproof.rundir.RunOutcome} (the launcher, after every rank ended). A key belongs to one record, so a
 * renamed key is a compile error on the Java side; {@code JobFactsKeysTest} holds the Python writers to the same
 * names. Every file of the directory is described in docs/run-directory.md.
 */
package io.pathproof.rundir;
