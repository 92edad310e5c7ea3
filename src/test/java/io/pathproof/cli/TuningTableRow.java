package io.pathproof.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.accept.Acceptance;
import io.pathproof.accept.AcceptanceRow;
import io.pathproof.core.Json;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import io.pathproof.predict.Prediction;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * accept's tuning-table row for a prediction (as predict prints it in JSON) against the table a rank 0 log printed: the
 * agreement tests judge NCCL's printed table with the row a user gets, not with a comparison of their own.
 */
final class TuningTableRow {
    private static final Pattern COUNTS =
            Pattern.compile("(\\d+) of (\\d+) AllReduce cells and (\\d+) of (\\d+) Max NThreads agree");

    private TuningTableRow() {}

    static AcceptanceRow judge(JsonNode prediction, Path rank0Log) throws Exception {
        Prediction p = Json.mapper().treeToValue(prediction, Prediction.class);
        Evidence ev = Ingest.read(List.of(rank0Log));
        return Acceptance.accept(p, ev).row("tuning-table");
    }

    /** The counts the row names: cells equal, cells compared, Max NThreads equal, compared; zeros when none. */
    static int[] counts(AcceptanceRow row) {
        Matcher m = COUNTS.matcher(row.observed());
        if (!m.find()) {
            return new int[4];
        }
        return new int[] {
            Integer.parseInt(m.group(1)),
            Integer.parseInt(m.group(2)),
            Integer.parseInt(m.group(3)),
            Integer.parseInt(m.group(4))
        };
    }
}
