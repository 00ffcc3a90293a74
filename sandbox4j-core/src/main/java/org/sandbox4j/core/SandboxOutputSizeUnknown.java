package org.sandbox4j.core;

/**
 * The sandbox could not tell a declared output's size. Fails closed: an unknown size is never taken as zero.
 */
public class SandboxOutputSizeUnknown extends SandboxOutputException {

    private static final long serialVersionUID = 1L;

    public SandboxOutputSizeUnknown(String message) {
        super(message);
    }

    public SandboxOutputSizeUnknown(String message, Throwable cause) {
        super(message, cause);
    }
}
