package org.sandbox4j.agent;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/**
 * Reads frames from the agent's stream, checking the length, magic and version of each before its
 * payload is allocated. Not thread-safe: the connection's one reader uses it.
 */
final class FrameStream {

    private static final int DISCARD_CHUNK_BYTES = 8 * 1024;

    private final InputStream in;
    private final byte[] prefix = new byte[AgentProtocol.PREFIX_BYTES];
    /** Where dropped payload bytes land: small, a drop is rare (output past a cap or after a kill). */
    private final byte[] discarded = new byte[DISCARD_CHUNK_BYTES];

    FrameStream(InputStream in) {
        this.in = in;
    }

    /** A frame's prefix, checked: its type, the request id it is about, and how long its payload is. */
    record Header(int type, int id, int payloadLength) {
    }

    /**
     * The next frame.
     *
     * @param resync whether a prefix that is not a frame's is skipped byte by byte until one is
     *               (before the handshake: the stream may start mid-frame after a restore), or is a
     *               violation (after it)
     * @throws AgentProtocolViolation a frame the protocol does not allow
     * @throws EOFException           the stream ended
     */
    Frame read(boolean resync) throws IOException {
        return payload(header(resync));
    }

    /**
     * The next frame's prefix, leaving its payload unread: the caller reads exactly
     * {@link Header#payloadLength()} bytes next, with {@link #payload} or {@link #readSome}.
     *
     * @param resync as for {@link #read}
     */
    Header header(boolean resync) throws IOException {
        readFully(prefix, 0, prefix.length);
        while (!plausible(prefix)) {
            if (!resync) {
                throw new AgentProtocolViolation("a frame header is malformed (length " + BigEndian.u32(prefix, 0)
                        + ", magic 0x" + Integer.toHexString(BigEndian.u16(prefix, 4)) + ", version "
                        + (prefix[6] & 0xff) + "): the stream lost sync or the peer is not a version-"
                        + AgentProtocol.VERSION + " agent");
            }
            System.arraycopy(prefix, 1, prefix, 0, prefix.length - 1);
            readFully(prefix, prefix.length - 1, 1);
        }
        int payloadLength = (int) (BigEndian.u32(prefix, 0) - AgentProtocol.HEADER_BYTES);
        return new Header(prefix[7] & 0xff, (int) BigEndian.u32(prefix, 8), payloadLength);
    }

    /** The whole frame {@code header} began, its payload read into an array of its own. */
    Frame payload(Header header) throws IOException {
        byte[] payload = new byte[header.payloadLength()];
        readFully(payload, 0, payload.length);
        return new Frame(header.type(), header.id(), payload);
    }

    /** Reads between 1 and {@code length} bytes of the current payload into {@code into}. */
    int readSome(byte[] into, int offset, int length) throws IOException {
        int read = in.read(into, offset, length);
        if (read < 0) {
            throw new EOFException("the agent's stream ended");
        }
        return read;
    }

    /** Reads exactly {@code length} bytes of the current payload into {@code into}. */
    void readFully(byte[] into, int offset, int length) throws IOException {
        int done = 0;
        while (done < length) {
            done += readSome(into, offset + done, length - done);
        }
    }

    /** Reads and drops {@code length} bytes of the current payload. */
    void discard(long length) throws IOException {
        long left = length;
        while (left > 0) {
            left -= readSome(discarded, 0, (int) Math.min(discarded.length, left));
        }
    }

    /** Encodes one frame, prefix and payload in one array, for one write. */
    static byte[] encode(int type, int id, byte[] payload) {
        byte[] frame = new byte[AgentProtocol.PREFIX_BYTES + payload.length];
        BigEndian.putU32(frame, 0, AgentProtocol.HEADER_BYTES + payload.length);
        BigEndian.putU16(frame, 4, AgentProtocol.MAGIC);
        frame[6] = (byte) AgentProtocol.VERSION;
        frame[7] = (byte) type;
        BigEndian.putU32(frame, 8, id);
        System.arraycopy(payload, 0, frame, AgentProtocol.PREFIX_BYTES, payload.length);
        return frame;
    }

    private static boolean plausible(byte[] header) {
        long length = BigEndian.u32(header, 0);
        return length >= AgentProtocol.HEADER_BYTES && length <= AgentProtocol.HEADER_BYTES + AgentProtocol.MAX_PAYLOAD
                && BigEndian.u16(header, 4) == AgentProtocol.MAGIC && (header[6] & 0xff) == AgentProtocol.VERSION;
    }
}
