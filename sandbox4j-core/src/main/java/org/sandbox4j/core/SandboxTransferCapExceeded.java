package org.sandbox4j.core;

/**
 * A transfer would exceed a cap (bytes per file, total bytes, or file count). Refused whole, never truncated.
 */
public class SandboxTransferCapExceeded extends SandboxOutputException {

    private static final long serialVersionUID = 1L;

    public SandboxTransferCapExceeded(String message) {
        super(message);
    }

    public SandboxTransferCapExceeded(String message, Throwable cause) {
        super(message, cause);
    }
}
