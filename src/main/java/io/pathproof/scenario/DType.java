package io.pathproof.scenario;

import io.pathproof.core.PathproofException;
import java.util.Locale;

/**
 * Tensor element types a DDP bucket can hold. Names follow torch ({@code float32}); aliases are accepted as torch
 * prints them ({@code torch.float32}, {@code float}, {@code Float}). The NCCL datatype id is ncclDataType_t
 * (nccl.h: ncclInt8=0 … ncclFloat32=7, ncclFloat64=8, ncclBfloat16=9).
 */
public enum DType {
    FLOAT32("float32", 4, 7, "f32"),
    FLOAT16("float16", 2, 6, "f16"),
    BFLOAT16("bfloat16", 2, 9, "bf16"),
    FLOAT64("float64", 8, 8, "f64"),
    INT32("int32", 4, 2, "i32"),
    INT64("int64", 8, 4, "i64"),
    INT8("int8", 1, 0, "i8"),
    UINT8("uint8", 1, 1, "u8");

    private final String torchName;
    private final int elementSize;
    private final int ncclId;
    private final String kernelSuffix;

    DType(String torchName, int elementSize, int ncclId, String kernelSuffix) {
        this.torchName = torchName;
        this.elementSize = elementSize;
        this.ncclId = ncclId;
        this.kernelSuffix = kernelSuffix;
    }

    public String torchName() {
        return torchName;
    }

    public int elementSize() {
        return elementSize;
    }

    public int ncclId() {
        return ncclId;
    }

    /** The type part of an NCCL kernel symbol, e.g. {@code f32} in ncclDevKernel_AllReduce_Sum_f32_RING_LL. */
    public String kernelSuffix() {
        return kernelSuffix;
    }

    /** Parses the names torch and its tools print; throws a bad-input error naming the value otherwise. */
    public static DType parse(String s) {
        if (s == null) {
            throw PathproofException.badInput("dtype: missing");
        }
        String k = s.trim().toLowerCase(Locale.ROOT);
        if (k.startsWith("torch.")) {
            k = k.substring(6);
        }
        switch (k) {
            case "float32":
            case "float":
            case "f32":
            case "fp32":
                return FLOAT32;
            case "float16":
            case "half":
            case "f16":
            case "fp16":
                return FLOAT16;
            case "bfloat16":
            case "bf16":
                return BFLOAT16;
            case "float64":
            case "double":
            case "f64":
            case "fp64":
                return FLOAT64;
            case "int32":
            case "int":
            case "i32":
                return INT32;
            case "int64":
            case "long":
            case "i64":
                return INT64;
            case "int8":
            case "i8":
                return INT8;
            case "uint8":
            case "u8":
            case "byte":
                return UINT8;
            default:
                throw PathproofException.badInput("dtype: unknown element type '" + s + "'");
        }
    }
}
