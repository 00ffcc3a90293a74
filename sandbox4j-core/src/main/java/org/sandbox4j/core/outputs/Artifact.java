package org.sandbox4j.core.outputs;

import java.util.Arrays;
import java.util.Objects;
import java.util.Optional;

/**
 * One collected output on its way to an {@link OutputSink}.
 *
 * @param name      the delivered spelling, already normalised for the sink; valid by
 *                  {@link ArtifactNames#validate}
 * @param content   the bytes read from the sandbox, verbatim
 * @param kind      the kind of the spec that produced it
 * @param mediaType as declared, never sniffed
 */
public record Artifact(String name, byte[] content, String kind, Optional<String> mediaType) {

    /** @throws org.sandbox4j.core.SandboxArtifactNameInvalid when {@code name} breaks a naming rule */
    public Artifact {
        Objects.requireNonNull(name, "name");
        ArtifactNames.validate(name);
        content = Objects.requireNonNull(content, "content").clone();
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(mediaType, "mediaType");
    }

    @Override
    public byte[] content() {
        return content.clone();
    }

    /** The content's length, without copying it. */
    public int size() {
        return content.length;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Artifact that
                && name.equals(that.name)
                && Arrays.equals(content, that.content)
                && kind.equals(that.kind)
                && mediaType.equals(that.mediaType);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, Arrays.hashCode(content), kind, mediaType);
    }

    @Override
    public String toString() {
        return "Artifact[name=" + name + ", " + content.length + " bytes, kind=" + kind
                + mediaType.map(type -> ", mediaType=" + type).orElse("") + "]";
    }
}
