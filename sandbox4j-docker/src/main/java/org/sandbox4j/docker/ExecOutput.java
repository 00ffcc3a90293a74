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
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.spi.ExecCapture;

/**
 * Receives one exec's frames: takes the wrapper's preamble (its pid, which names the exec's
 * process group, and its {@link GuestScripts.Setup} word) from the front of stdout and hands the
 * rest to an {@link ExecCapture}, which keeps the streams under their shared cap and feeds the
 * listener. Where a wrapped exec's stdout does not begin with the preamble, the wrapper never ran:
 * that text is the engine's (an OCI runtime's failure), kept apart and bounded, never the command's.
 * A started process's frames go to a {@link Sink} instead ({@link #process}).
 */
final class ExecOutput extends ResultCallback.Adapter<Frame> {

    /** How much of what the engine said in place of a preamble is kept for the message. */
    static final int MAX_ENGINE_TEXT_BYTES = 1024;

    /** Where what follows the preamble goes. */
    interface Sink {
        /** Takes one frame's bytes (it may wait: that is back-pressure); false once no more are wanted. */
        boolean offer(ExecStream stream, byte[] payload);

        /** Whether nothing more is wanted. */
        boolean stopped();

        /** The stream ended or failed: no more frames come. */
        default void ended() {
        }
    }

    /** An exec's capture; null for a started process, whose output goes to its {@link Sink}. */
    private final ExecCapture capture;
    private final Sink sink;
    private final boolean expectPreamble;
    private final ByteArrayOutputStream firstLine = new ByteArrayOutputStream();
    private final ByteArrayOutputStream engineText = new ByteArrayOutputStream();
    /** Whether the front of stdout has been decided: the preamble taken, or found missing. */
    private boolean preambleDecided;
    private volatile Optional<GuestScripts.Setup> setup = Optional.empty();
    private volatile long group = -1;

    /**
     * Counted down when the stream ends, fails, or passes the cap. docker-java's own
     * {@code awaitCompletion(timeout)} closes the stream when the timeout passes, so it cannot
     * be waited on in slices.
     */
    private final CountDownLatch attention = new CountDownLatch(1);
    /** Counted down once the front of stdout is decided, or the stream ended without it. */
    private final CountDownLatch decided = new CountDownLatch(1);
    private volatile Throwable failure;

    /**
     * @param expectPreamble whether the exec runs under {@link GuestScripts#WRAPPER}; an internal
     *                       command's stdout is all its own
     */
    ExecOutput(ExecCapture capture, boolean expectPreamble) {
        this(capture, new Sink() {
            @Override
            public boolean offer(ExecStream stream, byte[] payload) {
                return capture.offer(stream, payload);
            }

            @Override
            public boolean stopped() {
                return capture.stopped();
            }
        }, expectPreamble);
    }

    private ExecOutput(ExecCapture capture, Sink sink, boolean expectPreamble) {
        this.capture = capture;
        this.sink = sink;
        this.expectPreamble = expectPreamble;
        this.preambleDecided = !expectPreamble;
        if (!expectPreamble) {
            decided.countDown();
        }
    }

    /**
     * The frames of a started process (under {@link GuestScripts#PROCESS_WRAPPER}): after the
     * preamble, to {@code sink}; before it, stderr too is the engine's or the wrapper's text.
     */
    static ExecOutput process(Sink sink) {
        return new ExecOutput(null, sink, true);
    }

    @Override
    public void onComplete() {
        attention.countDown();
        decided.countDown();
        sink.ended();
        super.onComplete();
    }

    @Override
    public void onError(Throwable error) {
        failure = error;
        attention.countDown();
        decided.countDown();
        sink.ended();
        super.onError(error);
    }

    @Override
    public synchronized void onNext(Frame frame) {
        byte[] payload = frame.getPayload();
        if (payload == null || payload.length == 0 || stopped()) {
            return;
        }
        StreamType type = frame.getStreamType();
        boolean stdout = type == StreamType.STDOUT || type == StreamType.RAW;
        if (!stdout && type != StreamType.STDERR) {
            return;
        }
        if (stdout && !preambleDecided) {
            payload = takePreamble(payload);
            if (preambleDecided) {
                // Told only now that the setup word is known.
                decided.countDown();
            }
        }
        // Without the wrapper's word, nothing is the command's: stdout after a missing preamble, and
        // (for a started process, whose command runs only after its preamble) stderr too.
        boolean beforeTheCommand = setup.isEmpty() && (expectPreamble && preambleDecided || capture == null);
        if (beforeTheCommand) {
            keepEngineText(payload);
            return;
        }
        keep(stdout ? ExecStream.STDOUT : ExecStream.STDERR, payload);
    }

    private boolean stopped() {
        return sink.stopped();
    }

    private void keep(ExecStream stream, byte[] payload) {
        if (payload.length == 0) {
            return;
        }
        if (!sink.offer(stream, payload)) {
            attention.countDown();
        }
    }

    /**
     * Collects the preamble line from the front of stdout and returns what follows it. A first
     * line that is not the wrapper's (longer than a preamble, or another text) is the engine's.
     */
    private byte[] takePreamble(byte[] payload) {
        for (int i = 0; i < payload.length; i++) {
            if (payload[i] == '\n' || firstLine.size() + i >= GuestScripts.MAX_PREAMBLE_BYTES) {
                preambleDecided = true;
                if (payload[i] == '\n') {
                    firstLine.write(payload, 0, i);
                    if (parsePreamble(new String(firstLine.toByteArray(), StandardCharsets.US_ASCII))) {
                        return Arrays.copyOfRange(payload, i + 1, payload.length);
                    }
                    firstLine.write('\n');
                    keepEngineText(firstLine.toByteArray());
                    return Arrays.copyOfRange(payload, i + 1, payload.length);
                }
                keepEngineText(firstLine.toByteArray());
                return payload;
            }
        }
        firstLine.writeBytes(payload);
        return new byte[0];
    }

    /** {@code sandbox4j-exec PID WORD}, exactly; anything else is not the wrapper's. */
    private boolean parsePreamble(String line) {
        if (!line.startsWith(GuestScripts.PREAMBLE)) {
            return false;
        }
        String[] parts = line.substring(GuestScripts.PREAMBLE.length()).split(" ", -1);
        if (parts.length != 2 || parts[0].isEmpty() || !parts[0].chars().allMatch(Character::isDigit)) {
            return false;
        }
        Optional<GuestScripts.Setup> said = GuestScripts.Setup.of(parts[1]);
        if (said.isEmpty()) {
            return false;
        }
        try {
            group = Long.parseLong(parts[0]);
        } catch (NumberFormatException tooLong) {
            return false;
        }
        setup = said;
        return true;
    }

    private void keepEngineText(byte[] text) {
        engineText.write(text, 0, Math.min(text.length, MAX_ENGINE_TEXT_BYTES - engineText.size()));
    }

    /** Ends the preamble a wrapper never finished: a partial first line is the engine's text. */
    synchronized void finish() {
        if (!preambleDecided) {
            preambleDecided = true;
            keepEngineText(firstLine.toByteArray());
        }
        decided.countDown();
    }

    /** Waits at most {@code nanos} for the front of stdout to be decided (or the stream to end); whether it was. */
    boolean awaitPreamble(long nanos) throws InterruptedException {
        return decided.await(nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * What the wrapper said it did; empty for a wrapped exec whose wrapper never ran (the engine
     * said why in {@link #engineText}).
     */
    Optional<GuestScripts.Setup> setup() {
        return setup;
    }

    /** What the engine wrote in place of the wrapper's preamble, and any stderr, for a message. */
    synchronized String engineText() {
        String said = new String(engineText.toByteArray(), StandardCharsets.UTF_8);
        String stderr = capture == null ? "" : new String(capture.stderr(), StandardCharsets.UTF_8);
        return (said + " " + stderr).strip();
    }

    /** The exec's process group (the wrapper's pid), when its preamble arrived. */
    OptionalLong group() {
        long known = group;
        return known > 0 ? OptionalLong.of(known) : OptionalLong.empty();
    }

    /**
     * Why the output must not be returned: the cap was exceeded, or the host could not hold it.
     *
     * @param ended how the backend ended the command
     */
    Optional<RuntimeException> refusal(String shellLine, String ended) {
        return capture.refusal(shellLine, ended);
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
        if (failed != null && !stopped()) {
            throw failed instanceof RuntimeException runtime ? runtime : new IllegalStateException(failed);
        }
        return happened;
    }

    byte[] stdout() {
        return capture.stdout();
    }

    /** Whether more output came than the cap allows (what was kept stops at the cap). */
    boolean capExceeded() {
        return capture.capExceeded();
    }

    byte[] stderr() {
        return capture.stderr();
    }
}
