package org.sandbox4j.sbx;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.ExecListener;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecStream;

/**
 * One streamed {@code sbx exec} of the wrapper: feeds stdin, reads stdout and stderr concurrently
 * under one shared cap (nothing buffered past it), splits stderr at the wrapper's nonce line (what
 * comes before is {@code sbx}'s own, bounded separately), hands the command's chunks to the
 * listener, and stops waiting at the caller's deadline or when the cap is exceeded. It kills
 * nothing: the backend kills the guest's process group first, then the client.
 */
final class SbxExecRun {

    private static final System.Logger LOG = System.getLogger(SbxExecRun.class.getName());
    private static final int CHUNK_BYTES = 8192;
    /** What sbx may say before the nonce is kept up to this; a real error line is far shorter. */
    static final int MAX_PREAMBLE_BYTES = 64 * 1024;
    private static final Duration POLL = Duration.ofMillis(20);
    private static final Duration DRAIN_GRACE = Duration.ofSeconds(5);

    /** How the run ended. */
    enum Ending {
        /** The wrapper ran the command (or is still running it, on a timeout or the cap). */
        STARTED,
        /** The wrapper found the workspace bind gone and ran nothing. */
        UNBOUND,
        /** No nonce: sbx itself failed; {@link Outcome#preamble()} holds what it said. */
        NO_NONCE
    }

    /**
     * @param ending      how it ended
     * @param exitCode    the client's exit status (the command's, when it started and finished)
     * @param stdout      the command's stdout
     * @param stderr      the command's stderr, after the nonce line
     * @param preamble    what sbx said on stderr before the nonce (or all of it, without one)
     * @param timedOut    the caller's deadline passed; the client is still running
     * @param capExceeded the output cap was exceeded; the client is still running
     */
    record Outcome(Ending ending, int exitCode, byte[] stdout, byte[] stderr, String preamble, boolean timedOut,
            boolean capExceeded) {
    }

    private final Process process;
    private final ExecOptions options;
    private final byte[] nonceLine;
    private final byte[] unboundLine;
    private final String backendName;
    private final Budget budget;
    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    private final ByteArrayOutputStream preamble = new ByteArrayOutputStream();
    private volatile Ending marker = Ending.NO_NONCE;

    private SbxExecRun(Process process, ExecOptions options, String nonce, String backendName) {
        this.process = process;
        this.options = options;
        this.nonceLine = (nonce + "\n").getBytes(StandardCharsets.US_ASCII);
        this.unboundLine = (nonce + " " + SbxScripts.UNBOUND + "\n").getBytes(StandardCharsets.US_ASCII);
        this.backendName = backendName;
        this.budget = new Budget(options.outputCapBytes());
    }

    /** Waits for {@code process} until it ends, the deadline ({@code startNanos + timeout}) passes, or the cap is hit. */
    static Outcome await(Process process, ExecOptions options, String nonce, String backendName, long startNanos)
            throws InterruptedException {
        return new SbxExecRun(process, options, nonce, backendName).await(startNanos);
    }

    private Outcome await(long startNanos) throws InterruptedException {
        long deadline = startNanos + options.timeout().toNanos();
        Thread feeder = daemon("stdin", () -> feed(options.stdin()));
        Thread outReader = daemon("stdout", this::drainStdout);
        Thread errReader = daemon("stderr", this::drainStderr);
        feeder.start();
        outReader.start();
        errReader.start();
        while (true) {
            if (budget.exceeded()) {
                return outcome(-1, false, true);
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return outcome(-1, true, false);
            }
            if (process.waitFor(Math.min(left, POLL.toNanos()), TimeUnit.NANOSECONDS)) {
                break;
            }
        }
        // The client has exited; its pipes close with it. Readers get what remains.
        joinUntil(outReader, deadline);
        joinUntil(errReader, deadline);
        if (budget.exceeded()) {
            return outcome(-1, false, true);
        }
        if (outReader.isAlive() || errReader.isAlive()) {
            return outcome(-1, true, false);
        }
        return outcome(process.exitValue(), false, false);
    }

    private Outcome outcome(int exitCode, boolean timedOut, boolean capExceeded) {
        Ending ending = marker;
        if ((timedOut || capExceeded) && ending == Ending.NO_NONCE) {
            // Still waiting for the wrapper: the command may yet start, so it is treated as started.
            ending = Ending.STARTED;
        }
        return new Outcome(ending, exitCode, snapshot(stdout), snapshot(stderr),
                snapshot(preamble).length == 0 ? "" : new String(snapshot(preamble), StandardCharsets.UTF_8), timedOut,
                capExceeded);
    }

    private void feed(Optional<byte[]> input) {
        try (OutputStream in = process.getOutputStream()) {
            if (input.isPresent()) {
                in.write(input.get());
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "stdin not fully delivered: " + ErrorDetail.of(e));
        }
    }

    private void drainStdout() {
        drain(process.getInputStream(), ExecStream.STDOUT, stdout, 0, new byte[CHUNK_BYTES], 0);
    }

    /** Reads sbx's preamble up to the nonce line, then the command's stderr. */
    private void drainStderr() {
        InputStream stream = process.getErrorStream();
        byte[] chunk = new byte[CHUNK_BYTES];
        try {
            int read;
            while ((read = stream.read(chunk)) >= 0) {
                int consumed = scanPreamble(chunk, read);
                if (consumed < 0) {
                    continue;
                }
                drain(stream, ExecStream.STDERR, stderr, consumed, chunk, read);
                return;
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "stderr closed: " + ErrorDetail.of(e));
        }
        closeQuietly(stream);
    }

    /**
     * Adds bytes to the preamble and looks for the nonce line. Returns how many of {@code chunk}'s
     * bytes belonged to the preamble once the nonce is found, or -1 while it is still missing.
     */
    private int scanPreamble(byte[] chunk, int length) {
        int before = preamble.size();
        int room = MAX_PREAMBLE_BYTES - before;
        preamble.write(chunk, 0, Math.max(0, Math.min(room, length)));
        byte[] seen = preamble.toByteArray();
        for (byte[] line : new byte[][] {nonceLine, unboundLine}) {
            int at = indexOf(seen, line);
            if (at >= 0 && (at == 0 || seen[at - 1] == '\n')) {
                marker = line == nonceLine ? Ending.STARTED : Ending.UNBOUND;
                int end = at + line.length;
                byte[] said = Arrays.copyOf(seen, at);
                preamble.reset();
                preamble.write(said, 0, said.length);
                return end - before;
            }
        }
        return -1;
    }

    /** Reads one stream until it closes or the shared cap is exceeded; never buffers past the cap. */
    private void drain(InputStream stream, ExecStream which, ByteArrayOutputStream sink, int offset, byte[] first,
            int firstLength) {
        byte[] chunk = first;
        try (stream) {
            if (firstLength > offset && !accept(which, sink, chunk, offset, firstLength - offset)) {
                return;
            }
            chunk = new byte[CHUNK_BYTES];
            int read;
            while ((read = stream.read(chunk)) >= 0) {
                if (!accept(which, sink, chunk, 0, read)) {
                    return;
                }
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> which + " closed: " + ErrorDetail.of(e));
        }
    }

    private boolean accept(ExecStream which, ByteArrayOutputStream sink, byte[] chunk, int offset, int length) {
        int accepted = budget.take(length);
        if (accepted > 0) {
            byte[] kept = Arrays.copyOfRange(chunk, offset, offset + accepted);
            synchronized (sink) {
                sink.write(kept, 0, accepted);
            }
            deliver(which, kept);
        }
        return accepted == length;
    }

    private void deliver(ExecStream which, byte[] chunk) {
        Optional<ExecListener> listener = options.listener();
        if (listener.isEmpty()) {
            return;
        }
        try {
            listener.get().onOutput(which, chunk);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "backend '" + backendName + "': an exec listener threw, and the "
                    + "command goes on: " + ErrorDetail.of(e));
        }
    }

    static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static byte[] snapshot(ByteArrayOutputStream sink) {
        synchronized (sink) {
            return sink.toByteArray();
        }
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

    private static Thread daemon(String role, Runnable body) {
        Thread thread = new Thread(body, "sandbox4j-sbx-" + role);
        thread.setDaemon(true);
        return thread;
    }

    /** The one cap stdout and stderr share. */
    private static final class Budget {
        private final long cap;
        private long used;
        private boolean exceeded;

        Budget(long cap) {
            this.cap = cap;
        }

        synchronized int take(int offered) {
            int accepted = (int) Math.min(offered, cap - used);
            used += accepted;
            if (accepted < offered) {
                exceeded = true;
            }
            return accepted;
        }

        synchronized boolean exceeded() {
            return exceeded;
        }
    }
}
