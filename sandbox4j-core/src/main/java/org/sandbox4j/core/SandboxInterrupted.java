package org.sandbox4j.core;

/**
 * The calling thread was interrupted while waiting on the sandbox. The interrupt flag is restored before this is thrown. The analogue of cancellation: cleanup code propagates it rather than turning it into a reason.
 */
public class SandboxInterrupted extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxInterrupted(String message) {
        super(message);
    }

    public SandboxInterrupted(String message, Throwable cause) {
        super(message, cause);
    }
}
