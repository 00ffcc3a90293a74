package org.sandbox4j.core;

/**
 * A guest path names a directory where a file is needed.
 */
public class SandboxIsADirectory extends SandboxFileException {

    private static final long serialVersionUID = 1L;

    public SandboxIsADirectory(String message) {
        super(message);
    }

    public SandboxIsADirectory(String message, Throwable cause) {
        super(message, cause);
    }
}
