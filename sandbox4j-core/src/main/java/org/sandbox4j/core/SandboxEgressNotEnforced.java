package org.sandbox4j.core;

/**
 * The backend cannot enforce the egress mode the spec asks for. Never substituted by a more open or a more closed mode. The fix: give the backend the mechanism, or run the mode it can deliver.
 */
public class SandboxEgressNotEnforced extends SandboxPolicyRefusal {

    private static final long serialVersionUID = 1L;

    public SandboxEgressNotEnforced(String message) {
        super(message);
    }

    public SandboxEgressNotEnforced(String message, Throwable cause) {
        super(message, cause);
    }
}
