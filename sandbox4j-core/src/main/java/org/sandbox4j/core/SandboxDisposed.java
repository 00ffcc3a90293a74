package org.sandbox4j.core;

/**
 * The sandbox was disposed of — by this process or by another sharing the provider's record —
 * before or while the call ran. A command running then was stopped with everything it started;
 * its exit code, if any, is not the command's word and is not reported. Acquire the sandbox again
 * for a fresh one.
 */
public class SandboxDisposed extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxDisposed(String message) {
        super(message);
    }

    public SandboxDisposed(String message, Throwable cause) {
        super(message, cause);
    }
}
