package org.sandbox4j.core;

/**
 * The spec requires a capability the host denies. The fix: narrow the workload, or run it on another host.
 */
public class SandboxCapabilityDenied extends SandboxPolicyRefusal {

    private static final long serialVersionUID = 1L;

    public SandboxCapabilityDenied(String message) {
        super(message);
    }

    public SandboxCapabilityDenied(String message, Throwable cause) {
        super(message, cause);
    }
}
