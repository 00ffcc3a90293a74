package org.sandbox4j.agent;

import java.nio.charset.StandardCharsets;

/**
 * Reads an agent's payload field by field. Every length is checked against what is left and
 * against the field's own bound before anything is copied: a payload that does not hold what it
 * claims is the agent breaking the protocol ({@link AgentProtocolViolation}), never an
 * out-of-bounds read or a large allocation. Trailing bytes are ignored, as version 1 allows.
 */
final class PayloadReader {

    private final byte[] payload;
    private final int type;
    private int position;

    PayloadReader(byte[] payload, int type) {
        this.payload = payload;
        this.type = type;
    }

    /** Whether fields follow: a later agent's additions at the end of a payload. */
    boolean hasMore() {
        return position < payload.length;
    }

    int u8() {
        need(1);
        return payload[position++] & 0xff;
    }

    int u16() {
        return (u8() << 8) | u8();
    }

    /** A u32 that must fit an int's non-negative range (every count and size the host takes). */
    int u32Bounded(long max, String field) {
        long value = u32();
        if (value > max) {
            throw violation(field + " is " + value + ", more than " + max);
        }
        return (int) value;
    }

    long u32() {
        return ((long) i32()) & 0xffffffffL;
    }

    int i32() {
        return (int) bigEndian(Integer.BYTES);
    }

    long i64() {
        return bigEndian(Long.BYTES);
    }

    /** The next {@code bytes} bytes as one big-endian number. */
    private long bigEndian(int bytes) {
        need(bytes);
        long value = 0;
        for (int i = 0; i < bytes; i++) {
            value = (value << 8) | (payload[position++] & 0xff);
        }
        return value;
    }

    /** A u64 that must be a non-negative long. */
    long u64() {
        long value = i64();
        if (value < 0) {
            throw violation("a size of more than 2^63 bytes");
        }
        return value;
    }

    byte[] bytes(int max, String field) {
        int length = u32Bounded(max, "the length of " + field);
        need(length);
        byte[] value = new byte[length];
        System.arraycopy(payload, position, value, 0, length);
        position += length;
        return value;
    }

    /** A text field, decoded as UTF-8 (malformed bytes replaced: it is shown, never trusted). */
    String text(int max, String field) {
        return new String(bytes(max, field), StandardCharsets.UTF_8);
    }

    private void need(int count) {
        if (payload.length - position < count) {
            throw violation("it ends early");
        }
    }

    AgentProtocolViolation violation(String what) {
        return new AgentProtocolViolation("a frame of type 0x" + Integer.toHexString(type) + " is malformed: " + what);
    }
}
