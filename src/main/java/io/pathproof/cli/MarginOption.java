package io.pathproof.cli;

import io.pathproof.diagnose.Diagnosis;
import picocli.CommandLine.Option;

/**
 * {@code --margin}: the equivalence margin of the step-time rule, one option for diagnose, verify-fix and prove (a
 * picocli mixin, as jbang shares its flags). Each verb words it in its resource bundle (key {@code margin}), since each
 * applies the rule to other comparisons.
 */
public final class MarginOption {
    @Option(
            names = "--margin",
            defaultValue = "5",
            paramLabel = "PCT",
            descriptionKey = "margin",
            description =
                    "equivalence margin in %%: \"no change\" only when the interval lies inside +-PCT (default ${DEFAULT-VALUE})")
    double margin;

    /** The step-time rule with this margin. */
    Diagnosis.Rule rule() {
        return rule(margin);
    }

    /** The step-time rule with a margin of {@code percent} (refused outside the rule's range, exit 2). */
    static Diagnosis.Rule rule(double percent) {
        return Diagnosis.Rule.withMargin(percent / 100);
    }
}
