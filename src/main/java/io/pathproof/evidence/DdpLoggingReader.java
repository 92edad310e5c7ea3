package io.pathproof.evidence;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import io.pathproof.core.Messages;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;

/**
 * Reads a plain dump of DDP's own record, {@code ddp._get_ddp_logging_data()} saved as JSON by the user's script under
 * any file name (the harness's {@code ddp-logging-rank{r}.json} is the same object under a name of its own). Such a
 * file is recognised by its keys, never by its name: torch sets {@code world_size}, {@code rank}, {@code iteration},
 * {@code bucket_sizes} and {@code backend_name} at DDP's construction ({@code set_construction_data_and_log},
 * logger.cpp:173-200@v1.13.1), so every dump has them. Its rank is the data's own {@code rank} field, the
 * rank of the process group that DDP ran in; a rank in the file's name that says otherwise is a problem (a copy of
 * another rank's file), and the data's rank is kept.
 */
final class DdpLoggingReader implements FormatReader {
    /** Keys every dump has (see the class comment); {@code rank} or {@code iteration} with them. */
    private static final List<String> KEYS = List.of("\"bucket_sizes\"", "\"world_size\"", "\"backend_name\"");

    /** True when the first bytes of a JSON object hold the keys of {@code _get_ddp_logging_data()}. */
    static boolean looksLikeDump(String head) {
        for (String k : KEYS) {
            if (!head.contains(k)) {
                return false;
            }
        }
        return head.contains("\"rank\"") || head.contains("\"iteration\"");
    }

    private final Reading ff;
    private Facts.DdpLogging read = new Facts.DdpLogging(null);

    DdpLoggingReader(Reading ff) {
        this.ff = ff;
    }

    @Override
    public void read(InputStream in) throws IOException {
        read = dump(in);
    }

    @Override
    public Facts.DdpLogging facts() {
        return read;
    }

    /** Reads one dump; its facts are the dump's data, or none when the file is not one. */
    private Facts.DdpLogging dump(InputStream in) throws IOException {
        JsonNode n;
        try {
            n = Json.mapper().readTree(in);
        } catch (JsonProcessingException e) {
            ff.problem(e.getLocation() == null ? 0 : e.getLocation().getLineNr(), "not JSON: " + Messages.json(e));
            return new Facts.DdpLogging(null);
        }
        if (n == null || n.isMissingNode() || !n.isObject()) {
            ff.problem(0, "not a JSON object: not a dump of _get_ddp_logging_data()");
            return new Facts.DdpLogging(null);
        }
        JsonNode rank = n.get("rank");
        if (rank == null || !rank.isIntegralNumber() || !rank.canConvertToInt() || rank.asInt() < 0) {
            ff.problem(0, "field rank: missing or not a rank; a DDP logging dump names the rank it was taken on");
            return new Facts.DdpLogging(null);
        }
        Integer named = ff.rank;
        if (named != null && named != rank.asInt()) {
            ff.problem(
                    0,
                    "rank: " + rank.asInt() + " in a file named for rank " + named + " (kept as rank " + rank.asInt()
                            + ")");
        }
        ff.rank = rank.asInt();
        ff.facts += n.size();
        return new Facts.DdpLogging(n);
    }
}
