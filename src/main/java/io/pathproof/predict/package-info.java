/**
 * Predictions made before a run: {@link io.pathproof.predict.Predictor} joins the DDP bucket plan with NCCL's decision
 * per bucket; {@link io.pathproof.predict.PredictionIo} seals them (SHA-256 over the canonical JSON, the creation
 * time and the tool version) and checks seals. Format: {@code pathproof.prediction/1}; its JSON names
 * (buckets.construction/rebuilt, collectives[], communicator, seal) are published: scripts and sealed files rely on them.
 */
package io.pathproof.predict;
