package org.sandbox4j.core;

import java.util.Objects;

/**
 * A backend's ceilings for both directions of file transfer.
 *
 * @param filesIn  the ceiling for files written into the sandbox
 * @param filesOut the ceiling for files read out of it
 */
public record SandboxLimits(TransferLimits filesIn, TransferLimits filesOut) {

    /** The default ceilings in both directions; equal to the spec defaults, so the defaults always fit. */
    public static final SandboxLimits DEFAULT = new SandboxLimits(TransferLimits.DEFAULT, TransferLimits.DEFAULT);

    public SandboxLimits {
        Objects.requireNonNull(filesIn, "filesIn");
        Objects.requireNonNull(filesOut, "filesOut");
    }
}
