package org.sandbox4j.core;

/**
 * An artifact could not be landed for a reason other than confinement: a file or directory of
 * another kind is in the way, or the host's file system refused the write. The message names only
 * the artifact, never a host path; the host-side reason is the cause, for the log.
 */
public class SandboxLandingFailed extends SandboxOutputException {

    private static final long serialVersionUID = 1L;

    public SandboxLandingFailed(String message) {
        super(message);
    }

    public SandboxLandingFailed(String message, Throwable cause) {
        super(message, cause);
    }
}
