package org.sandbox4j.docker;

import com.github.dockerjava.api.async.ResultCallback;
import com.github.dockerjava.api.model.Frame;
import com.github.dockerjava.api.model.StreamType;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.sandbox4j.core.ExecListener;
import org.sandbox4j.core.ExecStream;

/**
 * Receives one exec's frames: strips the wrapper's preamble (its pid, which names the exec's
 * process group), keeps stdout and stderr apart, forwards chunks to the listener, and stops
 * keeping anything once both streams together pass the cap, so host memory stays bounded.
 */
final class ExecOutput extends ResultCallback.Adapter<Frame> {

    private final long cap;
    private final Optional<ExecListener> listener;
    private final boolean expectPreamble;
    private final ByteArrayOutputStream stdout = new ByteArrayOutputStream();
    private final ByteArrayOutputStream stderr = new ByteArrayOutputStream();
    private final ByteArrayOutputStream preamble = new ByteArrayOutputStream();
    private final CountDownLatch capExceeded = new CountDownLatch(1);
    private boolean preambleDone;
    private long kept;
    private volatile long group = -1;

    ExecOutput(long cap, Optional<ExecListener> listener, boolean expectPreamble) {
        this.cap = cap;
        this.listener = listener;
        this.expectPreamble = expectPreamble;
        this.preambleDone = !expectPreamble;
    }

    /**
     * Counted down when the stream ends, fails, or passes the cap. docker-java's own
     * {@code awaitCompletion(timeout)} closes the stream when the timeout passes, so it cannot
     * be waited on in slices.
     */
    private final CountDownLatch attention = new CountDownLatch(1);
    private final CountDownLatch ended = new CountDownLatch(1);
    private volatile Throwable failure;

    @Override
    public void onComplete() {
        ended.countDown();
        attention.countDown();
        super.onComplete();
    }

    @Override
    public void onError(Throwable error) {
        failure = error;
        ended.countDown();
        attention.countDown();
        super.onError(error);
    }

    @Override
    public synchronized void onNext(Frame frame) {
        byte[] payload = frame.getPayload();
        if (payload == null || payload.length == 0 || capExceeded.getCount() == 0) {
            return;
        }
        StreamType type = frame.getStreamType();
        if (type == StreamType.STDOUT || type == StreamType.RAW) {
            if (!preambleDone) {
                payload = takePreamble(payload);
            }
            keep(ExecStream.STDOUT, stdout, payload);
        } else if (type == StreamType.STDERR) {
            keep(ExecStream.STDERR, stderr, payload);
        }
    }

    /**
     * Collects the preamble line from the front of stdout and returns what follows it. A first
     * line that is not the wrapper's (the engine failed to start it and said why) is output.
     */
    private byte[] takePreamble(byte[] payload) {
        for (int i = 0; i < payload.length; i++) {
            if (payload[i] == '\n' || preamble.size() + i >= GuestScripts.MAX_PREAMBLE_BYTES) {
                boolean lineEnded = payload[i] == '\n';
                preambleDone = true;
                if (lineEnded) {
                    byte[] line = concat(preamble.toByteArray(), Arrays.copyOfRange(payload, 0, i));
                    if (parseGroup(new String(line, StandardCharsets.US_ASCII))) {
                        preamble.reset();
                        return Arrays.copyOfRange(payload, i + 1, payload.length);
                    }
                }
                byte[] all = concat(preamble.toByteArray(), payload);
                preamble.reset();
                return all;
            }
        }
        preamble.writeBytes(payload);
        return new byte[0];
    }

    private boolean parseGroup(String line) {
        if (!line.startsWith(GuestScripts.PREAMBLE)) {
            return false;
        }
        try {
            group = Long.parseLong(line.substring(GuestScripts.PREAMBLE.length()).strip());
            return true;
        } catch (NumberFormatException notOurs) {
            return false;
        }
    }

    private static byte[] concat(byte[] first, byte[] second) {
        byte[] joined = Arrays.copyOf(first, first.length + second.length);
        System.arraycopy(second, 0, joined, first.length, second.length);
        return joined;
    }

    private void keep(ExecStream stream, ByteArrayOutputStream into, byte[] payload) {
        if (payload.length == 0) {
            return;
        }
        long room = cap - kept;
        int taken = (int) Math.min(room, payload.length);
        if (taken > 0) {
            byte[] chunk = taken == payload.length ? payload : Arrays.copyOf(payload, taken);
            into.writeBytes(chunk);
            kept += taken;
            listener.ifPresent(receiver -> receiver.onOutput(stream, chunk));
        }
        if (taken < payload.length) {
            capExceeded.countDown();
            attention.countDown();
        }
    }

    /** The preamble a wrapper never finished (an exec that printed a partial line and ended) is output. */
    synchronized void flushPreamble() {
        if (!preambleDone && preamble.size() > 0) {
            preambleDone = true;
            byte[] collected = preamble.toByteArray();
            preamble.reset();
            keep(ExecStream.STDOUT, stdout, collected);
        }
    }

    /** The exec's process group (the wrapper's pid), when its preamble arrived. */
    OptionalLong group() {
        long known = group;
        return known > 0 ? OptionalLong.of(known) : OptionalLong.empty();
    }

    boolean capExceeded() {
        return capExceeded.getCount() == 0;
    }

    /**
     * Waits until the stream ends or the cap is passed, for at most {@code nanos}.
     *
     * @return whether either happened
     * @throws RuntimeException the stream's failure, when it failed
     */
    boolean awaitEndOrCap(long nanos) throws InterruptedException {
        boolean happened = attention.await(nanos, TimeUnit.NANOSECONDS);
        Throwable failed = failure;
        if (failed != null && !capExceeded()) {
            throw failed instanceof RuntimeException runtime ? runtime : new IllegalStateException(failed);
        }
        return happened;
    }

    synchronized byte[] stdout() {
        return stdout.toByteArray();
    }

    synchronized byte[] stderr() {
        return stderr.toByteArray();
    }
}
