/**
 * The prove directory's format: what {@code prove} writes and {@code report} reads, owned by neither (prove makes
 * its report, so the report room cannot depend on prove's). {@link io.pathproof.proofdir.Proof} is {@code proof.json}
 * (schema {@value io.pathproof.proofdir.Proof#SCHEMA}) and {@link io.pathproof.proofdir.Explanation} is
 * {@code explain.json}; both are records written and read by the one codec ({@code core.StageFile}), so a renamed key
 * is a compile error on both sides. The other files of the directory are the rooms' own: the sealed prediction,
 * acceptance.json, diagnosis.json, verify-fix.json and the run directories.
 */
package io.pathproof.proofdir;
