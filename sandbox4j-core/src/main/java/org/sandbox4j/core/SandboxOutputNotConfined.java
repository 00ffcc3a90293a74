package org.sandbox4j.core;

/**
 * A declared output's path escapes the working directory or passes through a link.
 */
public class SandboxOutputNotConfined extends SandboxOutputException {

    private static final long serialVersionUID = 1L;

    public SandboxOutputNotConfined(String message) {
        super(message);
    }

    public SandboxOutputNotConfined(String message, Throwable cause) {
        super(message, cause);
    }
}
