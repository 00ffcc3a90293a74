package org.sandbox4j.core;

/**
 * A declared output is not a regular file (a directory, link, device...).
 */
public class SandboxOutputNotRegular extends SandboxOutputException {

    private static final long serialVersionUID = 1L;

    public SandboxOutputNotRegular(String message) {
        super(message);
    }

    public SandboxOutputNotRegular(String message, Throwable cause) {
        super(message, cause);
    }
}
