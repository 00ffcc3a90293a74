package org.sandbox4j.agent;

/**
 * The numbers of the egress tunnel, version 1 ({@code PROTOCOL.md}, "The egress tunnel"): its own
 * framing on its own port, {@code u32 stream, u8 type, u32 length, payload}. Defined once; the
 * agent's copy is in {@code s4j-agent.c}.
 */
final class EgressProtocol {

    static final int VERSION = 1;
    /** "S4EG", the first field of a HELLO. */
    static final int MAGIC = 0x53344547;
    /** Stream, type, length: what precedes every payload. */
    static final int HEADER_BYTES = 9;
    /** A HELLO's payload: magic, version, nonce. */
    static final int HELLO_BYTES = 10;
    static final int CREDIT_BYTES = 4;
    /** The largest payload of any frame (a DATA chunk). */
    static final int DATA_MAX = 64 * 1024;
    /** The bytes each direction of a stream may have in flight before the receiver grants more. */
    static final int WINDOW = 256 * 1024;
    /** The streams the guest may have open at once. */
    static final int MAX_STREAMS = 64;
    /** The stream that is about the session itself (HELLO, and CLOSE as "session reset"). */
    static final long SESSION = 0;

    static final int HELLO = 1;
    static final int OPEN = 2;
    static final int DATA = 3;
    static final int EOF = 4;
    static final int CLOSE = 5;
    static final int CREDIT = 6;

    private EgressProtocol() {
    }

    static String typeName(int type) {
        switch (type) {
            case HELLO: return "HELLO";
            case OPEN: return "OPEN";
            case DATA: return "DATA";
            case EOF: return "EOF";
            case CLOSE: return "CLOSE";
            case CREDIT: return "CREDIT";
            default: return "type " + type;
        }
    }
}
