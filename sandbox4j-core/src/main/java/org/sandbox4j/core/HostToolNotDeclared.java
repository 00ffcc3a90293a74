package org.sandbox4j.core;

/**
 * A host tool without a declaration was registered where declarations are required.
 */
public class HostToolNotDeclared extends SandboxException {

    private static final long serialVersionUID = 1L;

    public HostToolNotDeclared(String message) {
        super(message);
    }

    public HostToolNotDeclared(String message, Throwable cause) {
        super(message, cause);
    }
}
