package org.sandbox4j.egress;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A request head as a guest sent it: the request line and header fields, read with a hard bound,
 * plus whatever bytes arrived after the head (the start of a body or of a tunnelled stream).
 *
 * @param method   the method token
 * @param target   the request target, as sent
 * @param version  {@code HTTP/1.0} or {@code HTTP/1.1}
 * @param headers  the header fields in order
 * @param leftover bytes read past the end of the head, to be passed on unchanged
 */
record RequestHead(String method, String target, String version, List<Header> headers, byte[] leftover) {

    /** How many bytes one read takes while looking for the end of the head. */
    static final int READ_CHUNK = 8 * 1024;
    private static final byte[] END_OF_HEAD = {'\r', '\n', '\r', '\n'};
    private static final Set<String> VERSIONS = Set.of("HTTP/1.0", "HTTP/1.1");
    private static final String TCHARS = "!#$%&'*+-.^_`|~";

    /** One header field. */
    record Header(String name, String value) {
        boolean is(String other) {
            return name.equalsIgnoreCase(other);
        }
    }

    /** The guest closed the connection before sending a whole head. */
    static final class Closed extends IOException {
        private static final long serialVersionUID = 1L;

        Closed() {
            super("the client closed the connection before a request head arrived", null);
        }
    }

    /**
     * Reads until the blank line that ends the head.
     *
     * @throws ProxyRefusal 431 when {@code maxBytes} pass without the end of the head, 400 when the head is malformed
     * @throws Closed       when the guest closes first
     */
    static RequestHead read(ReadableByteChannel channel, int maxBytes) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(maxBytes + READ_CHUNK);
        int searchedUpTo = 0;
        while (true) {
            ByteBuffer window = buffer.duplicate();
            window.limit(Math.min(buffer.capacity(), buffer.position() + READ_CHUNK));
            int n = channel.read(window);
            if (n < 0) {
                throw new Closed();
            }
            buffer.position(window.position());
            int end = indexOf(buffer.array(), buffer.position(), Math.max(0, searchedUpTo - END_OF_HEAD.length));
            if (end >= 0) {
                int headLength = end + END_OF_HEAD.length;
                if (headLength > maxBytes) {
                    throw tooLarge(maxBytes);
                }
                byte[] leftover = new byte[buffer.position() - headLength];
                System.arraycopy(buffer.array(), headLength, leftover, 0, leftover.length);
                return parse(new String(buffer.array(), 0, end, StandardCharsets.ISO_8859_1), leftover);
            }
            searchedUpTo = buffer.position();
            if (buffer.position() >= maxBytes) {
                throw tooLarge(maxBytes);
            }
        }
    }

    private static ProxyRefusal tooLarge(int maxBytes) {
        return new ProxyRefusal(HttpStatus.HEADERS_TOO_LARGE,
                "the request head is larger than " + maxBytes + " bytes");
    }

    private static int indexOf(byte[] bytes, int length, int from) {
        outer:
        for (int i = from; i <= length - END_OF_HEAD.length; i++) {
            for (int j = 0; j < END_OF_HEAD.length; j++) {
                if (bytes[i + j] != END_OF_HEAD[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** Parses the head text (without its final blank line). */
    static RequestHead parse(String text, byte[] leftover) {
        String[] lines = text.split("\r\n", -1);
        String[] parts = lines[0].split(" ", -1);
        if (parts.length != 3 || !isToken(parts[0]) || !isVisible(parts[1]) || !VERSIONS.contains(parts[2])) {
            throw malformed("the request line is not 'METHOD TARGET HTTP/1.x'");
        }
        List<Header> headers = new ArrayList<>(lines.length - 1);
        for (int i = 1; i < lines.length; i++) {
            String line = lines[i];
            int colon = line.indexOf(':');
            if (colon <= 0 || !isToken(line.substring(0, colon))) {
                // Covers obsolete line folding too: a line starting with whitespace has no token before ':'.
                throw malformed("header line " + i + " is not 'Name: value'");
            }
            String value = line.substring(colon + 1).strip();
            if (value.chars().anyMatch(c -> c == '\r' || c == '\n' || c == 0)) {
                throw malformed("header line " + i + " has a control character in its value");
            }
            headers.add(new Header(line.substring(0, colon), value));
        }
        return new RequestHead(parts[0], parts[1], parts[2], List.copyOf(headers), leftover);
    }

    /** The values of every header called {@code name}. */
    List<String> values(String name) {
        return headers.stream().filter(h -> h.is(name)).map(Header::value).toList();
    }

    boolean isConnect() {
        return method.equals("CONNECT");
    }

    private static ProxyRefusal malformed(String why) {
        return new ProxyRefusal(HttpStatus.BAD_REQUEST, why);
    }

    static boolean isToken(String text) {
        return !text.isEmpty() && text.chars().allMatch(
                c -> (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || TCHARS.indexOf(c) >= 0);
    }

    private static boolean isVisible(String text) {
        return !text.isEmpty() && text.chars().allMatch(c -> c > ' ' && c < 0x7f);
    }
}
