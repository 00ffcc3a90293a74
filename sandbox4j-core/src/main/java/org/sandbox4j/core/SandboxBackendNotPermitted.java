package org.sandbox4j.core;

/**
 * The backend's isolation is below the minimum-isolation floor (or is not a rung of the ladder). The fix: a stronger backend, or an explicit lower floor where that is allowed.
 */
public class SandboxBackendNotPermitted extends SandboxPolicyRefusal {

    private static final long serialVersionUID = 1L;

    public SandboxBackendNotPermitted(String message) {
        super(message);
    }

    public SandboxBackendNotPermitted(String message, Throwable cause) {
        super(message, cause);
    }
}
