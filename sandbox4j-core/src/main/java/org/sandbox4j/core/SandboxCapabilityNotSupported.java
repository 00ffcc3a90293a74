package org.sandbox4j.core;

/**
 * The backend does not declare a capability the spec requires. The fix: a backend that implements it, or ask for less.
 */
public class SandboxCapabilityNotSupported extends SandboxUnsupportedRefusal {

    private static final long serialVersionUID = 1L;

    public SandboxCapabilityNotSupported(String message) {
        super(message);
    }

    public SandboxCapabilityNotSupported(String message, Throwable cause) {
        super(message, cause);
    }
}
