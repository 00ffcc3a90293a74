package org.sandbox4j.core;

/**
 * A guest file-system error that is not an escape (the analogue of an OS error): for example a directory removed without {@code recursive}, or a removal the guest refused.
 */
public class SandboxFileException extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxFileException(String message) {
        super(message);
    }

    public SandboxFileException(String message, Throwable cause) {
        super(message, cause);
    }
}
