package org.sandbox4j.core;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

/**
 * How to start one process with {@link Sandbox#start}. The lifetime is required: nothing runs
 * unbounded. There is no stdin to give and no output cap: stdin is a pipe the caller writes, and
 * output is bounded in memory by the window (a guest that writes more than the caller reads waits)
 * and in time by the lifetime.
 *
 * @param workingDirectory the guest directory to run in (absolute)
 * @param lifetime         how long the process may live; then it is killed with everything it started
 *                         and {@link SandboxProcess#waitFor} throws {@link SandboxTimeoutException}
 * @param environment      variables added to the guest's fixed environment (the rules of {@link ExecOptions})
 * @param windowBytes      the most output of each stream held in this JVM before the guest is made to wait
 * @param listener         receives output as it arrives, on a backend thread (then {@link SandboxProcess#read}
 *                         is refused); a slow listener makes the guest wait as an unread window does
 */
public record ProcessOptions(
        String workingDirectory,
        Duration lifetime,
        Map<String, String> environment,
        int windowBytes,
        Optional<ExecListener> listener) {

    /** Per stream. With the stdin window, {@link HostCeilings#MAX_PROCESSES_PER_SANDBOX} processes fit the 8 MiB floor. */
    public static final int DEFAULT_WINDOW_BYTES = 128 * 1024;
    public static final int MIN_WINDOW_BYTES = 4 * 1024;
    public static final int MAX_WINDOW_BYTES = 16 * 1024 * 1024;

    /**
     * @throws IllegalArgumentException a missing, non-positive or over-long lifetime ({@link ExecOptions#MAX_TIMEOUT}),
     *                                  a bad environment, a window out of range
     */
    public ProcessOptions {
        if (workingDirectory == null) {
            throw new IllegalArgumentException("a process needs a working directory (an absolute guest path), not null");
        }
        if (lifetime == null) {
            throw new IllegalArgumentException("a process needs a lifetime: every process needs a bound");
        }
        if (lifetime.isNegative() || lifetime.isZero()) {
            throw new IllegalArgumentException("a process lifetime must be positive, not " + lifetime);
        }
        if (lifetime.compareTo(ExecOptions.MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException("a process lifetime may be at most " + ExecOptions.MAX_TIMEOUT.toHours()
                    + " hours, not " + lifetime + "; start a fresh process when it ends");
        }
        environment = EnvironmentRules.checked(environment);
        if (windowBytes < MIN_WINDOW_BYTES || windowBytes > MAX_WINDOW_BYTES) {
            throw new IllegalArgumentException("a process's output window must be between " + MIN_WINDOW_BYTES + " and "
                    + MAX_WINDOW_BYTES + " bytes, not " + windowBytes);
        }
        if (listener == null) {
            throw new IllegalArgumentException("the listener must be present or empty, not null");
        }
    }

    /** Run in {@code workingDirectory} for at most {@code lifetime}; no extra environment, the default window, pull mode. */
    public static ProcessOptions in(String workingDirectory, Duration lifetime) {
        return new ProcessOptions(workingDirectory, lifetime, Map.of(), DEFAULT_WINDOW_BYTES, Optional.empty());
    }

    public ProcessOptions withWorkingDirectory(String directory) {
        return new ProcessOptions(directory, lifetime, environment, windowBytes, listener);
    }

    public ProcessOptions withLifetime(Duration bound) {
        return new ProcessOptions(workingDirectory, bound, environment, windowBytes, listener);
    }

    /** Replaces the extra environment. */
    public ProcessOptions withEnvironment(Map<String, String> variables) {
        return new ProcessOptions(workingDirectory, lifetime, variables, windowBytes, listener);
    }

    public ProcessOptions withWindow(int bytes) {
        return new ProcessOptions(workingDirectory, lifetime, environment, bytes, listener);
    }

    public ProcessOptions withListener(ExecListener receiver) {
        return new ProcessOptions(workingDirectory, lifetime, environment, windowBytes, Optional.of(receiver));
    }

    /**
     * The same place, bound and environment as an exec's options, for a backend whose launch is
     * shared with {@code exec} (no stdin, no listener: the process's streams are its handle's).
     */
    public ExecOptions asExecOptions() {
        return ExecOptions.in(workingDirectory, lifetime).withEnvironment(environment);
    }
}
