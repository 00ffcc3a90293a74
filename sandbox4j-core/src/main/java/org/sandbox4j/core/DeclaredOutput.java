package org.sandbox4j.core;

import java.util.Objects;
import java.util.Optional;

/**
 * A file a workload promises to leave in its working directory, to be collected after it runs.
 *
 * @param path        a literal POSIX path relative to the spec's work dir (no globs)
 * @param disposition whether it lands in the host's sink or is consumed by the kind
 * @param mediaType   declared, never sniffed
 * @param required    false when its absence is normal
 * @param name        the name it lands under; the path when empty
 */
public record DeclaredOutput(
        String path, OutputDisposition disposition, Optional<String> mediaType, boolean required, Optional<String> name) {

    public DeclaredOutput {
        Objects.requireNonNull(path, "path");
        Objects.requireNonNull(disposition, "disposition");
        Objects.requireNonNull(mediaType, "mediaType");
        Objects.requireNonNull(name, "name");
    }

    /** A required output at {@code path}, landing under its own path as name. */
    public static DeclaredOutput land(String path) {
        return new DeclaredOutput(path, OutputDisposition.LAND, Optional.empty(), true, Optional.empty());
    }

    /** A required output at {@code path} that the kind reads itself and never delivers. */
    public static DeclaredOutput consume(String path) {
        return new DeclaredOutput(path, OutputDisposition.CONSUME, Optional.empty(), true, Optional.empty());
    }

    public DeclaredOutput withMediaType(String type) {
        return new DeclaredOutput(path, disposition, Optional.of(type), required, name);
    }

    /** The same output, whose absence is normal. */
    public DeclaredOutput optional() {
        return new DeclaredOutput(path, disposition, mediaType, false, name);
    }

    /** The same output, landing under {@code landingName}. */
    public DeclaredOutput named(String landingName) {
        return new DeclaredOutput(path, disposition, mediaType, required, Optional.of(landingName));
    }

    /** The name it is delivered under before any sink normalisation: {@code name}, else {@code path}. */
    public String landingName() {
        return name.orElse(path);
    }
}
