package org.sandbox4j.core;

/**
 * The spec carries a host-tool identity the host denies. The fix: drop the host tools that act with that identity.
 */
public class SandboxIdentityDenied extends SandboxPolicyRefusal {

    private static final long serialVersionUID = 1L;

    public SandboxIdentityDenied(String message) {
        super(message);
    }

    public SandboxIdentityDenied(String message, Throwable cause) {
        super(message, cause);
    }
}
