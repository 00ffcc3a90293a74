package org.sandbox4j.egress;

import java.nio.charset.StandardCharsets;

/** The few responses the proxy writes itself, each with a one-line plain-text body. */
final class HttpStatus {

    static final int OK = 200;
    static final int BAD_REQUEST = 400;
    static final int FORBIDDEN = 403;
    static final int REQUEST_TIMEOUT = 408;
    static final int HEADERS_TOO_LARGE = 431;
    static final int BAD_GATEWAY = 502;
    static final int SERVICE_UNAVAILABLE = 503;

    static final byte[] CONNECTION_ESTABLISHED =
            "HTTP/1.1 200 Connection Established\r\n\r\n".getBytes(StandardCharsets.US_ASCII);

    private HttpStatus() {
    }

    static String phrase(int status) {
        return switch (status) {
            case OK -> "OK";
            case BAD_REQUEST -> "Bad Request";
            case FORBIDDEN -> "Forbidden";
            case REQUEST_TIMEOUT -> "Request Timeout";
            case HEADERS_TOO_LARGE -> "Request Header Fields Too Large";
            case BAD_GATEWAY -> "Bad Gateway";
            case SERVICE_UNAVAILABLE -> "Service Unavailable";
            default -> throw new IllegalArgumentException("the proxy never answers " + status);
        };
    }

    /** A complete response that closes the connection; the body is {@code line} and a newline. */
    static byte[] response(int status, String line) {
        byte[] body = (line + "\n").getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 " + status + " " + phrase(status) + "\r\n"
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
