/**
 * Blind regression diagnosis between two runs and fix verification. Public entry:
 * {@link io.pathproof.diagnose.Diagnosis#diagnose} and {@link io.pathproof.diagnose.Diagnosis#verifyFix}.
 *
 * <p>Reads only {@link io.pathproof.evidence.Evidence} (its published contract): NCCL log facts
 * (INIT channel counts, TUNING in the 2.22 {@code time %f} and 2.24+ {@code channel{Lo..Hi}} formats, connector
 * lines, env echoes), kernel traces (gridX, blockX, durations), hook records and step times, replica digests, DDP
 * logging data (torch 1.13 – 2.11 key names, logger.cpp) and the run manifest's {@code env}, {@code versions},
 * {@code topology}, {@code workload}. The manifest's {@code inject} key (the harness's fault knobs) is never read.
 * Step-time statistics: median ratio with a seeded percentile bootstrap and three verdicts (regression or improvement,
 * no change within the equivalence margin, inconclusive; {@link io.pathproof.diagnose.Diagnosis.Rule}); with several
 * runs per side the run is the unit, the i-th runs of the two sides a time-adjacent pair and the interval Student's t over
 * the pairs, so the machine's drift between runs is measured rather than taken for a change; power measured in
 * {@code DiagnosePowerBench} (docs/PERFORMANCE.md).
 */
package io.pathproof.diagnose;
