package io.pathproof.predict;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.Scenario;

/** The public entry of the predict room: a scenario in, an (unsealed) prediction out. */
public final class Predictor {
  private Predictor() {}

  public static Prediction predict(Scenario scenario) {
    throw PathproofException.usage("predict: not built yet");
  }
}
