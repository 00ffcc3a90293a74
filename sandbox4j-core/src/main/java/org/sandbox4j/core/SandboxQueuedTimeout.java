package org.sandbox4j.core;

/**
 * The deadline of {@code runCode} expired while the program was still queued: it never ran.
 */
public class SandboxQueuedTimeout extends SandboxTimeoutException {

    private static final long serialVersionUID = 1L;

    public SandboxQueuedTimeout(String message) {
        super(message);
    }

    public SandboxQueuedTimeout(String message, Throwable cause) {
        super(message, cause);
    }
}
