package org.sandbox4j.core;

/**
 * A time bound expired. From {@code exec}: the caller's own bound, never a backend's shorter
 * internal ceiling, and the whole process tree of the command has been killed. From a file method
 * (which takes no bound of the caller's): the backend's own deadline on one host or provider call,
 * which a guest's FIFO or a stuck provider would otherwise hold open for good.
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
