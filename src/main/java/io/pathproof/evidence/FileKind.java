package io.pathproof.evidence;

import com.fasterxml.jackson.annotation.JsonValue;

/**
 * The format a file was read as, sniffed from its name and first 64 KiB ({@link Evidence.FileRead#kind}); the label
 * is how the evidence's JSON and ingest's table name it.
 */
public enum FileKind {
    NCCL_LOG("nccl-log"),
    /** A text log with DDP's own debug lines and no NCCL line in its first 64 KiB (read by the NCCL log's reader). */
    DDP_LOG("ddp-log"),
    KINETO("kineto"),
    NSYS("nsys-sqlite"),
    NCU("ncu-csv"),
    FLIGHT_RECORDER("flight-recorder"),
    NCCL_PROFILER("nccl-profiler"),
    /** A JSON dump of DDP's {@code _get_ddp_logging_data()}. */
    DDP_LOGGING("ddp-logging");

    private final String label;

    FileKind(String label) {
        this.label = label;
    }

    @JsonValue
    public String label() {
        return label;
    }

    /** A trace of kernels on a timeline (Kineto, nsys), not counters of single kernels. */
    boolean timeline() {
        return this == KINETO || this == NSYS;
    }

    /** A file that records GPU kernels (a Kineto trace, an nsys export, an ncu CSV). */
    public boolean kernels() {
        return timeline() || this == NCU;
    }

    @Override
    public String toString() {
        return label;
    }
}
