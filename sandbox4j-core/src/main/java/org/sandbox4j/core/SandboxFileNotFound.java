package org.sandbox4j.core;

/**
 * Nothing exists at the guest path.
 */
public class SandboxFileNotFound extends SandboxFileException {

    private static final long serialVersionUID = 1L;

    public SandboxFileNotFound(String message) {
        super(message);
    }

    public SandboxFileNotFound(String message, Throwable cause) {
        super(message, cause);
    }
}
