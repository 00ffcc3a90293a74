package org.sandbox4j.core;

/**
 * A sandbox already runs as many processes started with {@link Sandbox#start} as one sandbox may ({@link HostCeilings#MAX_PROCESSES_PER_SANDBOX}), or their output windows would pass {@link HostCeilings#MAX_BUFFERED_BYTES}. Nothing was started. The fix: close a handle you no longer need, use smaller windows, or run one-shot work with {@code exec}.
 */
public class SandboxProcessLimitExceeded extends SandboxException {

    private static final long serialVersionUID = 1L;

    public SandboxProcessLimitExceeded(String message) {
        super(message);
    }
}
