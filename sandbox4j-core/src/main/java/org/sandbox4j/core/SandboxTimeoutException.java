package org.sandbox4j.core;

/**
 * The caller's own time bound expired. Never thrown for a backend's shorter internal ceiling. When thrown from {@code exec}, the whole process tree of the command has been killed.
 */
public class SandboxTimeoutException extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxTimeoutException(String message) {
        super(message);
    }

    public SandboxTimeoutException(String message, Throwable cause) {
        super(message, cause);
    }
}
