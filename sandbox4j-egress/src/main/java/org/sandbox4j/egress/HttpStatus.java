package org.sandbox4j.egress;

import java.nio.charset.StandardCharsets;

/** The few responses the proxy writes itself, each with a one-line plain-text body. */
enum HttpStatus {

    BAD_REQUEST(400, "Bad Request"),
    FORBIDDEN(403, "Forbidden"),
    REQUEST_TIMEOUT(408, "Request Timeout"),
    HEADERS_TOO_LARGE(431, "Request Header Fields Too Large"),
    BAD_GATEWAY(502, "Bad Gateway"),
    SERVICE_UNAVAILABLE(503, "Service Unavailable");

    /** The answer to a {@code CONNECT} the proxy admitted and connected; the tunnel follows. */
    static final byte[] CONNECTION_ESTABLISHED =
            "HTTP/1.1 200 Connection Established\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private final int code;
    private final String phrase;

    HttpStatus(int code, String phrase) {
        this.code = code;
        this.phrase = phrase;
    }

    /** A complete response that closes the connection; the body is {@code line} and a newline. */
    byte[] response(String line) {
        byte[] body = (line + "\n").getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 " + code + " " + phrase + "\r\n"
                + "Content-Type: text/plain; charset=utf-8\r\n"
                + "Content-Length: " + body.length + "\r\n"
                + "Connection: close\r\n"
                + "\r\n";
        byte[] headBytes = head.getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[headBytes.length + body.length];
        System.arraycopy(headBytes, 0, all, 0, headBytes.length);
        System.arraycopy(body, 0, all, headBytes.length, body.length);
        return all;
    }
}
