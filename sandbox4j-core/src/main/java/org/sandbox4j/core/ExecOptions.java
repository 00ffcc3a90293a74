package org.sandbox4j.core;

import org.sandbox4j.core.spi.GuestText;
import java.time.Duration;
import java.util.Arrays;
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
    /** The longest bound a command may be given: a day (a longer one is surely a mistake, and overflows clocks). */
    public static final Duration MAX_TIMEOUT = Duration.ofDays(1);

    /**
     * @throws IllegalArgumentException a missing, non-positive or over-long timeout, a variable
     *                                  name that is not a portable shell name, a NUL in a value,
     *                                  a cap below one byte or above {@link HostCeilings#MAX_BUFFERED_BYTES}
     */
    public ExecOptions {
        if (workingDirectory == null) {
            throw new IllegalArgumentException("an exec needs a working directory (an absolute guest path), not null");
        }
        if (timeout == null) {
            throw new IllegalArgumentException("an exec needs a timeout: every command needs a bound");
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("an exec timeout must be positive, not " + timeout);
        }
        if (timeout.compareTo(MAX_TIMEOUT) > 0) {
            throw new IllegalArgumentException("an exec timeout may be at most " + MAX_TIMEOUT.toHours() + " hours, not "
                    + timeout + "; run longer work as several commands, or in the background with a status file");
        }
        environment = EnvironmentRules.checked(environment);
        if (stdin == null) {
            throw new IllegalArgumentException("stdin must be present or empty, not null");
        }
        stdin = stdin.map(byte[]::clone);
        if (outputCapBytes < 1) {
            throw new IllegalArgumentException("the output cap must be at least one byte, not " + outputCapBytes);
        }
        if (outputCapBytes > HostCeilings.MAX_BUFFERED_BYTES) {
            throw new IllegalArgumentException("the output cap may be at most " + HostCeilings.MAX_BUFFERED_BYTES
                    + " bytes (an eighth of this JVM's heap, at most 256 MiB), not " + outputCapBytes + "; have the "
                    + "command write large results to a file and read that");
        }
        if (listener == null) {
            throw new IllegalArgumentException("the listener must be present or empty, not null");
        }
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
