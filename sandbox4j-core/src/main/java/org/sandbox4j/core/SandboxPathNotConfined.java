package org.sandbox4j.core;

/**
 * A guest path was refused by confinement: it resolves outside the working directory, passes through or ends in a link, contains a backslash, or names the working directory itself where that is not allowed. An escape attempt, never an ordinary file-system error.
 */
public class SandboxPathNotConfined extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxPathNotConfined(String message) {
        super(message);
    }

    public SandboxPathNotConfined(String message, Throwable cause) {
        super(message, cause);
    }
}
