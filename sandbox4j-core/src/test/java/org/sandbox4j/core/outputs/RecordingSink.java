package org.sandbox4j.core.outputs;

import java.util.ArrayList;
import java.util.List;

import org.sandbox4j.core.NameNormalization;

/** Keeps every artifact it is handed; optionally refuses the n-th delivery. */
final class RecordingSink implements OutputSink {

    private final NameNormalization normalization;
    private final List<Artifact> delivered = new ArrayList<>();
    private int refuseDeliveryNumber = -1;

    RecordingSink() {
        this(NameNormalization.NFC);
    }

    RecordingSink(NameNormalization normalization) {
        this.normalization = normalization;
    }

    RecordingSink refusingDelivery(int number) {
        this.refuseDeliveryNumber = number;
        return this;
    }

    List<Artifact> delivered() {
        return List.copyOf(delivered);
    }

    List<String> names() {
        return delivered.stream().map(Artifact::name).toList();
    }

    @Override
    public LandedArtifact deliver(Artifact artifact) {
        if (delivered.size() + 1 == refuseDeliveryNumber) {
            throw new IllegalStateException("the sink refused delivery " + refuseDeliveryNumber);
        }
        delivered.add(artifact);
        return LandedArtifact.of(artifact.name(), "landed " + artifact.name());
    }

    @Override
    public NameNormalization normalization() {
        return normalization;
    }
}
