package org.sandbox4j.core;

/**
 * A host tool declares an identity the registry does not allow.
 */
public class HostToolIdentityNotAllowed extends SandboxException {

    private static final long serialVersionUID = 1L;

    public HostToolIdentityNotAllowed(String message) {
        super(message);
    }

    public HostToolIdentityNotAllowed(String message, Throwable cause) {
        super(message, cause);
    }
}
