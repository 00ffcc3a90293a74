package org.sandbox4j.core;

/**
 * An artifact name is empty, absolute, too long, has a backslash, a control character, or an empty, '.' or '..' segment.
 */
public class SandboxArtifactNameInvalid extends SandboxOutputException {

    private static final long serialVersionUID = 1L;

    public SandboxArtifactNameInvalid(String message) {
        super(message);
    }

    public SandboxArtifactNameInvalid(String message, Throwable cause) {
        super(message, cause);
    }
}
