package org.sandbox4j.agent;

/**
 * The unsigned big-endian integers both wire formats put in their headers (the agent's frames and
 * the egress tunnel's), read from and written into byte arrays. Defined once for both.
 */
final class BigEndian {

    private BigEndian() {
    }

    /** The unsigned 32-bit number at {@code at}. */
    static long u32(byte[] bytes, int at) {
        return ((long) (bytes[at] & 0xff) << 24) | ((bytes[at + 1] & 0xff) << 16) | ((bytes[at + 2] & 0xff) << 8)
                | (bytes[at + 3] & 0xff);
    }

    /** The unsigned 16-bit number at {@code at}. */
    static int u16(byte[] bytes, int at) {
        return ((bytes[at] & 0xff) << 8) | (bytes[at + 1] & 0xff);
    }

    /** Writes the low 32 bits of {@code value} at {@code at}. */
    static void putU32(byte[] bytes, int at, long value) {
        bytes[at] = (byte) (value >>> 24);
        bytes[at + 1] = (byte) (value >>> 16);
        bytes[at + 2] = (byte) (value >>> 8);
        bytes[at + 3] = (byte) value;
    }

    /** Writes the low 16 bits of {@code value} at {@code at}. */
    static void putU16(byte[] bytes, int at, int value) {
        bytes[at] = (byte) (value >>> 8);
        bytes[at + 1] = (byte) value;
    }
}
