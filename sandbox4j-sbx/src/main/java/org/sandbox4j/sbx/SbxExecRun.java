package org.sandbox4j.sbx;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.ExecCapture;
import org.sandbox4j.core.spi.ProcessPump;

/**
 * One streamed {@code sbx exec} of the wrapper: feeds stdin ({@link ProcessPump#feed}), reads
 * stdout and stderr concurrently into one {@link ExecCapture} (the shared cap and the listener),
 * and stops waiting at the caller's deadline or when the capture stops the command. The sbx part
 * is stderr's split at the wrapper's marker line, "NONCE" or "NONCE REASON": what comes before it
 * is {@code sbx}'s or the wrapper's own (bounded separately, never the command's), what follows
 * "NONCE" is the command's. It kills nothing: the backend kills the guest's process group first,
 * then the client.
 */
final class SbxExecRun {

    private static final System.Logger LOG = System.getLogger(SbxExecRun.class.getName());
    /** What sbx may say before the nonce is kept up to this; a real error line is far shorter. */
    static final int MAX_PREAMBLE_BYTES = 64 * 1024;
    private static final Duration POLL = Duration.ofMillis(20);
    private static final Duration DRAIN_GRACE = Duration.ofSeconds(5);

    /** How the run ended. */
    enum Ending {
        /** The wrapper ran the command (or is still running it, on a timeout or the cap). */
        STARTED(null),
        /** The wrapper found the workspace bind gone and ran nothing. */
        UNBOUND(SbxScripts.UNBOUND),
        /** The working directory does not exist in the guest; nothing ran. */
        WORKING_DIRECTORY_MISSING(SbxScripts.WORKING_DIRECTORY_MISSING),
        /** The working directory is not a directory; nothing ran. */
        WORKING_DIRECTORY_NOT_A_DIRECTORY(SbxScripts.WORKING_DIRECTORY_NOT_A_DIRECTORY),
        /** The working directory is a directory the guest user may not enter; nothing ran. */
        WORKING_DIRECTORY_UNENTERABLE(SbxScripts.WORKING_DIRECTORY_UNENTERABLE),
        /** The wrapper failed to prepare the command (decode its words, make its state); nothing ran. */
        WRAPPER_FAILED(SbxScripts.WRAPPER_FAILED),
        /** No nonce: sbx itself failed; {@link Outcome#preamble()} holds what it said. */
        NO_NONCE(null);

        /** The word after the nonce on the wrapper's marker line, or null. */
        private final String reason;

        Ending(String reason) {
            this.reason = reason;
        }

        /** The wrapper's marker line for this ending, newline included ({@link #NO_NONCE} has none). */
        byte[] markerLine(String nonce) {
            return ((reason == null ? nonce : nonce + " " + reason) + "\n").getBytes(StandardCharsets.US_ASCII);
        }

        /** The ending whose marker line {@code line} (newline included) is, if it is one. */
        static java.util.Optional<Ending> ofMarkerLine(String nonce, byte[] line) {
            for (Ending ending : values()) {
                if (ending != NO_NONCE && Arrays.equals(ending.markerLine(nonce), line)) {
                    return java.util.Optional.of(ending);
                }
            }
            return java.util.Optional.empty();
        }
    }

    /**
     * @param ending   how it ended
     * @param exitCode the client's exit status (the command's, when it started and finished)
     * @param capture  the command's stdout and its stderr after the nonce line, under the shared cap
     * @param preamble what sbx said on stderr before the nonce (or all of it, without one)
     * @param timedOut the caller's deadline passed; the client is still running
     * @param stopped  the capture stopped the command (past the cap, or the host could not hold its
     *                 output: {@link ExecCapture#refusal} says which); the client is still running
     */
    record Outcome(Ending ending, int exitCode, ExecCapture capture, String preamble, boolean timedOut,
            boolean stopped) {
    }

    private final Process process;
    private final ExecOptions options;
    private final String nonce;
    private final ExecCapture capture;
    private final ByteArrayOutputStream preamble = new ByteArrayOutputStream();
    private volatile Ending marker = Ending.NO_NONCE;
    private volatile boolean stopped;

    private SbxExecRun(Process process, ExecOptions options, String nonce, String backendName) {
        this.process = process;
        this.options = options;
        this.nonce = nonce;
        this.capture = new ExecCapture(options, backendName);
    }

    /** Waits for {@code process} until it ends, the deadline ({@code startNanos + timeout}) passes, or the cap is hit. */
    static Outcome await(Process process, ExecOptions options, String nonce, String backendName, long startNanos)
            throws InterruptedException {
        return new SbxExecRun(process, options, nonce, backendName).await(startNanos);
    }

    private Outcome await(long startNanos) throws InterruptedException {
        long deadline = startNanos + options.timeout().toNanos();
        Thread feeder = ProcessPump.daemon("stdin", () -> ProcessPump.feed(process, options.stdin()));
        Thread outReader = ProcessPump.daemon("stdout",
                () -> capture.drain(process.getInputStream(), ExecStream.STDOUT, this::stop));
        Thread errReader = ProcessPump.daemon("stderr", this::drainStderr);
        feeder.start();
        outReader.start();
        errReader.start();
        while (true) {
            if (stopped) {
                return outcome(-1, false);
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return outcome(-1, true);
            }
            if (process.waitFor(Math.min(left, POLL.toNanos()), TimeUnit.NANOSECONDS)) {
                break;
            }
        }
        // The client has exited; its pipes close with it. Readers get what remains.
        joinUntil(outReader, deadline);
        joinUntil(errReader, deadline);
        if (stopped) {
            return outcome(-1, false);
        }
        if (outReader.isAlive() || errReader.isAlive()) {
            return outcome(-1, true);
        }
        return outcome(process.exitValue(), false);
    }

    /** The capture's stop: the backend kills the command once {@link #await} returns. */
    private void stop() {
        stopped = true;
    }

    private Outcome outcome(int exitCode, boolean timedOut) {
        Ending ending = marker;
        if ((timedOut || stopped) && ending == Ending.NO_NONCE) {
            // Still waiting for the wrapper: the command may yet start, so it is treated as started.
            ending = Ending.STARTED;
        }
        String said;
        synchronized (preamble) {
            said = preamble.toString(StandardCharsets.UTF_8);
        }
        return new Outcome(ending, exitCode, capture, said, timedOut, stopped && !timedOut);
    }

    /** Reads sbx's preamble up to the wrapper's marker line, then (after "NONCE") the command's stderr. */
    private void drainStderr() {
        InputStream stream = process.getErrorStream();
        byte[] chunk = new byte[ExecCapture.CHUNK_BYTES];
        try {
            int read;
            while ((read = stream.read(chunk)) >= 0) {
                int consumed = scanPreamble(chunk, read);
                if (consumed < 0) {
                    continue;
                }
                if (marker != Ending.STARTED) {
                    // The wrapper ran nothing: what follows its marker is no command's; read to the end unkept.
                    while (stream.read(chunk) >= 0) {
                        // Discarded, so sbx never writes into a closed pipe.
                    }
                    break;
                }
                if (read > consumed && !capture.offer(ExecStream.STDERR, chunk, consumed, read - consumed)) {
                    stop();
                    break;
                }
                capture.drain(stream, ExecStream.STDERR, this::stop);
                return;
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "stderr closed: " + ErrorDetail.of(e));
        }
        closeQuietly(stream);
    }

    /**
     * Adds bytes to the preamble and looks for the marker line. Returns how many of {@code chunk}'s
     * bytes belonged to the preamble and the marker once it is found, or -1 while it is still
     * missing. Only a whole line counts: "NONCE" alone, or "NONCE REASON" for a known reason.
     */
    private int scanPreamble(byte[] chunk, int length) {
        synchronized (preamble) {
            int before = preamble.size();
            int room = MAX_PREAMBLE_BYTES - before;
            preamble.write(chunk, 0, Math.max(0, Math.min(room, length)));
            byte[] seen = preamble.toByteArray();
            for (Ending ending : Ending.values()) {
                if (ending == Ending.NO_NONCE) {
                    continue;
                }
                byte[] line = ending.markerLine(nonce);
                int at = lineAt(seen, line);
                if (at >= 0) {
                    marker = ending;
                    preamble.reset();
                    preamble.write(seen, 0, at);
                    return at + line.length - before;
                }
            }
            return -1;
        }
    }

    /** Where {@code line} starts a line of {@code text}, or -1. */
    static int lineAt(byte[] text, byte[] line) {
        for (int from = 0; from + line.length <= text.length; from++) {
            if ((from == 0 || text[from - 1] == '\n')
                    && Arrays.equals(text, from, from + line.length, line, 0, line.length)) {
                return from;
            }
        }
        return -1;
    }

    private static void joinUntil(Thread thread, long deadline) throws InterruptedException {
        long left = Math.max(deadline - System.nanoTime(), DRAIN_GRACE.toNanos());
        TimeUnit.NANOSECONDS.timedJoin(thread, left);
    }

    private static void closeQuietly(InputStream stream) {
        try {
            stream.close();
        } catch (IOException ignored) {
            // Already closed with the process.
        }
    }
}
