package org.sandbox4j.core;

/**
 * A tool was called outside any conversation thread. Refused rather than falling back to a key shared by every caller.
 */
public class SandboxThreadContextMissing extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxThreadContextMissing(String message) {
        super(message);
    }

    public SandboxThreadContextMissing(String message, Throwable cause) {
        super(message, cause);
    }
}
