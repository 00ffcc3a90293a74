package org.sandbox4j.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import org.sandbox4j.core.spi.CapturedBytes;

/**
 * What a command left behind. Both streams are kept as bytes (a program may print anything);
 * the text accessors decode UTF-8, replacing malformed input. Immutable, and equal by content.
 *
 * <p>Large output is read without copies: {@link #stdoutSize()}, {@link #stdoutStream()} and
 * {@link #transferStdoutTo(OutputStream)} (and their stderr twins) read the bytes where the backend
 * captured them, while {@link #stdout()} and {@link #stderr()} return a fresh copy each call (an
 * array cannot be handed out without letting its holder change the result). A final class rather
 * than a record for that reason: a record's component would be the one array, copied in and out.
 */
public final class ExecResult {

    private final CapturedBytes stdout;
    private final CapturedBytes stderr;
    private final int exitCode;
    private final Duration elapsed;

    /**
     * @param stdout   standard output, verbatim (copied: later changes to the array do not show)
     * @param stderr   standard error, verbatim (copied)
     * @param exitCode the real exit code (128 + n for a signal, where the guest reports it so)
     * @param elapsed  wall-clock time of the call as the host measured it
     */
    public ExecResult(byte[] stdout, byte[] stderr, int exitCode, Duration elapsed) {
        this(CapturedBytes.copyOf(Objects.requireNonNull(stdout, "stdout")),
                CapturedBytes.copyOf(Objects.requireNonNull(stderr, "stderr")), exitCode, elapsed);
    }

    private ExecResult(CapturedBytes stdout, CapturedBytes stderr, int exitCode, Duration elapsed) {
        this.stdout = Objects.requireNonNull(stdout, "stdout");
        this.stderr = Objects.requireNonNull(stderr, "stderr");
        this.exitCode = exitCode;
        this.elapsed = Objects.requireNonNull(elapsed, "elapsed");
    }

    /** A result with text streams, for backends and fakes that produce text. */
    public static ExecResult of(String stdout, String stderr, int exitCode, Duration elapsed) {
        return new ExecResult(stdout.getBytes(StandardCharsets.UTF_8), stderr.getBytes(StandardCharsets.UTF_8),
                exitCode, elapsed);
    }

    /**
     * A result holding streams a backend captured, as they are (no copy: {@link CapturedBytes} is
     * immutable).
     */
    public static ExecResult captured(CapturedBytes stdout, CapturedBytes stderr, int exitCode, Duration elapsed) {
        return new ExecResult(stdout, stderr, exitCode, elapsed);
    }

    /** Standard output, verbatim: a fresh copy each call (see {@link #stdoutStream()} for none). */
    public byte[] stdout() {
        return stdout.toByteArray();
    }

    /** Standard error, verbatim: a fresh copy each call (see {@link #stderrStream()} for none). */
    public byte[] stderr() {
        return stderr.toByteArray();
    }

    /** The real exit code (128 + n for a signal, where the guest reports it so). */
    public int exitCode() {
        return exitCode;
    }

    /** Wall-clock time of the call as the host measured it. */
    public Duration elapsed() {
        return elapsed;
    }

    /** How many bytes of standard output there are. */
    public int stdoutSize() {
        return stdout.size();
    }

    /** How many bytes of standard error there are. */
    public int stderrSize() {
        return stderr.size();
    }

    /** A fresh stream over standard output, reading the captured bytes in place (no copy of the whole). */
    public InputStream stdoutStream() {
        return stdout.inputStream();
    }

    /** A fresh stream over standard error, reading the captured bytes in place (no copy of the whole). */
    public InputStream stderrStream() {
        return stderr.inputStream();
    }

    /**
     * Writes standard output to {@code out} with no copy: {@code out} is handed the captured blocks
     * themselves, so it must neither change them nor keep them past the call.
     *
     * @return the number of bytes written
     */
    public long transferStdoutTo(OutputStream out) throws IOException {
        return stdout.transferTo(out);
    }

    /** {@link #transferStdoutTo} for standard error. */
    public long transferStderrTo(OutputStream out) throws IOException {
        return stderr.transferTo(out);
    }

    /** Standard output decoded as UTF-8; malformed bytes become U+FFFD. */
    public String stdoutText() {
        return stdout.toString(StandardCharsets.UTF_8);
    }

    /** Standard error decoded as UTF-8; malformed bytes become U+FFFD. */
    public String stderrText() {
        return stderr.toString(StandardCharsets.UTF_8);
    }

    public boolean succeeded() {
        return exitCode == 0;
    }

    /** Equal when the exit code, the elapsed time and both streams' bytes are. */
    @Override
    public boolean equals(Object other) {
        return other instanceof ExecResult that
                && exitCode == that.exitCode
                && stdout.equals(that.stdout)
                && stderr.equals(that.stderr)
                && elapsed.equals(that.elapsed);
    }

    /** As the record's was: over {@link java.util.Arrays#hashCode(byte[])} of each stream. */
    @Override
    public int hashCode() {
        return Objects.hash(stdout.hashCode(), stderr.hashCode(), exitCode, elapsed);
    }

    /** Sizes, not content: output may hold secrets. */
    @Override
    public String toString() {
        return "ExecResult[exitCode=" + exitCode + ", stdout=" + stdout.size() + " bytes, stderr=" + stderr.size()
                + " bytes, elapsed=" + elapsed + "]";
    }
}
