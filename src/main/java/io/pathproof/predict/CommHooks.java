package io.pathproof.predict;

import io.pathproof.scenario.DType;

/**
 * What a DDP communication hook the job registered does to each bucket's collective, for the hooks whose effect is
 * known from their source: {@code default_hooks.fp16_compress_hook} / {@code bf16_compress_hook} cast the bucket to
 * 16 bits, all-reduce that, and cast back (torch/distributed/algorithms/ddp_comm_hooks/default_hooks.py@v2.11.0,
 * {@code _compress_hook}; the same in v1.13.1); {@code allreduce_hook} and DDP's builtin ALLREDUCE are DDP's own
 * allreduce. Any other hook (PowerSGD, a job's own) decides its collectives itself: the bucket model still holds,
 * but no collective is predicted for it, and the prediction says so.
 */
final class CommHooks {
    private CommHooks() {}

    /** A hook's effect: whether the bucket AllReduce is predictable, the dtype on the wire, and a note for the reader. */
    record Effect(boolean predictable, DType wire, String note) {
        DType wireDtype(DType bucket) {
            boolean floating = bucket == DType.FLOAT32
                    || bucket == DType.FLOAT64
                    || bucket == DType.FLOAT16
                    || bucket == DType.BFLOAT16;
            return wire == null || !floating ? bucket : wire;
        }
    }

    static Effect of(String hook) {
        if (hook == null) {
            return new Effect(true, null, null);
        }
        String h = hook.toLowerCase(java.util.Locale.ROOT);
        if (h.equals("allreduce_hook") || h.equals("builtin allreduce")) {
            return new Effect(true, null, "comm hook " + hook + ": DDP's own allreduce of each bucket");
        }
        if (h.equals("fp16_compress_hook") || h.equals("builtin fp16_compress")) {
            return new Effect(
                    true,
                    DType.FLOAT16,
                    "comm hook " + hook + ": each bucket is cast to float16 and all-reduced as"
                            + " such (default_hooks.py _compress_hook), so NCCL moves half the bytes of a float32 bucket");
        }
        if (h.equals("bf16_compress_hook")) {
            return new Effect(
                    true,
                    DType.BFLOAT16,
                    "comm hook " + hook + ": each bucket is cast to bfloat16 and all-reduced as"
                            + " such (default_hooks.py _compress_hook)");
        }
        return new Effect(
                false,
                null,
                "comm hook " + hook + ": it decides each bucket's collectives itself; the buckets are"
                        + " predicted, their collectives cannot be");
    }
}
