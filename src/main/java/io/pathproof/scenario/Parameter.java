package io.pathproof.scenario;

import io.pathproof.core.PathproofException;
import java.util.List;

/** One model parameter as DDP sees it: name, shape, element type, and whether it takes a gradient. */
public record Parameter(String name, List<Long> shape, DType dtype, boolean requiresGrad) {
    public Parameter {
        if (name == null || name.isBlank()) {
            throw PathproofException.badInput("parameters[].name: missing");
        }
        if (shape == null) {
            throw PathproofException.badInput("parameters[" + name + "].shape: missing");
        }
        shape = List.copyOf(shape);
        for (Long d : shape) {
            if (d == null || d < 0) {
                throw PathproofException.badInput("parameters[" + name + "].shape: negative or missing dimension");
            }
        }
        if (dtype == null) {
            throw PathproofException.badInput("parameters[" + name + "].dtype: missing");
        }
    }

    public long numel() {
        long n = 1;
        for (long d : shape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    public long bytes() {
        return Math.multiplyExact(numel(), dtype.elementSize());
    }
}
