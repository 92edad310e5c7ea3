/** Numeric answers to the method's 16 questions for a scenario (and a run, when given). */
package io.pathproof.explain;
