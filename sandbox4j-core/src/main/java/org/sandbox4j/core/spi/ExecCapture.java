package org.sandbox4j.core.spi;

import java.io.IOException;
import java.io.InputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import org.sandbox4j.core.ExecListener;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;

/**
 * One exec's output as it arrives, for every backend: stdout and stderr kept apart under the one
 * cap they share ({@link ExecOptions#outputCapBytes()}; nothing is kept past it), each kept chunk
 * handed to the caller's listener (a listener that throws is logged and the command goes on), and
 * a reader's failure to hold what came recorded so no result is passed off as whole. The two
 * streams may be fed from two threads; each stream has one feeder at a time.
 *
 * <p>A backend that reads streams uses {@link #drain}; one that is handed frames uses
 * {@link #offer}. Either way {@link #refusal} says afterwards whether the output may be returned,
 * and {@link #result} returns it.
 *
 * <p>Free of copies for bulk output: {@link #drain} reads straight into the free end of the blocks
 * the result will hold ({@link CapturedBytes}), and {@link #result} hands those blocks to the
 * {@link ExecResult} as they are. A copy is made only for a listener (it is promised an array of its
 * own), for {@link #offer}'s caller-owned chunks, and for {@link #stdout()}/{@link #stderr()}.
 */
public final class ExecCapture {

    /**
     * The most a reader reads at once: a Linux pipe's default capacity, so a read gets all a full pipe
     * holds (the JDK stages a read of more than 8 KiB in a native buffer of the size asked, and this
     * one stays small enough to come from malloc's arena).
     */
    public static final int CHUNK_BYTES = 64 * 1024;

    private static final System.Logger LOG = System.getLogger(ExecCapture.class.getName());

    private final long cap;
    private final Optional<ExecListener> listener;
    private final String backendName;
    private final CapturedBytes.Builder stdout = new CapturedBytes.Builder();
    private final CapturedBytes.Builder stderr = new CapturedBytes.Builder();
    private long kept;
    private boolean capExceeded;
    /** Set once {@link #result} took the output: nothing more is kept. */
    private ExecResult taken;
    private volatile Throwable hostFailure;

    public ExecCapture(ExecOptions options, String backendName) {
        this.cap = options.outputCapBytes();
        this.listener = options.listener();
        this.backendName = backendName;
    }

    /**
     * Keeps as much of {@code chunk[offset, offset + length)} as the shared cap still allows (a copy:
     * the chunk stays the caller's) and hands that to the listener.
     *
     * @return whether all of it fit; {@code false} marks the cap exceeded or the host's memory
     *         exhausted (stop the command)
     */
    public boolean offer(ExecStream stream, byte[] chunk, int offset, int length) {
        int accepted;
        try {
            synchronized (this) {
                accepted = admit(length);
                if (accepted > 0) {
                    builder(stream).append(chunk, offset, accepted, room() + accepted);
                }
            }
        } catch (OutOfMemoryError exhausted) {
            // Keeping more was impossible: the command must be stopped, and nothing returned as whole.
            hostFailure = exhausted;
            return false;
        }
        deliver(stream, chunk, offset, accepted);
        return accepted == length;
    }

    /** {@link #offer(ExecStream, byte[], int, int)} of a whole array. */
    public boolean offer(ExecStream stream, byte[] chunk) {
        return offer(stream, chunk, 0, chunk.length);
    }

    /**
     * Reads {@code source} until it ends or the cap is exceeded, then closes it. Each read lands in
     * the free end of the stream's last block, at most {@link #CHUNK_BYTES} at once; once the cap is
     * reached, one more byte is read into a scratch byte to tell an output that ends exactly at the
     * cap from one that goes past it. A read that fails (the process was killed under the reader)
     * ends the read; what was read is kept. When the cap is exceeded or the host cannot hold what
     * came, {@code stop} runs, so the command does not run on unread (or die of SIGPIPE).
     */
    public void drain(InputStream source, ExecStream stream, Runnable stop) {
        CapturedBytes.Builder into = builder(stream);
        byte[] beyondCap = new byte[1];
        try (source) {
            while (true) {
                byte[] block;
                int at;
                int want;
                synchronized (this) {
                    long room = room();
                    if (room > 0) {
                        block = into.blockWithRoom(room);
                        at = into.filled();
                        want = Math.min(CHUNK_BYTES, block.length - at);
                    } else {
                        block = beyondCap;
                        at = 0;
                        want = 1;
                    }
                }
                // Read outside the lock: the other stream's reader and the caller's accessors go on.
                int read = source.read(block, at, want);
                if (read < 0) {
                    return;
                }
                int accepted;
                synchronized (this) {
                    accepted = admit(read);
                    if (accepted > 0) {
                        into.commit(accepted);
                    }
                }
                deliver(stream, block, at, accepted);
                if (accepted < read) {
                    stop.run();
                    return;
                }
            }
        } catch (IOException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> stream + " closed: " + ErrorDetail.of(e));
        } catch (OutOfMemoryError | RuntimeException e) {
            hostFailure = e;
            stop.run();
        }
    }

    /** Whether nothing more is kept: the cap was exceeded or the host could not hold what came. */
    public boolean stopped() {
        return hostFailure != null || capExceeded();
    }

    /** Whether the command wrote more than the cap (stdout and stderr together). */
    public synchronized boolean capExceeded() {
        return capExceeded;
    }

    /**
     * Why the output must not be returned as the command's result, if it must not: the cap was
     * exceeded, or the host could not hold what came.
     *
     * @param shellLine the command, for the message
     * @param ended     how the backend ended the command, e.g. "was killed"
     */
    public Optional<RuntimeException> refusal(String shellLine, String ended) {
        if (capExceeded()) {
            return Optional.of(ExecRefusals.outputCapExceeded(shellLine, cap, ended));
        }
        Throwable failure = hostFailure;
        if (failure != null) {
            return Optional.of(ExecRefusals.hostCouldNotHold(shellLine, failure));
        }
        return Optional.empty();
    }

    /**
     * The command's result, holding the very blocks its output was read into (no copy). Call it once
     * the streams ended and {@link #refusal} is empty; from then on nothing more is kept, and a
     * second call returns the same result.
     */
    public synchronized ExecResult result(int exitCode, Duration elapsed) {
        if (taken == null) {
            taken = ExecResult.captured(stdout.build(), stderr.build(), exitCode, elapsed);
        }
        return taken;
    }

    /** A copy of the standard output kept so far. */
    public synchronized byte[] stdout() {
        return taken != null ? taken.stdout() : stdout.toByteArray();
    }

    /** A copy of the standard error kept so far. */
    public synchronized byte[] stderr() {
        return taken != null ? taken.stderr() : stderr.toByteArray();
    }

    /** The one cap rule: how much of {@code length} more bytes is kept; past the cap the capture is exceeded. */
    private int admit(int length) {
        assert Thread.holdsLock(this);
        if (taken != null) {
            return 0;
        }
        int accepted = (int) Math.min(room(), length);
        if (accepted < length) {
            capExceeded = true;
        }
        kept += accepted;
        return accepted;
    }

    private long room() {
        return cap - kept;
    }

    private CapturedBytes.Builder builder(ExecStream stream) {
        return stream == ExecStream.STDOUT ? stdout : stderr;
    }

    private void deliver(ExecStream stream, byte[] bytes, int offset, int length) {
        if (length > 0) {
            listener.ifPresent(receiver -> deliver(receiver, backendName, stream,
                    Arrays.copyOfRange(bytes, offset, offset + length)));
        }
    }

    /** The one listener rule: hand it the chunk; a listener that throws is logged and the command goes on. */
    static void deliver(ExecListener receiver, String backendName, ExecStream stream, byte[] chunk) {
        try {
            receiver.onOutput(stream, chunk);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, () -> "backend '" + backendName + "': an exec listener threw, and the "
                    + "command goes on: " + ErrorDetail.of(e));
        }
    }
}
