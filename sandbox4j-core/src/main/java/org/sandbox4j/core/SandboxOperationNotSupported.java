package org.sandbox4j.core;

/**
 * The sandbox does not implement the method: the backend does not declare its capability.
 */
public class SandboxOperationNotSupported extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxOperationNotSupported(String message) {
        super(message);
    }

    public SandboxOperationNotSupported(String message, Throwable cause) {
        super(message, cause);
    }
}
