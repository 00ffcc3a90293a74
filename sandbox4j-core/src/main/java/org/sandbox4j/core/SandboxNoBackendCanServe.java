package org.sandbox4j.core;

/**
 * Several backends are registered and none passes every check for the spec. Each backend's own refusal is attached as a suppressed exception, in registration order, and listed in the message.
 */
public class SandboxNoBackendCanServe extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxNoBackendCanServe(String message) {
        super(message);
    }

    public SandboxNoBackendCanServe(String message, Throwable cause) {
        super(message, cause);
    }
}
