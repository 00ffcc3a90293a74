package org.sandbox4j.core;

/**
 * A component of a guest path is a file (or other non-directory) where a directory is needed. Not an escape.
 */
public class SandboxNotADirectory extends SandboxFileException {

    private static final long serialVersionUID = 1L;

    public SandboxNotADirectory(String message) {
        super(message);
    }

    public SandboxNotADirectory(String message, Throwable cause) {
        super(message, cause);
    }
}
