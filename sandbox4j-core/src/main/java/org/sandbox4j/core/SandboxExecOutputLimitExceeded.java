package org.sandbox4j.core;

/**
 * A command wrote more than its output cap (stdout and stderr together). The command was killed; host memory stayed bounded. The fix: raise the cap, or write large results to a file and read it with the pull surface.
 */
public class SandboxExecOutputLimitExceeded extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxExecOutputLimitExceeded(String message) {
        super(message);
    }

    public SandboxExecOutputLimitExceeded(String message, Throwable cause) {
        super(message, cause);
    }
}
