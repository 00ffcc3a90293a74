package org.sandbox4j.core;

/**
 * A required declared output does not exist in the sandbox.
 */
public class SandboxOutputMissing extends SandboxOutputException {

    private static final long serialVersionUID = 1L;

    public SandboxOutputMissing(String message) {
        super(message);
    }

    public SandboxOutputMissing(String message, Throwable cause) {
        super(message, cause);
    }
}
