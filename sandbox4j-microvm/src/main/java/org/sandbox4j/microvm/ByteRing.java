package org.sandbox4j.microvm;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The last bytes of a stream the guest can fill at will (its console, QEMU's own messages): read
 * to the end so the writer never stalls, and only the tail kept, so diagnostics never cost more
 * than {@code capacity} bytes of heap.
 */
final class ByteRing {

    private final byte[] ring;
    private long written;

    ByteRing(int capacity) {
        this.ring = new byte[capacity];
    }

    synchronized void append(byte[] bytes, int offset, int length) {
        for (int i = 0; i < length; i++) {
            ring[(int) (written++ % ring.length)] = bytes[offset + i];
        }
    }

    /** Reads {@code source} to its end into the ring; an I/O error ends it like the end of the stream. */
    void drain(InputStream source) {
        byte[] chunk = new byte[4096];
        try (source) {
            for (int n; (n = source.read(chunk)) > 0; ) {
                append(chunk, 0, n);
            }
        } catch (IOException e) {
            // The VM is gone or the socket closed: what came so far is all there is.
        }
    }

    /** The kept tail as text, its last {@code maxLines} lines. */
    synchronized String tail(int maxLines) {
        int kept = (int) Math.min(written, ring.length);
        byte[] copy = new byte[kept];
        for (int i = 0; i < kept; i++) {
            copy[i] = ring[(int) ((written - kept + i) % ring.length)];
        }
        String[] lines = new String(copy, StandardCharsets.UTF_8).strip().split("\r?\n");
        int from = Math.max(0, lines.length - maxLines);
        return String.join(" | ", java.util.Arrays.copyOfRange(lines, from, lines.length));
    }
}
