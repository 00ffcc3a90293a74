package org.sandbox4j.core;

/**
 * The backend does not serve the guest OS family the spec requires. The fix: a backend that serves that family.
 */
public class SandboxOsFamilyNotSupported extends SandboxUnsupportedRefusal {

    private static final long serialVersionUID = 1L;

    public SandboxOsFamilyNotSupported(String message) {
        super(message);
    }

    public SandboxOsFamilyNotSupported(String message, Throwable cause) {
        super(message, cause);
    }
}
