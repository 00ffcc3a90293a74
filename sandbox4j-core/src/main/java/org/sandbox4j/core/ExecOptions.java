package org.sandbox4j.core;

import java.time.Duration;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * How to run one command. The timeout is required: nothing runs unbounded.
 *
 * @param workingDirectory the guest directory to run in (absolute)
 * @param timeout          the caller's bound; on expiry the whole process tree is killed and
 *                         {@link SandboxTimeoutException} is thrown
 * @param environment      variables added to the guest's fixed environment
 * @param stdin            bytes fed to standard input, then closed; empty means no input
 * @param outputCapBytes   stdout and stderr together; beyond it the command is killed and
 *                         {@link SandboxExecOutputLimitExceeded} is thrown
 * @param listener         receives output as it arrives
 */
public record ExecOptions(
        String workingDirectory,
        Duration timeout,
        Map<String, String> environment,
        Optional<byte[]> stdin,
        long outputCapBytes,
        Optional<ExecListener> listener) {

    /** 8 MiB for both streams together. */
    public static final long DEFAULT_OUTPUT_CAP_BYTES = 8L * 1024 * 1024;

    public ExecOptions {
        Objects.requireNonNull(workingDirectory, "workingDirectory");
        Objects.requireNonNull(timeout, "timeout: every command needs a bound");
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("an exec timeout must be positive, not " + timeout);
        }
        environment = Collections.unmodifiableMap(new LinkedHashMap<>(environment));
        for (Map.Entry<String, String> variable : environment.entrySet()) {
            String name = Objects.requireNonNull(variable.getKey(), "environment variable name");
            String value = Objects.requireNonNull(variable.getValue(), "value of environment variable " + name);
            if (name.isEmpty() || name.indexOf('=') >= 0 || name.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("not a valid environment variable name: '" + name + "'");
            }
            if (value.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("the value of environment variable '" + name
                        + "' contains a NUL character, which no process can receive");
            }
        }
        stdin = Objects.requireNonNull(stdin, "stdin").map(byte[]::clone);
        if (outputCapBytes < 1) {
            throw new IllegalArgumentException("the output cap must be at least one byte, not " + outputCapBytes);
        }
        Objects.requireNonNull(listener, "listener");
    }

    /** Run in {@code workingDirectory}, bounded by {@code timeout}; no extra environment, no stdin, default cap. */
    public static ExecOptions in(String workingDirectory, Duration timeout) {
        return new ExecOptions(workingDirectory, timeout, Map.of(), Optional.empty(), DEFAULT_OUTPUT_CAP_BYTES,
                Optional.empty());
    }

    @Override
    public Optional<byte[]> stdin() {
        return stdin.map(byte[]::clone);
    }

    /** Equal when every component is, stdin compared by content. */
    @Override
    public boolean equals(Object other) {
        return other instanceof ExecOptions that
                && workingDirectory.equals(that.workingDirectory)
                && timeout.equals(that.timeout)
                && environment.equals(that.environment)
                && Arrays.equals(stdin.orElse(null), that.stdin.orElse(null))
                && outputCapBytes == that.outputCapBytes
                && listener.equals(that.listener);
    }

    @Override
    public int hashCode() {
        return Objects.hash(workingDirectory, timeout, environment, Arrays.hashCode(stdin.orElse(null)), outputCapBytes,
                listener);
    }

    @Override
    public String toString() {
        return "ExecOptions[workingDirectory=" + workingDirectory + ", timeout=" + timeout + ", environment="
                + environment.keySet() + ", stdin=" + stdin.map(bytes -> bytes.length + " bytes").orElse("none")
                + ", outputCapBytes=" + outputCapBytes + ", listener=" + listener.isPresent() + "]";
    }

    public ExecOptions withWorkingDirectory(String directory) {
        return new ExecOptions(directory, timeout, environment, stdin, outputCapBytes, listener);
    }

    public ExecOptions withTimeout(Duration bound) {
        return new ExecOptions(workingDirectory, bound, environment, stdin, outputCapBytes, listener);
    }

    /** Replaces the extra environment. */
    public ExecOptions withEnvironment(Map<String, String> variables) {
        return new ExecOptions(workingDirectory, timeout, variables, stdin, outputCapBytes, listener);
    }

    public ExecOptions withStdin(byte[] input) {
        return new ExecOptions(workingDirectory, timeout, environment, Optional.of(input), outputCapBytes, listener);
    }

    public ExecOptions withOutputCap(long bytes) {
        return new ExecOptions(workingDirectory, timeout, environment, stdin, bytes, listener);
    }

    public ExecOptions withListener(ExecListener receiver) {
        return new ExecOptions(workingDirectory, timeout, environment, stdin, outputCapBytes, Optional.of(receiver));
    }
}
