package org.sandbox4j.sbx;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.sandbox4j.core.spi.ProcessPump;

/**
 * How a started process's {@code sbx exec} client is known to have started its command: its stderr
 * is read, a line at a time, up to the wrapper's marker line ({@link SbxExecRun.Ending}'s rule), and
 * not a byte further, so everything after it is the command's own stderr for the handle to read.
 * What came before the marker is sbx's or the wrapper's, bounded as an exec's preamble is.
 */
final class SbxProcessStart {

    /**
     * @param ending   what the marker line said ({@link SbxExecRun.Ending#NO_NONCE}: stderr ended without one)
     * @param preamble what sbx or the wrapper said before it
     */
    record Seen(SbxExecRun.Ending ending, String preamble) {
    }

    private SbxProcessStart() {
    }

    /**
     * Reads {@code client}'s stderr up to the marker line of {@code nonce}, for at most {@code deadline};
     * empty when it passed first.
     */
    static Optional<Seen> await(Process client, String nonce, Duration deadline) throws InterruptedException {
        CompletableFuture<Seen> seen = new CompletableFuture<>();
        ProcessPump.daemon("start", () -> seen.complete(read(client.getErrorStream(), nonce))).start();
        try {
            return Optional.of(seen.get(deadline.toNanos(), TimeUnit.NANOSECONDS));
        } catch (TimeoutException late) {
            return Optional.empty();
        } catch (ExecutionException e) {
            return Optional.of(new Seen(SbxExecRun.Ending.NO_NONCE, ""));
        }
    }

    /**
     * One line at a time, so nothing after the marker is taken from the stream (the process's
     * stderr is buffered, and its next reader gets what the buffer holds). A line longer than the
     * preamble's bound is no marker; it is dropped past the bound.
     */
    private static Seen read(InputStream stderr, String nonce) {
        ByteArrayOutputStream preamble = new ByteArrayOutputStream();
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        try {
            for (int b = stderr.read(); b >= 0; b = stderr.read()) {
                if (line.size() < SbxExecRun.MAX_PREAMBLE_BYTES) {
                    line.write(b);
                }
                if (b != '\n') {
                    continue;
                }
                byte[] whole = line.toByteArray();
                Optional<SbxExecRun.Ending> marker = SbxExecRun.Ending.ofMarkerLine(nonce, whole);
                if (marker.isPresent()) {
                    return new Seen(marker.get(), preamble.toString(StandardCharsets.UTF_8));
                }
                preamble.write(whole, 0, Math.max(0, Math.min(whole.length,
                        SbxExecRun.MAX_PREAMBLE_BYTES - preamble.size())));
                line.reset();
            }
        } catch (IOException broken) {
            // The client ended under the reader: what it said is kept.
        }
        preamble.write(line.toByteArray(), 0, Math.max(0, Math.min(line.size(),
                SbxExecRun.MAX_PREAMBLE_BYTES - preamble.size())));
        return new Seen(SbxExecRun.Ending.NO_NONCE, preamble.toString(StandardCharsets.UTF_8));
    }
}
