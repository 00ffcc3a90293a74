package org.sandbox4j.core;

/**
 * No backend is configured, or the one the host named is not registered. The fix: register a backend, or name one that is.
 */
public class NoSandboxBackend extends SandboxException {

    private static final long serialVersionUID = 1L;

    public NoSandboxBackend(String message) {
        super(message);
    }

    public NoSandboxBackend(String message, Throwable cause) {
        super(message, cause);
    }
}
