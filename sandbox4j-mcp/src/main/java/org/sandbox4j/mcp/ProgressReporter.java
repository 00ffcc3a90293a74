package org.sandbox4j.mcp;

import java.io.ByteArrayOutputStream;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;

import org.sandbox4j.core.ExecListener;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.spi.ErrorDetail;

/**
 * Sends a call's program output as {@code notifications/progress} while it runs, for a request
 * that carried a {@code progressToken}: the chunks that arrived since the last notification,
 * coalesced, at most every {@link #FLUSH_INTERVAL}, at most {@link #MAX_MESSAGE_BYTES} of them (the
 * rest is counted, not kept: the full output is in the result), and a notification without a
 * message every {@link #HEARTBEAT_INTERVAL} while the program prints nothing, so a client whose
 * request timeout is reset by progress (the TypeScript SDK's {@code resetTimeoutOnProgress}) waits
 * for a program that runs longer than that timeout. The backend's thread only appends to a
 * bounded buffer; a scheduler thread sends.
 */
final class ProgressReporter implements ExecListener, AutoCloseable {

    static final Duration FLUSH_INTERVAL = Duration.ofMillis(250);

    static final Duration HEARTBEAT_INTERVAL = Duration.ofSeconds(10);

    /** The most output one notification carries, and the most held between two. */
    static final int MAX_MESSAGE_BYTES = 8 * 1024;

    /** The longest a UTF-8 sequence runs: a flush holds back an incomplete one for the next. */
    private static final int MAX_UTF8_SEQUENCE = 4;

    private static final ScheduledExecutorService SENDER = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "sandbox4j-mcp-progress");
        thread.setDaemon(true);
        return thread;
    });

    private final Object progressToken;
    private final Consumer<ProgressNotification> send;
    private final BooleanSupplier wanted;
    /** Held while a notification goes out, so none goes out after {@link #close()} returns (after the result). */
    private final Object sending = new Object();
    private boolean closed;
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
    private long dropped;
    private long sequence;
    private long lastSentNanos = System.nanoTime();
    private final ScheduledFuture<?> ticks;

    private ProgressReporter(Object progressToken, Consumer<ProgressNotification> send, BooleanSupplier wanted) {
        this.progressToken = progressToken;
        this.send = send;
        this.wanted = wanted;
        long period = FLUSH_INTERVAL.toMillis();
        this.ticks = SENDER.scheduleWithFixedDelay(this::tick, period, period, TimeUnit.MILLISECONDS);
    }

    /** Starts reporting for {@code progressToken} through {@code send}; close it when the call is over. */
    static ProgressReporter start(Object progressToken, Consumer<ProgressNotification> send) {
        return start(progressToken, send, () -> true);
    }

    /**
     * As {@link #start(Object, Consumer)}, sending only while {@code wanted} says so (a cancelled
     * call's client no longer knows its token, and reports a notification for it as an error).
     */
    static ProgressReporter start(Object progressToken, Consumer<ProgressNotification> send, BooleanSupplier wanted) {
        return new ProgressReporter(Objects.requireNonNull(progressToken, "progressToken"),
                Objects.requireNonNull(send, "send"), Objects.requireNonNull(wanted, "wanted"));
    }

    @Override
    public synchronized void onOutput(ExecStream stream, byte[] chunk) {
        int room = MAX_MESSAGE_BYTES - pending.size();
        int kept = Math.min(room, chunk.length);
        pending.write(chunk, 0, kept);
        dropped += chunk.length - kept;
    }

    private void tick() {
        synchronized (sending) {
            if (!closed && wanted.getAsBoolean()) {
                sendPending();
            }
        }
    }

    private void sendPending() {
        ProgressNotification notification;
        synchronized (this) {
            boolean heartbeatDue = System.nanoTime() - lastSentNanos >= HEARTBEAT_INTERVAL.toNanos();
            if (pending.size() == 0 && dropped == 0 && !heartbeatDue) {
                return;
            }
            notification = new ProgressNotification(progressToken, ++sequence, null, takeMessage());
            lastSentNanos = System.nanoTime();
        }
        try {
            send.accept(notification);
        } catch (RuntimeException failure) {
            // The client went away or the stream closed: the call's result (or its cancellation) still decides.
            ToolBridge.LOG.log(Level.DEBUG, () -> "a progress notification could not be sent: "
                    + ErrorDetail.of(failure));
        }
    }

    /** The pending output as text (null when there is none), an incomplete last character kept back. */
    private String takeMessage() {
        byte[] bytes = pending.toByteArray();
        int complete = completeUtf8Length(bytes);
        pending.reset();
        pending.write(bytes, complete, bytes.length - complete);
        StringBuilder message = new StringBuilder(new String(bytes, 0, complete, StandardCharsets.UTF_8));
        if (dropped > 0) {
            message.append("\n[").append(dropped).append(" bytes of output not shown here; the result has them]\n");
            dropped = 0;
        }
        return message.isEmpty() ? null : message.toString();
    }

    /** How many leading bytes end on a character boundary: a sequence cut by the chunking waits for its rest. */
    static int completeUtf8Length(byte[] bytes) {
        for (int back = 1; back <= Math.min(MAX_UTF8_SEQUENCE, bytes.length); back++) {
            int b = bytes[bytes.length - back] & 0xff;
            if ((b & 0xc0) == 0x80) {
                continue; // a continuation byte: look further back for the lead
            }
            int length = b < 0x80 ? 1 : b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
            return length > back ? bytes.length - back : bytes.length;
        }
        return bytes.length;
    }

    /**
     * Stops the notifications, waiting for one going out; what is still pending is not sent (the
     * result carries all of it).
     */
    @Override
    public void close() {
        ticks.cancel(false);
        synchronized (sending) {
            closed = true;
        }
    }
}
