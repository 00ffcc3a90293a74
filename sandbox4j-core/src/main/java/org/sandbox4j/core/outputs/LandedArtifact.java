package org.sandbox4j.core.outputs;

import java.util.Objects;
import java.util.Optional;

/**
 * Where an artifact landed, as a sink reports it. Only {@link #display} is ever shown to a model.
 * The {@link #handle} is for the host alone (a host path, an object key, a signed URL carrying a
 * bearer token): it is never rendered, and {@link #toString()} leaves it out so that logging or
 * formatting a landed artifact cannot leak it into a transcript.
 *
 * @param name    the name the artifact landed under
 * @param display the only model-visible text
 * @param handle  host-internal reference; never rendered
 */
public record LandedArtifact(String name, String display, Optional<String> handle) {

    public LandedArtifact {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(display, "display");
        Objects.requireNonNull(handle, "handle");
    }

    /** A landed artifact with no host handle. */
    public static LandedArtifact of(String name, String display) {
        return new LandedArtifact(name, display, Optional.empty());
    }

    /** Leaves the handle out: it must never reach a model. */
    @Override
    public String toString() {
        return "LandedArtifact[name=" + name + ", display=" + display + "]";
    }
}
