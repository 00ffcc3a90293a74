package org.sandbox4j.core;

/**
 * A deployed router was asked to lower its floor below microvm. The fix: keep the floor at microvm or above, or do not mark the router deployed (local development only).
 */
public class SandboxFloorNotPermitted extends SandboxPolicyRefusal {

    private static final long serialVersionUID = 1L;

    public SandboxFloorNotPermitted(String message) {
        super(message);
    }

    public SandboxFloorNotPermitted(String message, Throwable cause) {
        super(message, cause);
    }
}
