package org.sandbox4j.core;

/**
 * The spec lands artifacts but no sink was given to land them in.
 */
public class SandboxOutputSinkRequired extends SandboxOutputException {

    private static final long serialVersionUID = 1L;

    public SandboxOutputSinkRequired(String message) {
        super(message);
    }

    public SandboxOutputSinkRequired(String message, Throwable cause) {
        super(message, cause);
    }
}
