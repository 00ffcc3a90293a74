package org.sandbox4j.agent;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/**
 * Reads frames from the agent's stream, checking the length, magic and version of each before its
 * payload is allocated. Not thread-safe: the connection's one reader uses it.
 */
final class FrameStream {

    private final InputStream in;
    private final byte[] prefix = new byte[AgentProtocol.PREFIX_BYTES];

    FrameStream(InputStream in) {
        this.in = in;
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
        byte[] payload = new byte[payloadLength];
        readFully(payload, 0, payloadLength);
        return new Frame(prefix[7] & 0xff, (int) BigEndian.u32(prefix, 8), payload);
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

    private void readFully(byte[] into, int offset, int length) throws IOException {
        int done = 0;
        while (done < length) {
            int read = in.read(into, offset + done, length - done);
            if (read < 0) {
                throw new EOFException("the agent's stream ended");
            }
            done += read;
        }
    }
}
