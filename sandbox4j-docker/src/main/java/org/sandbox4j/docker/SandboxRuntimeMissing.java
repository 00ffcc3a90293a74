package org.sandbox4j.docker;

import org.sandbox4j.core.SandboxException;

/** Thrown when the OCI runtime the backend is configured with is not registered with the engine; the message names the fix. */
public class SandboxRuntimeMissing extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxRuntimeMissing(String message) {
        super(message);
    }

    public SandboxRuntimeMissing(String message, Throwable cause) {
        super(message, cause);
    }
}
