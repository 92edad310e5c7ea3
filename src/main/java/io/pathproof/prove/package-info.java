/**
 * The whole chain in one command: predict and seal, a baseline run, acceptance, a variant with one fault
 * kept out of every file diagnose reads, a blind diagnosis, the diagnosed fix applied and verified, explain and the
 * call graph, then the report and the reveal. The public entry is {@link io.pathproof.prove.Prove}; it also holds
 * {@code --backend auto}'s rule ({@link io.pathproof.prove.Prove#auto}), a pure function of what run's probe found.
 */
package io.pathproof.prove;
