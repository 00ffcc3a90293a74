package org.sandbox4j.testkit.tck;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A deliberately broken allowlisting HTTP proxy for the TCK's own tests, the kind the egress
 * probes must catch: it checks the absolute URI of a plain request against the allowlist, but
 * forwards to the port in the Host header, and it opens any {@code CONNECT} tunnel unchecked.
 *
 * <p>Whatever a request names, it only ever connects to {@code 127.0.0.1} (the name is never
 * resolved): test traffic stays on loopback.
 */
final class NaiveForwardProxy implements AutoCloseable {

    private static final int HEADER_LIMIT = 16 * 1024;
    private static final int SOCKET_TIMEOUT_MILLIS = 15_000;
    private static final int HTTP_PORT = 80;
    private static final int LINE_FEED = '\n';

    private final Set<String> allowlist;
    private final ServerSocket server;
    private final Thread acceptor;

    NaiveForwardProxy(Set<String> allowlist) {
        this.allowlist = Set.copyOf(allowlist);
        try {
            server = new ServerSocket(0, 16, InetAddress.getLoopbackAddress());
        } catch (IOException failure) {
            throw new UncheckedIOException(failure);
        }
        acceptor = new Thread(this::accept, "naive-proxy");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** {@code http://127.0.0.1:<port>}, for {@code http_proxy}. */
    String url() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    @Override
    public void close() throws IOException {
        server.close();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Thread handler = new Thread(() -> handle(client), "naive-proxy-request");
                handler.setDaemon(true);
                handler.start();
            } catch (IOException closed) {
                return;
            }
        }
    }

    private void handle(Socket client) {
        try (client) {
            client.setSoTimeout(SOCKET_TIMEOUT_MILLIS);
            InputStream in = client.getInputStream();
            List<String> head = readHead(in);
            String[] requestLine = head.get(0).split(" ");
            if ("CONNECT".equals(requestLine[0])) {
                // The flaw: the tunnel's destination is never checked.
                try (Socket upstream = connect(port(requestLine[1]))) {
                    client.getOutputStream().write("HTTP/1.1 200 Connection established\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
                    Thread back = pipe(upstream.getInputStream(), client.getOutputStream());
                    in.transferTo(upstream.getOutputStream());
                    back.join(SOCKET_TIMEOUT_MILLIS);
                }
                return;
            }
            URI target = URI.create(requestLine[1]);
            if (!allowlist.contains(target.getHost().toLowerCase(Locale.ROOT))) {
                client.getOutputStream().write(("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n"
                        + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                return;
            }
            // The flaw: the URI was checked, but the Host header picks where the request goes.
            String host = head.stream().filter(h -> h.toLowerCase(Locale.ROOT).startsWith("host:"))
                    .map(h -> h.substring("host:".length()).strip()).findFirst().orElse(target.getRawAuthority());
            try (Socket upstream = connect(port(host))) {
                StringBuilder forwarded = new StringBuilder(requestLine[0]).append(' ')
                        .append(target.getRawPath().isEmpty() ? "/" : target.getRawPath()).append(" HTTP/1.1\r\n");
                for (String header : head.subList(1, head.size())) {
                    String name = header.toLowerCase(Locale.ROOT);
                    if (!name.startsWith("connection:") && !name.startsWith("proxy-connection:")) {
                        forwarded.append(header).append("\r\n");
                    }
                }
                forwarded.append("Connection: close\r\n\r\n");
                upstream.getOutputStream().write(forwarded.toString().getBytes(StandardCharsets.US_ASCII));
                upstream.getInputStream().transferTo(client.getOutputStream());
            }
        } catch (IOException | RuntimeException | InterruptedException ignored) {
            // a broken request ends its connection; the probe sees no 2xx
        }
    }

    private static Socket connect(int port) throws IOException {
        Socket upstream = new Socket(InetAddress.getLoopbackAddress(), port);
        upstream.setSoTimeout(SOCKET_TIMEOUT_MILLIS);
        return upstream;
    }

    private static int port(String authority) {
        int colon = authority.lastIndexOf(':');
        return colon < 0 ? HTTP_PORT : Integer.parseInt(authority.substring(colon + 1));
    }

    private static Thread pipe(InputStream from, OutputStream to) {
        Thread thread = new Thread(() -> {
            try {
                from.transferTo(to);
            } catch (IOException ended) {
                // either side closed
            }
        }, "naive-proxy-pipe");
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static List<String> readHead(InputStream in) throws IOException {
        List<String> lines = new ArrayList<>();
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        int total = 0;
        int b;
        while ((b = in.read()) != -1 && total++ < HEADER_LIMIT) {
            if (b != LINE_FEED) {
                line.write(b);
                continue;
            }
            String text = line.toString(StandardCharsets.US_ASCII).strip();
            line.reset();
            if (text.isEmpty()) {
                return lines;
            }
            lines.add(text);
        }
        throw new IOException("no complete request head");
    }

}
