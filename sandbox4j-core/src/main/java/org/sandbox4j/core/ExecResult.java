package org.sandbox4j.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;

/**
 * What a command left behind. Both streams are kept as bytes (a program may print anything);
 * the text accessors decode UTF-8, replacing malformed input.
 *
 * @param stdout   standard output, verbatim
 * @param stderr   standard error, verbatim
 * @param exitCode the real exit code (128 + n for a signal, where the guest reports it so)
 * @param elapsed  wall-clock time of the call as the host measured it
 */
public record ExecResult(byte[] stdout, byte[] stderr, int exitCode, Duration elapsed) {

    public ExecResult {
        stdout = Objects.requireNonNull(stdout, "stdout").clone();
        stderr = Objects.requireNonNull(stderr, "stderr").clone();
        Objects.requireNonNull(elapsed, "elapsed");
    }

    /** A result with text streams, for backends and fakes that produce text. */
    public static ExecResult of(String stdout, String stderr, int exitCode, Duration elapsed) {
        return new ExecResult(stdout.getBytes(StandardCharsets.UTF_8), stderr.getBytes(StandardCharsets.UTF_8),
                exitCode, elapsed);
    }

    @Override
    public byte[] stdout() {
        return stdout.clone();
    }

    @Override
    public byte[] stderr() {
        return stderr.clone();
    }

    /** Standard output decoded as UTF-8; malformed bytes become U+FFFD. */
    public String stdoutText() {
        return new String(stdout, StandardCharsets.UTF_8);
    }

    /** Standard error decoded as UTF-8; malformed bytes become U+FFFD. */
    public String stderrText() {
        return new String(stderr, StandardCharsets.UTF_8);
    }

    public boolean succeeded() {
        return exitCode == 0;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof ExecResult that
                && exitCode == that.exitCode
                && Arrays.equals(stdout, that.stdout)
                && Arrays.equals(stderr, that.stderr)
                && elapsed.equals(that.elapsed);
    }

    @Override
    public int hashCode() {
        return Objects.hash(Arrays.hashCode(stdout), Arrays.hashCode(stderr), exitCode, elapsed);
    }

    @Override
    public String toString() {
        return "ExecResult[exitCode=" + exitCode + ", stdout=" + stdout.length + " bytes, stderr=" + stderr.length
                + " bytes, elapsed=" + elapsed + "]";
    }
}
