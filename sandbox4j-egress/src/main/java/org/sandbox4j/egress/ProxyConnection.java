package org.sandbox4j.egress;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One guest connection, from its request head to the end of its tunnel or forward. The thread
 * that reads the head also carries guest-to-destination bytes; a second thread carries the
 * answer. Either side ending or failing ends both.
 */
final class ProxyConnection {

    /** Bytes one pipe moves per read: the only buffer a tunnel holds. */
    static final int PIPE_CHUNK = 16 * 1024;
    /** An idle check runs this many times per idle timeout, so closing is at most a quarter late. */
    private static final int IDLE_CHECKS_PER_TIMEOUT = 4;
    private static final long MIN_IDLE_CHECK_MILLIS = 10;

    /**
     * Fields dropped from a forwarded request: hop-by-hop fields of RFC 9110 section 7.6.1, the
     * client's {@code Host} (replaced), and every {@code Proxy-*} field (credentials for this hop
     * must never reach the destination). {@code Transfer-Encoding} stays: the body is passed on as
     * framed.
     */
    private static final Set<String> DROPPED_FIELDS = Set.of(
            "host", "connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade");

    private enum Phase { READING_HEAD, HANDLING, ENDED }

    private final EgressProxy proxy;
    private final SocketChannel client;
    private final long id;
    private final Thread thread;
    private final CountDownLatch ended = new CountDownLatch(1);
    private final AtomicReference<Phase> phase = new AtomicReference<>(Phase.READING_HEAD);
    private final AtomicLong toServer = new AtomicLong();
    private final AtomicLong toClient = new AtomicLong();
    private volatile SocketChannel upstream;
    /** Set when the proxy answered the client itself: the client is then closed gently. */
    private volatile boolean answered;
    private volatile long lastActivity = System.nanoTime();

    // The decision as it stands; written by the connection thread, or by the header timer
    // before it closes the client (which makes the connection thread finish).
    private volatile String method = "";
    private volatile String host = "";
    private volatile int port;
    private volatile EgressDecision.Verdict verdict = EgressDecision.Verdict.REFUSED;
    private volatile String reason = EgressGate.PREFIX + "the client closed the connection before a request head arrived";

    ProxyConnection(EgressProxy proxy, SocketChannel client, long id) {
        this.proxy = proxy;
        this.client = client;
        this.id = id;
        this.thread = proxy.newThread(this::run, id, "client");
    }

    void start() {
        thread.start();
    }

    /** Closes both sides; the connection's threads then finish and record the decision. */
    void abort() {
        EgressProxy.closeQuietly(client);
        EgressProxy.closeQuietly(upstream);
    }

    void awaitEnd(long nanos) {
        try {
            ended.await(nanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        EgressProxy.Settings settings = proxy.settings();
        ScheduledFuture<?> headTimer = proxy.timer().schedule(this::headTimedOut,
                settings.headerTimeout().toMillis(), TimeUnit.MILLISECONDS);
        try {
            RequestHead head;
            try {
                head = RequestHead.read(client, settings.maxHeaderBytes());
            } finally {
                headTimer.cancel(false);
            }
            if (!phase.compareAndSet(Phase.READING_HEAD, Phase.HANDLING)) {
                return;
            }
            method = head.method();
            handle(head);
        } catch (ProxyRefusal refusal) {
            if (phase.compareAndSet(Phase.READING_HEAD, Phase.HANDLING) || phase.get() == Phase.HANDLING) {
                refuse(refusal.status(), refusal.getMessage());
            }
        } catch (IOException | RuntimeException e) {
            // The guest left, the proxy closed, or the head timer fired; the reason recorded so
            // far stands, or names the failure when the connection had been allowed.
            if (verdict == EgressDecision.Verdict.ALLOWED && !(e instanceof RequestHead.Closed)) {
                reason = reason + "; ended: " + describe(e);
            }
        } finally {
            phase.set(Phase.ENDED);
            // Recorded before the client sees the end, so a client that read the answer finds it logged.
            proxy.record(new EgressDecision(Instant.now(), method, host, port, verdict, reason,
                    toServer.get(), toClient.get()));
            if (answered) {
                EgressProxy.closeQuietly(upstream);
                proxy.closeGently(client);
            } else {
                abort();
            }
            proxy.ended(this);
            ended.countDown();
        }
    }

    private void headTimedOut() {
        if (phase.compareAndSet(Phase.READING_HEAD, Phase.ENDED)) {
            reason = EgressGate.PREFIX + "the request head did not arrive within "
                    + proxy.settings().headerTimeout().toMillis() + " ms";
            writeQuietly(HttpStatus.REQUEST_TIMEOUT.response(reason));
            try {
                client.shutdownOutput();
            } catch (IOException e) {
                // Already gone.
            }
            abort();
        }
    }

    private void handle(RequestHead head) throws IOException {
        ProxyTarget target = ProxyTarget.of(head);
        host = target.host();
        port = target.port();
        EgressGate.Outcome outcome = EgressGate.decide(proxy.policy(), proxy.settings().resolver(), target.host(),
                target.port());
        if (outcome instanceof EgressGate.Refuse refusal) {
            refuse(refusal.status(), refusal.reason());
            return;
        }
        EgressGate.Connect connect = (EgressGate.Connect) outcome;
        upstream = connect(connect);
        if (proxy.isClosed()) {
            throw new IOException("the proxy closed");
        }
        verdict = EgressDecision.Verdict.ALLOWED;
        reason = EgressGate.PREFIX + "allowed by rule '" + connect.rule().entry() + "'";
        if (head.isConnect()) {
            writeFully(client, ByteBuffer.wrap(HttpStatus.CONNECTION_ESTABLISHED));
        } else {
            sendToServer(rewrite(head, target));
        }
        sendToServer(head.leftover());
        pipeBothWays();
    }

    private SocketChannel connect(EgressGate.Connect connect) throws IOException {
        IOException last = null;
        for (InetSocketAddress address : connect.addresses()) {
            try {
                return proxy.connector().connect(address, proxy.settings().connectTimeout());
            } catch (IOException e) {
                last = e;
            }
        }
        String what = connect.addresses().size() == 1 ? "" : " (tried " + connect.addresses().size() + " addresses)";
        throw new ProxyRefusal(HttpStatus.BAD_GATEWAY, "could not connect to " + host + ":" + port + what + ": "
                + (last instanceof ConnectTimeout ? "timed out after "
                + proxy.settings().connectTimeout().toMillis() + " ms" : describe(last)));
    }

    /**
     * The head to send the destination: origin form, the checked authority as {@code Host}, no
     * hop-by-hop or proxy fields, and {@code Connection: close} so the destination ends the
     * exchange after one response.
     */
    private static byte[] rewrite(RequestHead head, ProxyTarget target) {
        Set<String> named = new java.util.HashSet<>(DROPPED_FIELDS);
        for (String value : head.values("Connection")) {
            for (String token : value.split(",")) {
                named.add(token.strip().toLowerCase(Locale.ROOT));
            }
        }
        StringBuilder out = new StringBuilder(256);
        out.append(head.method()).append(' ').append(target.originForm()).append(' ').append(head.version()).append("\r\n");
        out.append("Host: ").append(authority(target)).append("\r\n");
        for (RequestHead.Header header : head.headers()) {
            String name = header.name().toLowerCase(Locale.ROOT);
            if (!named.contains(name) && !name.startsWith("proxy-")) {
                out.append(header.name()).append(": ").append(header.value()).append("\r\n");
            }
        }
        out.append("Connection: close\r\n\r\n");
        return out.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** The checked host as a URL authority, with the port unless it is the default one. */
    static String authority(ProxyTarget target) {
        String hostPart = HostSyntax.parseIpv6(target.host())
                .map(HostSyntax::literal)
                .orElseGet(() -> HostSyntax.normalizeName(target.host()));
        return target.port() == ProxyTarget.HTTP_DEFAULT_PORT ? hostPart : hostPart + ":" + target.port();
    }

    private void pipeBothWays() throws IOException {
        long idleMillis = proxy.settings().idleTimeout().toMillis();
        long checkEvery = Math.max(MIN_IDLE_CHECK_MILLIS, idleMillis / IDLE_CHECKS_PER_TIMEOUT);
        lastActivity = System.nanoTime();
        ScheduledFuture<?> idleCheck = proxy.timer().scheduleAtFixedRate(() -> {
            if (System.nanoTime() - lastActivity > TimeUnit.MILLISECONDS.toNanos(idleMillis)) {
                reason = EgressGate.PREFIX + "allowed, closed after " + idleMillis + " ms without traffic";
                abort();
            }
        }, checkEvery, checkEvery, TimeUnit.MILLISECONDS);
        SocketChannel server = upstream;
        Thread back = proxy.newThread(() -> {
            try {
                pipe(server, client, toClient);
            } catch (IOException e) {
                abort();
            }
        }, id, "server");
        back.start();
        try {
            pipe(client, server, toServer);
            back.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            idleCheck.cancel(false);
        }
    }

    /** Copies until end of stream, then passes the end on (half-close) so the other side can finish. */
    private void pipe(SocketChannel from, SocketChannel to, AtomicLong counter) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(PIPE_CHUNK);
        while (from.read(buffer) >= 0) {
            lastActivity = System.nanoTime();
            buffer.flip();
            counter.addAndGet(buffer.remaining());
            writeFully(to, buffer);
            buffer.clear();
            lastActivity = System.nanoTime();
        }
        to.shutdownOutput();
    }

    private void sendToServer(byte[] bytes) throws IOException {
        if (bytes.length > 0) {
            writeFully(upstream, ByteBuffer.wrap(bytes));
            toServer.addAndGet(bytes.length);
        }
    }

    private void refuse(HttpStatus status, String line) {
        verdict = EgressDecision.Verdict.REFUSED;
        reason = line;
        answered = true;
        writeQuietly(status.response(line));
    }

    private void writeQuietly(byte[] response) {
        try {
            writeFully(client, ByteBuffer.wrap(response));
        } catch (IOException e) {
            // The client left before the answer; the decision is recorded all the same.
        }
    }

    private static void writeFully(SocketChannel channel, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }

    private static String describe(Exception e) {
        String message = e == null ? null : e.getMessage();
        String text = e == null ? "unknown error" : message == null ? e.getClass().getSimpleName() : message;
        return text.replace('\r', ' ').replace('\n', ' ');
    }
}
