package org.sandbox4j.mcp;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.URI;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import jakarta.servlet.DispatcherType;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

import org.sandbox4j.core.spi.ErrorDetail;

/**
 * A running streamable HTTP endpoint on a loopback address, from
 * {@link SandboxMcpServer#serveHttp}. Closing it stops the listener and disposes of the sandboxes
 * of every session it served.
 */
public final class HttpEndpoint implements AutoCloseable {

    private static final Logger LOG = System.getLogger(HttpEndpoint.class.getName());

    /** How long stopping waits for requests in progress. */
    static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);

    private final Server jetty;
    private final McpSyncServer server;
    private final SessionLedger ledger;
    private final ScheduledExecutorService reaper;
    private final InetSocketAddress address;
    private final Runnable onClose;
    private final AtomicBoolean closed = new AtomicBoolean();

    private HttpEndpoint(Server jetty, McpSyncServer server, SessionLedger ledger, ScheduledExecutorService reaper,
            InetSocketAddress address, Runnable onClose) {
        this.jetty = jetty;
        this.server = server;
        this.ledger = ledger;
        this.reaper = reaper;
        this.address = address;
        this.onClose = onClose;
    }

    /**
     * Starts Jetty with the SDK's transport servlet at {@link SandboxMcpServer#ENDPOINT_PATH},
     * behind the guard and the session tracker.
     */
    static HttpEndpoint start(InetSocketAddress requested, HttpServletStreamableServerTransportProvider transport,
            McpSyncServer server, SessionLedger ledger, Optional<String> bearerToken, Duration idleSessionTimeout,
            Runnable onClose) {
        QueuedThreadPool threads = new QueuedThreadPool();
        threads.setName("sandbox4j-mcp-http");
        threads.setDaemon(true);
        Server jetty = new Server(threads);
        ServerConnector connector = new ServerConnector(jetty);
        connector.setHost(requested.getAddress().getHostAddress());
        connector.setPort(requested.getPort());
        jetty.addConnector(connector);

        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        ServletHolder servlet = new ServletHolder(transport);
        servlet.setAsyncSupported(true);
        context.addServlet(servlet, SandboxMcpServer.ENDPOINT_PATH);
        addFilter(context, new HttpGuard(bearerToken, transport.protocolVersions()));
        addFilter(context, new SessionTracker(ledger));
        jetty.setHandler(context);
        jetty.setStopTimeout(STOP_TIMEOUT.toMillis());

        ScheduledExecutorService reaper = Executors.newSingleThreadScheduledExecutor(runnable -> {
            Thread thread = new Thread(runnable, "sandbox4j-mcp-idle-sessions");
            thread.setDaemon(true);
            return thread;
        });
        try {
            jetty.start();
        } catch (Exception failure) {
            reaper.shutdownNow();
            server.close();
            stopQuietly(jetty);
            throw new IllegalStateException("could not listen on " + requested + ": " + failure.getMessage(), failure);
        }
        InetSocketAddress bound = new InetSocketAddress(requested.getAddress(), connector.getLocalPort());
        // The SDK sweeps every half timeout and evicts a session idle over a whole sweep, so by the
        // timeout; its sandboxes go once it has been idle longer than that (checked every tenth of
        // it), when it must be gone, never while a client could still use it.
        Duration disposeAfter = idleSessionTimeout;
        long period = Math.max(1, idleSessionTimeout.toMillis() / 10);
        reaper.scheduleWithFixedDelay(() -> {
            try {
                ledger.closeIdle(disposeAfter);
            } catch (RuntimeException failure) {
                // A failed sweep must not end the schedule: the next one retries.
                LOG.log(Level.WARNING, () -> "sweeping idle MCP sessions failed: " + ErrorDetail.of(failure));
            }
        }, period, period, TimeUnit.MILLISECONDS);
        return new HttpEndpoint(jetty, server, ledger, reaper, bound, onClose);
    }

    private static void addFilter(ServletContextHandler context, jakarta.servlet.Filter filter) {
        FilterHolder holder = new FilterHolder(filter);
        holder.setAsyncSupported(true);
        context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
    }

    /** The address the endpoint listens on (a loopback address). */
    public InetSocketAddress address() {
        return address;
    }

    /** The port it listens on: the one asked for, or the one the system chose for port 0. */
    public int port() {
        return address.getPort();
    }

    /** The URL an MCP client connects to. */
    public URI uri() {
        String host = address.getAddress().getHostAddress();
        String authority = host.contains(":") ? "[" + host + "]" : host;
        return URI.create("http://" + authority + ":" + port() + SandboxMcpServer.ENDPOINT_PATH);
    }

    /** Stops listening, ends every session and disposes of their sandboxes. Idempotent; never throws. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        reaper.shutdownNow();
        try {
            server.close();
        } catch (RuntimeException failure) {
            LOG.log(Level.WARNING, () -> "closing the MCP server failed: " + ErrorDetail.of(failure));
        }
        stopQuietly(jetty);
        ledger.closeAll();
        onClose.run();
    }

    private static void stopQuietly(Server jetty) {
        try {
            jetty.stop();
        } catch (Exception failure) {
            LOG.log(Level.WARNING, () -> "stopping the HTTP listener failed: " + ErrorDetail.of(failure));
        }
    }

    @Override
    public String toString() {
        return "HttpEndpoint[" + uri() + "]";
    }
}
