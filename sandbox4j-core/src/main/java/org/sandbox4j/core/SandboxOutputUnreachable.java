package org.sandbox4j.core;

/**
 * A declared output could not be reached for a reason other than confinement.
 */
public class SandboxOutputUnreachable extends SandboxOutputException {

    private static final long serialVersionUID = 1L;

    public SandboxOutputUnreachable(String message) {
        super(message);
    }

    public SandboxOutputUnreachable(String message, Throwable cause) {
        super(message, cause);
    }
}
