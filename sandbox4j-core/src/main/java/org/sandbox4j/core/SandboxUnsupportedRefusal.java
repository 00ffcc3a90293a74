package org.sandbox4j.core;

/**
 * A functionality refusal: the backend cannot do what the spec asks for.
 */
public abstract class SandboxUnsupportedRefusal extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxUnsupportedRefusal(String message) {
        super(message);
    }

    public SandboxUnsupportedRefusal(String message, Throwable cause) {
        super(message, cause);
    }
}
