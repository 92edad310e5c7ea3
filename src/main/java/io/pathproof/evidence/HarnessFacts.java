package io.pathproof.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/** What the run harness's own files in a run directory say, before they join the rest of the evidence. */
public record HarnessFacts(
        Evidence.Ddp ddp,
        List<Evidence.Step> steps,
        Evidence.Replicas replicas,
        List<Evidence.PeerAccess> peerAccess,
        JsonNode manifest,
        List<Problem> problems) {}
