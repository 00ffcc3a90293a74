package org.sandbox4j.core;

/**
 * Two landing artifacts would land under the same name, or under names that differ only by case or Unicode form.
 */
public class SandboxArtifactNameCollision extends SandboxOutputException {

    private static final long serialVersionUID = 1L;

    public SandboxArtifactNameCollision(String message) {
        super(message);
    }

    public SandboxArtifactNameCollision(String message, Throwable cause) {
        super(message, cause);
    }
}
