package org.sandbox4j.egress;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/** Test fixtures that live only on 127.0.0.1, and a raw client for the proxy's unix socket. */
final class Loopback {

    static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private Loopback() {
    }

    /** An HTTP server on 127.0.0.1 that counts requests and records their headers. */
    static final class CountingServer implements AutoCloseable {
        final HttpServer server;
        final AtomicInteger requests = new AtomicInteger();
        final List<Map<String, List<String>>> headers = new CopyOnWriteArrayList<>();
        final List<String> paths = new CopyOnWriteArrayList<>();

        CountingServer() throws IOException {
            server = HttpServer.create(new InetSocketAddress(LOOPBACK, 0), 0);
            server.setExecutor(Executors.newFixedThreadPool(4, r -> {
                Thread t = new Thread(r, "test-loopback-http");
                t.setDaemon(true);
                return t;
            }));
            server.createContext("/", exchange -> {
                requests.incrementAndGet();
                headers.add(Map.copyOf(exchange.getRequestHeaders()));
                paths.add(exchange.getRequestURI().toString());
                byte[] body = ("hello from loopback " + exchange.getRequestURI().getPath()).getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(200, body.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            });
            server.start();
        }

        int port() {
            return server.getAddress().getPort();
        }

        @Override
        public void close() {
            server.stop(0);
            ((ExecutorService) server.getExecutor()).shutdownNow();
        }
    }

    /** A TCP echo server on 127.0.0.1. */
    static final class EchoServer implements AutoCloseable {
        final ServerSocket socket;
        final AtomicInteger connections = new AtomicInteger();
        private final Thread acceptor;

        EchoServer() throws IOException {
            socket = new ServerSocket(0, 50, LOOPBACK);
            acceptor = new Thread(() -> {
                while (!socket.isClosed()) {
                    try {
                        Socket s = socket.accept();
                        connections.incrementAndGet();
                        Thread t = new Thread(() -> echo(s), "test-echo");
                        t.setDaemon(true);
                        t.start();
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "test-echo-accept");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        private static void echo(Socket s) {
            try (s; InputStream in = s.getInputStream(); OutputStream out = s.getOutputStream()) {
                byte[] buffer = new byte[4096];
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // The peer went away.
            }
        }

        int port() {
            return socket.getLocalPort();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** A port on 127.0.0.1 that was free a moment ago. */
    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, LOOPBACK)) {
            return s.getLocalPort();
        }
    }

    /** A client connection to the proxy's unix socket. */
    static SocketChannel connect(Path socket) throws IOException {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        channel.connect(UnixDomainSocketAddress.of(socket));
        return channel;
    }

    static void send(SocketChannel channel, String text) throws IOException {
        ByteBuffer buffer = ByteBuffer.wrap(text.getBytes(StandardCharsets.ISO_8859_1));
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }

    /** Everything the proxy sends until it closes. */
    static String readAll(SocketChannel channel) throws IOException {
        StringBuilder out = new StringBuilder();
        ByteBuffer buffer = ByteBuffer.allocate(8192);
        while (channel.read(buffer) >= 0) {
            buffer.flip();
            out.append(StandardCharsets.ISO_8859_1.decode(buffer));
            buffer.clear();
        }
        return out.toString();
    }

    /** Reads until {@code marker} has arrived (or the stream ends). */
    static String readUntil(SocketChannel channel, String marker) throws IOException {
        StringBuilder out = new StringBuilder();
        ByteBuffer buffer = ByteBuffer.allocate(1);
        while (!out.toString().contains(marker) && channel.read(buffer) >= 0) {
            buffer.flip();
            out.append((char) (buffer.get() & 0xFF));
            buffer.clear();
        }
        return out.toString();
    }

    /** Sends one request, returns the whole response. */
    static String exchange(Path socket, String request) throws IOException {
        try (SocketChannel channel = connect(socket)) {
            send(channel, request);
            return readAll(channel);
        }
    }

    /** The body of a response: what follows the blank line. */
    static String body(String response) {
        int at = response.indexOf("\r\n\r\n");
        return at < 0 ? "" : response.substring(at + 4);
    }
}
