package org.sandbox4j.core;

/**
 * The spec's transfer caps exceed the backend's ceilings (or the backend's limits are malformed). Refused, never clamped. The fix: lower the caps, or declare nothing and take the defaults.
 */
public class SandboxTransferLimitsNotPermitted extends SandboxPolicyRefusal {

    private static final long serialVersionUID = 1L;

    public SandboxTransferLimitsNotPermitted(String message) {
        super(message);
    }

    public SandboxTransferLimitsNotPermitted(String message, Throwable cause) {
        super(message, cause);
    }
}
