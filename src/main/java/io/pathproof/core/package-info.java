/**
 * What every room shares: the exit codes, the error that carries one, the canonical JSON configuration, the one codec
 * of stage files ({@link io.pathproof.core.StageFile}), and the words a library's failure is told to a user in
 * ({@link io.pathproof.core.Messages}).
 */
package io.pathproof.core;
