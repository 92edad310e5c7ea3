package io.pathproof.scenario;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A gradient-ready order given to {@code predict --ready-order}: indices into the trainable parameters, first ready
 * first, as torch's DDP logs them ({@code prev_iteration_grad_ready_order_indices}). Read from a list on the command
 * line ({@code 3,2,1,0}), or from a file: a JSON list, pathproof's {@code ready-order.json} ({@code {"order": […]}})
 * or a DDP logging dump ({@code ddp._get_ddp_logging_data()} saved as JSON, whose field is the string
 * {@code "3, 2, 1, 0"}).
 */
public final class ReadyOrder {
    private static final String LOGGING_FIELD = "prev_iteration_grad_ready_order_indices";

    private ReadyOrder() {}

    public static List<Integer> parse(String arg) {
        if (arg == null || arg.isBlank()) {
            throw PathproofException.usage("--ready-order: empty");
        }
        if (arg.strip().matches("[0-9][0-9,\\s]*")) {
            return list(arg, "--ready-order");
        }
        Path f = Path.of(arg);
        JsonNode n;
        try {
            n = Json.mapper().readTree(Files.readString(f));
        } catch (NoSuchFileException e) {
            throw PathproofException.badInput("--ready-order: no such file: " + f);
        } catch (IOException e) {
            throw PathproofException.badInput("--ready-order " + f + ": not JSON (" + firstLine(e.getMessage()) + ")");
        }
        if (n != null && n.isObject() && n.has("order")) {
            n = n.get("order");
        } else if (n != null && n.isObject() && n.hasNonNull(LOGGING_FIELD)) {
            return list(n.get(LOGGING_FIELD).asText(), f + " " + LOGGING_FIELD);
        }
        if (n == null || !n.isArray()) {
            throw PathproofException.badInput(
                    "--ready-order " + f + ": expected a JSON list of parameter indices, {\"order\": […]}"
                            + " or a DDP logging dump with " + LOGGING_FIELD);
        }
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < n.size(); i++) {
            if (!n.get(i).isIntegralNumber() || !n.get(i).canConvertToInt()) {
                throw PathproofException.badInput(
                        "--ready-order " + f + ": [" + i + "] is not a parameter index: " + n.get(i));
            }
            out.add(n.get(i).asInt());
        }
        return out;
    }

    private static List<Integer> list(String text, String where) {
        List<Integer> out = new ArrayList<>();
        for (String part : text.split("[,\\s]+")) {
            if (part.isEmpty()) {
                continue;
            }
            try {
                out.add(Integer.parseInt(part));
            } catch (NumberFormatException e) {
                throw PathproofException.badInput(where + ": '" + part + "' is not a parameter index");
            }
        }
        if (out.isEmpty()) {
            throw PathproofException.badInput(where + ": no parameter index");
        }
        return out;
    }

    private static String firstLine(String s) {
        return s == null ? "" : s.lines().findFirst().orElse("");
    }
}
