package org.sandbox4j.core;

/**
 * The process was ended by its own handle ({@link SandboxProcess#kill} or {@link SandboxProcess#close}) with everything it started; its exit code, if any, is not the command's word and is not reported.
 */
public class SandboxProcessKilled extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxProcessKilled(String message) {
        super(message);
    }
}
