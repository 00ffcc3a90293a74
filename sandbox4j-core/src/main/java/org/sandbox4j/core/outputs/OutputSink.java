package org.sandbox4j.core.outputs;

import org.sandbox4j.core.NameNormalization;

/**
 * Where landing outputs go on the host. {@link Outputs#collect} hands each artifact to
 * {@link #deliver} after every library check has passed, in declaration order.
 *
 * <p>A sink refuses by throwing (preferably a {@link org.sandbox4j.core.SandboxOutputException}
 * whose message names no host path, because the family may be shown to a model). A sink carries
 * no confidentiality cap: that is the host's policy, declared on the tool, not here.
 */
@FunctionalInterface
public interface OutputSink {

    /**
     * Lands one artifact.
     *
     * @return what the model may see ({@link LandedArtifact#display}) and the host's own handle
     */
    LandedArtifact deliver(Artifact artifact);

    /**
     * How this sink spells names; names are validated and compared in the delivered spelling.
     * {@link NameNormalization#NFC} unless overridden.
     */
    default NameNormalization normalization() {
        return NameNormalization.NFC;
    }
}
