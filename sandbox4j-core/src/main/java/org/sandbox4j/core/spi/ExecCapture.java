package org.sandbox4j.core.spi;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;
import java.util.Optional;
import org.sandbox4j.core.ExecListener;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecStream;

/**
 * One exec's output as it arrives, for every backend: stdout and stderr kept apart under the one
 * cap they share ({@link ExecOptions#outputCapBytes()}; nothing is kept past it), each kept chunk
 * handed to the caller's listener (a listener that throws is logged and the command goes on), and
 * a reader's failure to hold what came recorded so no result is passed off as whole. Safe to feed
 * from several threads.
 *
 * <p>A backend that reads streams uses {@link #drain}; one that is handed frames uses
 * {@link #offer}. Either way {@link #refusal} says afterwards whether the output may be returned.
 */
public final class ExecCapture {

    /** The size a reader reads at once. */
    public static final int CHUNK_BYTES = 8192;

    private static final System.Logger LOG = System.getLogger(ExecCapture.class.getName());

    private final long cap;
    private final Optional<ExecListener> listener;
    private final String backendName;
    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    private long kept;
    private boolean capExceeded;
    private volatile Throwable hostFailure;

    public ExecCapture(ExecOptions options, String backendName) {
        this.cap = options.outputCapBytes();
        this.listener = options.listener();
        this.backendName = backendName;
    }

    /**
     * Keeps as much of {@code chunk[offset, offset + length)} as the shared cap still allows and
     * hands that to the listener.
     *
     * @return whether all of it fit; {@code false} marks the cap exceeded or the host's memory
     *         exhausted (stop the command)
     */
    public boolean offer(ExecStream stream, byte[] chunk, int offset, int length) {
        byte[] taken;
        try {
            synchronized (this) {
                long room = cap - kept;
                int accepted = (int) Math.min(room, length);
                if (accepted < length) {
                    capExceeded = true;
                }
                if (accepted <= 0) {
                    return accepted == length;
                }
                taken = Arrays.copyOfRange(chunk, offset, offset + accepted);
                (stream == ExecStream.STDOUT ? stdout : stderr).writeBytes(taken);
                kept += accepted;
            }
        } catch (OutOfMemoryError exhausted) {
            // Keeping more was impossible: the command must be stopped, and nothing returned as whole.
            hostFailure = exhausted;
            return false;
        }
        deliver(stream, taken);
        return taken.length == length;
    }

    /** {@link #offer(ExecStream, byte[], int, int)} of a whole array. */
    public boolean offer(ExecStream stream, byte[] chunk) {
        return offer(stream, chunk, 0, chunk.length);
    }

    /**
     * Reads {@code source} until it ends or the cap is exceeded, then closes it. A read that fails
     * (the process was killed under the reader) ends the read; what was read is kept. When the cap
     * is exceeded or the host cannot hold what came, {@code stop} runs, so the command does not
     * run on unread (or die of SIGPIPE).
     */
    public void drain(InputStream source, ExecStream stream, Runnable stop) {
        byte[] chunk = new byte[CHUNK_BYTES];
        try (source) {
            int read;
            while ((read = source.read(chunk)) >= 0) {
                if (!offer(stream, chunk, 0, read)) {
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

    public synchronized byte[] stdout() {
        return stdout.toByteArray();
    }

    public synchronized byte[] stderr() {
        return stderr.toByteArray();
    }

    private void deliver(ExecStream stream, byte[] chunk) {
        listener.ifPresent(receiver -> deliver(receiver, backendName, stream, chunk));
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
