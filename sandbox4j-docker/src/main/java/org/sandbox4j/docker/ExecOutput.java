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

    /** Collects the preamble line from the front of stdout; returns what follows it. */
    private byte[] takePreamble(byte[] payload) {
        for (int i = 0; i < payload.length; i++) {
            if (payload[i] == '\n') {
                preamble.write(payload, 0, i);
                preambleDone = true;
                parseGroup();
                return Arrays.copyOfRange(payload, i + 1, payload.length);
            }
            if (preamble.size() >= GuestScripts.MAX_PREAMBLE_BYTES) {
                break;
            }
            preamble.write(payload[i]);
        }
        if (preamble.size() >= GuestScripts.MAX_PREAMBLE_BYTES) {
            // Not the wrapper's line (the exec failed before the wrapper ran): it is output.
            preambleDone = true;
            byte[] collected = preamble.toByteArray();
            preamble.reset();
            return collected;
        }
        return new byte[0];
    }

    private void parseGroup() {
        String line = preamble.toString(StandardCharsets.US_ASCII);
        if (line.startsWith(GuestScripts.PREAMBLE)) {
            try {
                group = Long.parseLong(line.substring(GuestScripts.PREAMBLE.length()).strip());
            } catch (NumberFormatException notOurs) {
                group = -1;
            }
        }
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

    /** Waits until the stream ends or the cap is passed, whichever comes first, for at most {@code nanos}. */
    boolean awaitEndOrCap(long nanos) throws InterruptedException {
        long deadline = System.nanoTime() + nanos;
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            long slice = Math.min(left, TimeUnit.MILLISECONDS.toNanos(50));
            if (awaitCompletion(slice, TimeUnit.NANOSECONDS)) {
                return true;
            }
            if (capExceeded()) {
                return true;
            }
        }
    }

    synchronized byte[] stdout() {
        return stdout.toByteArray();
    }

    synchronized byte[] stderr() {
        return stderr.toByteArray();
    }
}
