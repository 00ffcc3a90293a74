package org.sandbox4j.agent;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/**
 * One frame of the egress tunnel: the stream it is about (an unsigned 32-bit id, 0 for the
 * session), its type and its payload, which the frame owns.
 */
record EgressFrame(long stream, int type, byte[] payload) {

    /** Encodes a frame, header and payload in one array, for one write. */
    static byte[] encode(long stream, int type, byte[] payload, int offset, int length) {
        if (stream < 0 || stream > 0xffff_ffffL) {
            throw new IllegalArgumentException("a stream id is an unsigned 32-bit number, not " + stream);
        }
        if (length < 0 || length > EgressProtocol.DATA_MAX) {
            throw new IllegalArgumentException("a tunnel payload holds 0 to " + EgressProtocol.DATA_MAX
                    + " bytes, not " + length);
        }
        byte[] frame = new byte[EgressProtocol.HEADER_BYTES + length];
        BigEndian.putU32(frame, 0, stream);
        frame[4] = (byte) type;
        BigEndian.putU32(frame, 5, length);
        System.arraycopy(payload, offset, frame, EgressProtocol.HEADER_BYTES, length);
        return frame;
    }

    static byte[] encode(long stream, int type, byte[] payload) {
        return encode(stream, type, payload, 0, payload.length);
    }

    /** A HELLO payload: magic, version, nonce. */
    static byte[] hello(int version, int nonce) {
        byte[] payload = new byte[EgressProtocol.HELLO_BYTES];
        BigEndian.putU32(payload, 0, EgressProtocol.MAGIC);
        BigEndian.putU16(payload, 4, version);
        BigEndian.putU32(payload, 6, nonce);
        return payload;
    }

    static byte[] credit(int bytes) {
        byte[] payload = new byte[EgressProtocol.CREDIT_BYTES];
        BigEndian.putU32(payload, 0, bytes);
        return payload;
    }

    /**
     * Reads tunnel frames, checking each length before its payload is allocated. Not thread-safe:
     * the tunnel's one reader uses it.
     */
    static final class Reader {

        private final InputStream in;
        private final byte[] header = new byte[EgressProtocol.HEADER_BYTES];

        Reader(InputStream in) {
            this.in = in;
        }

        /**
         * The next frame.
         *
         * @throws AgentProtocolViolation a length beyond {@link EgressProtocol#DATA_MAX}
         * @throws EOFException           the stream ended
         */
        EgressFrame read() throws IOException {
            readFully(header, 0, header.length);
            long length = BigEndian.u32(header, 5);
            if (length > EgressProtocol.DATA_MAX) {
                throw new AgentProtocolViolation("a tunnel frame claims " + length + " bytes, more than "
                        + EgressProtocol.DATA_MAX);
            }
            byte[] payload = new byte[(int) length];
            readFully(payload, 0, payload.length);
            return new EgressFrame(BigEndian.u32(header, 0), header[4] & 0xff, payload);
        }

        /**
         * The next HELLO, skipping byte by byte whatever precedes it: before the handshake the port
         * may hold the tail of an older session, or frames from before the guest's reset.
         *
         * @throws EOFException the stream ended
         */
        EgressFrame readHello() throws IOException {
            byte[] window = new byte[EgressProtocol.HEADER_BYTES + EgressProtocol.HELLO_BYTES];
            readFully(window, 0, window.length);
            while (!isHello(window)) {
                System.arraycopy(window, 1, window, 0, window.length - 1);
                readFully(window, window.length - 1, 1);
            }
            return new EgressFrame(EgressProtocol.SESSION, EgressProtocol.HELLO,
                    java.util.Arrays.copyOfRange(window, EgressProtocol.HEADER_BYTES, window.length));
        }

        private static boolean isHello(byte[] window) {
            return BigEndian.u32(window, 0) == EgressProtocol.SESSION && (window[4] & 0xff) == EgressProtocol.HELLO
                    && BigEndian.u32(window, 5) == EgressProtocol.HELLO_BYTES
                    && BigEndian.u32(window, EgressProtocol.HEADER_BYTES) == EgressProtocol.MAGIC;
        }

        private void readFully(byte[] into, int offset, int length) throws IOException {
            int done = 0;
            while (done < length) {
                int read = in.read(into, offset + done, length - done);
                if (read < 0) {
                    throw new EOFException("the egress port's stream ended");
                }
                done += read;
            }
        }
    }
}
