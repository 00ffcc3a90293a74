package org.sandbox4j.agent;

import java.io.IOException;
import java.io.InputStream;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.spi.ExecCapture;

/**
 * Where the connection's reader puts an exec's output: each {@code OUT} frame's data read from the
 * agent's stream straight into the exec's {@link ExecCapture} (no frame array, no copy), within the
 * credit the exec granted, and a note queued on the exec's call once a stream has a grant's worth
 * of output not yet noted (or the capture stopped), so the exec grants credit back. The agent waits
 * only once a whole window is ungranted, at least one grant's worth more than the exec holds
 * back, so a note is always due then. One note waits at a time.
 *
 * <p>Thread-safe: the reader calls {@link #receive}; the exec's thread the rest.
 */
final class OutputSink {

    /** An OUT payload's fields before its data: u8 stream, u32 length. */
    private static final int FIELDS_BYTES = 1 + 4;
    private static final int STREAMS = 2;

    private final ExecCapture capture;
    private final long window;
    private final long grantBytes;
    /** Per stream (index {@code stream - 1}): what the agent sent that was not granted back yet. */
    private final long[] ungranted = new long[STREAMS];
    /** Per stream: what arrived that the exec has not taken yet. */
    private final long[] arrived = new long[STREAMS];
    /** Read by the reader alone. */
    private final byte[] fields = new byte[FIELDS_BYTES];
    private boolean noteWaiting;
    /** Set once the command is being killed: what still comes is read and dropped, not kept. */
    private boolean dropping;

    /**
     * @param window     the output credit each stream started with (the EXEC's output window)
     * @param grantBytes how much output the exec grants back at once: at most half the window
     */
    OutputSink(ExecCapture capture, long window, long grantBytes) {
        if (grantBytes < 1 || grantBytes > window / 2) {
            throw new IllegalArgumentException("a grant of " + grantBytes + " bytes does not fit a window of " + window);
        }
        this.capture = capture;
        this.window = window;
        this.grantBytes = grantBytes;
    }

    /**
     * Reads one {@code OUT} frame's payload of {@code payloadLength} bytes, its length and credit
     * checked before its data is read. Called by the connection's reader alone.
     *
     * @return whether the exec must be told that output arrived (no note of it waits already)
     * @throws AgentProtocolViolation a malformed frame, or more output than the host granted
     */
    boolean receive(FrameStream frames, int payloadLength) throws IOException {
        if (payloadLength < FIELDS_BYTES) {
            throw new AgentProtocolViolation("an OUT frame of " + payloadLength + " bytes is shorter than its fields");
        }
        frames.readFully(fields, 0, FIELDS_BYTES);
        int stream = fields[0] & 0xff;
        long length = BigEndian.u32(fields, 1);
        if (stream != AgentProtocol.STDOUT && stream != AgentProtocol.STDERR) {
            throw new AgentProtocolViolation("output on stream " + stream);
        }
        if (length > AgentProtocol.OUT_CHUNK_MAX || length > payloadLength - FIELDS_BYTES) {
            throw new AgentProtocolViolation("an OUT frame says " + length + " bytes of output, more than "
                    + Math.min(AgentProtocol.OUT_CHUNK_MAX, payloadLength - FIELDS_BYTES) + " it may or does hold");
        }
        int index = stream - 1;
        boolean keep;
        synchronized (this) {
            if (ungranted[index] + length > window) {
                throw new AgentProtocolViolation("the agent sent more output on stream " + stream + " than the host "
                        + "granted (" + (ungranted[index] + length) + " bytes over a window of " + window + ")");
            }
            ungranted[index] += length;
            keep = !dropping && !capture.stopped();
        }
        long unread = length;
        if (keep) {
            Data data = new Data(frames, length);
            // The capture stops reading at its cap; no stop to run here: the exec sees the capture stopped.
            capture.drain(data, stream == AgentProtocol.STDOUT ? ExecStream.STDOUT : ExecStream.STDERR, () -> { });
            if (data.failure != null) {
                throw data.failure;
            }
            unread = data.left;
        }
        // Past the cap, after a kill, and any trailing bytes (version 1 allows them): read, not kept.
        frames.discard(unread + payloadLength - FIELDS_BYTES - length);
        synchronized (this) {
            arrived[index] += length;
            // Fewer notes, fewer wake-ups of the exec's thread: one per grant, or at once to stop the command.
            if (noteWaiting || (arrived[index] < grantBytes && !capture.stopped())) {
                return false;
            }
            noteWaiting = true;
            return true;
        }
    }

    /** What arrived per stream (index {@code stream - 1}) since the last take; the note is taken with it. */
    synchronized long[] take() {
        long[] taken = arrived.clone();
        java.util.Arrays.fill(arrived, 0);
        noteWaiting = false;
        return taken;
    }

    /** What this sink was made with: how much output the exec grants back at once. */
    long grantBytes() {
        return grantBytes;
    }

    /** Records credit granted back on {@code stream}, before the grant is sent (so the agent never uses it first). */
    synchronized void granted(int stream, long bytes) {
        ungranted[stream - 1] -= bytes;
    }

    /** From now on, output is read and dropped: the command is being killed. */
    synchronized void drop() {
        dropping = true;
    }

    /**
     * One frame's data as a stream for the capture: ends after the data, does not close the agent's
     * stream, and keeps a read's failure for the reader to rethrow (the capture takes a failed read
     * for a process's end, which the agent's stream's is not).
     */
    private static final class Data extends InputStream {
        private final FrameStream frames;
        private long left;
        private IOException failure;

        Data(FrameStream frames, long length) {
            this.frames = frames;
            this.left = length;
        }

        @Override
        public int read(byte[] into, int offset, int length) throws IOException {
            if (left == 0) {
                return -1;
            }
            try {
                int read = frames.readSome(into, offset, (int) Math.min(length, left));
                left -= read;
                return read;
            } catch (IOException e) {
                failure = e;
                throw e;
            }
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public void close() {
            // The agent's stream stays open: it carries every call's frames.
        }
    }
}
