package org.sandbox4j.core;

/**
 * A safety refusal: serving the spec would weaken what the host allows. Never degraded, never substituted.
 */
public abstract class SandboxPolicyRefusal extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxPolicyRefusal(String message) {
        super(message);
    }

    public SandboxPolicyRefusal(String message, Throwable cause) {
        super(message, cause);
    }
}
