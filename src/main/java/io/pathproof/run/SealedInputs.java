package io.pathproof.run;

import java.nio.file.Path;
import java.util.List;

/**
 * What a run is held against, both kept sealed: the sealed {@code prediction} it is made for (null: none given; its
 * seal's hash goes into the manifest) and the faults it gets ({@code inject}, K=V), which go to fault.sealed.json
 * and never into the manifest, so that a diagnosis stays blind.
 */
public record SealedInputs(Path prediction, List<String> inject) {
    public SealedInputs {
        inject = inject == null ? List.of() : List.copyOf(inject);
    }
}
