package io.pathproof.evidence;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/** Test helpers: run one reader on bytes, or Ingest on test resources. */
final class Read {
    static final Path RES = Path.of("src/test/resources/io/pathproof/evidence");

    private Read() {}

    static FileFacts facts(FileKind kind, String name, byte[] content) {
        Reading in = new Reading(name, kind, Ingest.rankFromName(Path.of(name)));
        try {
            return Ingest.readStream(new ByteArrayInputStream(content), in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Evidence evidence(FileKind kind, String name, String content) {
        return evidence(kind, name, content.getBytes(StandardCharsets.UTF_8));
    }

    static Evidence evidence(FileKind kind, String name, byte[] content) {
        return Assembly.evidence(null, List.of(facts(kind, name, content)), List.of(), List.of());
    }

    static Evidence log(String content) {
        return evidence(FileKind.NCCL_LOG, "nccl.log", content);
    }

    static Evidence files(FileFacts... ff) {
        return Assembly.evidence(null, List.of(ff), List.of(), List.of());
    }

    static Path res(String rel) {
        return RES.resolve(rel);
    }
}
