/**
 * The report of a proof or of runs: a self-contained HTML page (uPlot inlined from its WebJar, no network),
 * Markdown, JSON and JUnit XML. Every string that came from evidence is escaped where it is written. The public entry
 * is {@link io.pathproof.report.Report}.
 */
package io.pathproof.report;
