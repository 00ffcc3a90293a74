package org.sandbox4j.docker;

import org.sandbox4j.core.SandboxException;

/** Thrown when the image a sandbox needs is not in the engine, and the pull policy forbids pulling it; the message names the fix. */
public class SandboxImageMissing extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxImageMissing(String message) {
        super(message);
    }

    public SandboxImageMissing(String message, Throwable cause) {
        super(message, cause);
    }
}
