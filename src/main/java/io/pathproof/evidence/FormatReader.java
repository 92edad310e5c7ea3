package io.pathproof.evidence;

import java.io.IOException;
import java.io.InputStream;

/**
 * The reader of one stream-readable format for one file: it reads the stream, keeping its bookkeeping in the file's
 * {@link Reading}, and hands over what it read as its format's {@link Facts}, also when reading stopped part way.
 */
interface FormatReader {
    void read(InputStream in) throws IOException;

    Facts facts();
}
