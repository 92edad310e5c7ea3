package io.pathproof.ddp;

import io.pathproof.scenario.DType;
import java.util.List;

/**
 * One DDP gradient bucket as the Reducer holds it: its index ({@code GradBucket.index()}), the bytes of its flat
 * buffer, its parameters in buffer order, whether it is the last one ({@code is_last()}), its element type and the
 * size limit that closed it.
 */
public record Bucket(int index, long bytes, List<String> params, boolean isLast, DType dtype, long limitBytes) {
    public Bucket {
        params = List.copyOf(params);
    }
}
