package org.sandbox4j.testkit.tck;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A tiny HTTP server for egress fixtures: it binds {@code 127.0.0.1} on an ephemeral port (never
 * another interface: test traffic stays on loopback), answers every request {@code 200} with a
 * body naming itself, and counts the requests it has seen, so a refusal probe can also prove the
 * refused server received nothing.
 */
public final class LoopbackHttpServer implements AutoCloseable {

    /** Every answer is this status: "reached" means the guest saw it. */
    public static final int STATUS = 200;

    private static final int EPHEMERAL_PORT = 0;
    private static final int BACKLOG = 16;
    private static final int HANDLER_THREADS = 2;
    private static final int STOP_DELAY_SECONDS = 0;
    /** A request body is read and dropped in chunks of this size, never held. */
    private static final int DRAIN_CHUNK = 8192;
    /** A request body longer than this is not drained further; the exchange is closed. */
    private static final long DRAIN_LIMIT = 1024 * 1024;

    private final String name;
    private final HttpServer server;
    private final ExecutorService handlers;
    private final AtomicLong requests = new AtomicLong();

    private LoopbackHttpServer(String name) throws IOException {
        this.name = Objects.requireNonNull(name, "name");
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), EPHEMERAL_PORT),
                BACKLOG);
        this.handlers = Executors.newFixedThreadPool(HANDLER_THREADS, runnable -> {
            Thread thread = new Thread(runnable, "sandbox4j-tck-loopback-http-" + name);
            thread.setDaemon(true);
            return thread;
        });
        server.createContext("/", this::answer);
        server.setExecutor(handlers);
        server.start();
    }

    /**
     * Starts a server on {@code 127.0.0.1} and an ephemeral port.
     *
     * @param name what its body says it is, e.g. {@code allowed}
     */
    public static LoopbackHttpServer start(String name) {
        try {
            return new LoopbackHttpServer(name);
        } catch (IOException failure) {
            throw new UncheckedIOException("could not start the loopback HTTP server '" + name + "'", failure);
        }
    }

    /** The name its body carries. */
    public String name() {
        return name;
    }

    /** The port it listens on, on {@code 127.0.0.1}. */
    public int port() {
        return server.getAddress().getPort();
    }

    /** {@code http://127.0.0.1:<port>/}. */
    public URI url() {
        return url(server.getAddress().getAddress().getHostAddress());
    }

    /**
     * {@code http://<host>:<port>/}: the same server reached by a name that resolves to loopback
     * (for example a {@code *.localhost} name, which curl resolves itself without a DNS query).
     */
    public URI url(String host) {
        return URI.create("http://" + host + ":" + port() + "/");
    }

    /** The body of every answer: names this server, so a response says who sent it. */
    public String body() {
        return "sandbox4j-tck loopback server " + name + "\n";
    }

    /** How many requests it has answered. */
    public long requests() {
        return requests.get();
    }

    /**
     * A witness over these servers for an {@link EgressFixture}: a URL's port says which server is
     * behind it (they all listen on {@code 127.0.0.1}); a URL on another port is unknown.
     */
    public static EgressFixture.RequestWitness witness(List<LoopbackHttpServer> servers) {
        List<LoopbackHttpServer> known = List.copyOf(servers);
        return url -> {
            for (LoopbackHttpServer server : known) {
                if (server.port() == url.getPort()) {
                    return OptionalLong.of(server.requests());
                }
            }
            return OptionalLong.empty();
        };
    }

    @Override
    public void close() {
        server.stop(STOP_DELAY_SECONDS);
        handlers.shutdownNow();
    }

    @Override
    public String toString() {
        return "LoopbackHttpServer[" + name + " on " + url() + ", " + requests() + " requests]";
    }

    private void answer(HttpExchange exchange) throws IOException {
        try (exchange) {
            requests.incrementAndGet();
            drain(exchange.getRequestBody());
            byte[] body = body().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
            exchange.sendResponseHeaders(STATUS, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    private static void drain(InputStream in) throws IOException {
        byte[] chunk = new byte[DRAIN_CHUNK];
        long drained = 0;
        int read;
        while (drained < DRAIN_LIMIT && (read = in.read(chunk)) != -1) {
            drained += read;
        }
    }
}
