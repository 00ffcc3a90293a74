package org.sandbox4j.agent;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** Builds a payload field by field, big-endian as the protocol says. Single-use, not thread-safe. */
final class Payload {

    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

    static Payload create() {
        return new Payload();
    }

    Payload u8(int value) {
        bytes.write(value);
        return this;
    }

    Payload u16(int value) {
        bytes.write(value >>> 8);
        bytes.write(value);
        return this;
    }

    Payload u32(long value) {
        for (int shift = 24; shift >= 0; shift -= 8) {
            bytes.write((int) (value >>> shift));
        }
        return this;
    }

    Payload u64(long value) {
        for (int shift = 56; shift >= 0; shift -= 8) {
            bytes.write((int) (value >>> shift));
        }
        return this;
    }

    Payload bytes(byte[] value, int offset, int length) {
        u32(length);
        bytes.write(value, offset, length);
        return this;
    }

    Payload bytes(byte[] value) {
        return bytes(value, 0, value.length);
    }

    Payload text(String value) {
        return bytes(value.getBytes(StandardCharsets.UTF_8));
    }

    Payload texts(List<String> values) {
        u32(values.size());
        values.forEach(this::text);
        return this;
    }

    byte[] build() {
        return bytes.toByteArray();
    }

    static byte[] empty() {
        return new byte[0];
    }
}
