package org.sandbox4j.core;

/**
 * The backend cannot run the image the spec (or its own configuration) names: it is not there
 * and may not be pulled, or this backend runs no images of that kind (a local backend runs the
 * host's own {@code /usr} or a root file system the host named). The message names the fix.
 */
public class SandboxImageNotUsable extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxImageNotUsable(String message) {
        super(message);
    }

    public SandboxImageNotUsable(String message, Throwable cause) {
        super(message, cause);
    }
}
