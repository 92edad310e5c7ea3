package io.pathproof.cli;

import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Collectors;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code --format}: how a verb prints its result, one option for every verb that has one (a picocli mixin, as jbang
 * shares its {@code --format}). A verb builds it with the formats it prints, as {@link RunFlags} takes a verb's
 * defaults; any other name is refused while the command line is parsed, before the verb reads or runs anything, with
 * one message for every verb (exit 2). The help says "table, json or markdown"; a verb that prints no Markdown words it
 * in its resource bundle (key {@code format}: {@code table-or-json.properties}).
 */
public final class FormatOption {
    /** What a verb can print; {@link #id()} is the name on the command line. */
    public enum Format {
        TABLE,
        JSON,
        MARKDOWN;

        public String id() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    @Spec(Spec.Target.MIXEE)
    CommandSpec verb;

    private final Set<Format> printed;
    private Format format = Format.TABLE;

    /** Picocli's own instance (unused: each verb builds its own with the formats it prints). */
    FormatOption() {
        this(Format.values());
    }

    /** The option of a verb that prints {@code printed} (table, the default, among them). */
    FormatOption(Format... printed) {
        this.printed = EnumSet.copyOf(List.of(printed));
    }

    @Option(
            names = "--format",
            paramLabel = "FORMAT",
            defaultValue = "table",
            descriptionKey = "format",
            description = "table, json or markdown (default ${DEFAULT-VALUE})")
    void format(String name) {
        for (Format f : printed) {
            if (f.id().equals(name)) {
                format = f;
                return;
            }
        }
        throw new ParameterException(
                verb.commandLine(),
                "--format: '" + name + "' is not one of "
                        + printed.stream().map(Format::id).collect(Collectors.joining(", ")));
    }

    /** The format asked for. */
    Format get() {
        return format;
    }
}
