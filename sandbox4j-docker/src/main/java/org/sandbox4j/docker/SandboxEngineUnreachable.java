package org.sandbox4j.docker;

import org.sandbox4j.core.SandboxException;

/** Thrown when the container engine does not answer at its endpoint; the message names the fix. */
public class SandboxEngineUnreachable extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxEngineUnreachable(String message) {
        super(message);
    }

    public SandboxEngineUnreachable(String message, Throwable cause) {
        super(message, cause);
    }
}
