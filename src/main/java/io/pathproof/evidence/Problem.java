package io.pathproof.evidence;

/** Input that could not be turned into a fact: the file, the 1-based line (0 when the file as a whole), and why. */
public record Problem(String file, long line, String message) {}
