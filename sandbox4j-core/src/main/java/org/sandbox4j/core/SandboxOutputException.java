package org.sandbox4j.core;

/**
 * The family of refusals raised while collecting declared outputs. Its messages are safe to show a model: they never name a host path.
 */
public abstract class SandboxOutputException extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxOutputException(String message) {
        super(message);
    }

    public SandboxOutputException(String message, Throwable cause) {
        super(message, cause);
    }
}
