package org.sandbox4j.agent;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.ProcessPump;

/**
 * The host end of the guest agent's egress tunnel ({@code PROTOCOL.md}, "The egress tunnel"): the
 * agent accepts a guest program's TCP connections (its {@code http_proxy}) and multiplexes them
 * over a second port; this class opens a connection to the host's proxy for every stream the guest
 * opens, through an {@link EgressConnector}, and pumps both directions with per-stream credit.
 *
 * <p>Threads: one daemon reader reads every frame; it never blocks on a proxy, so one stalled
 * stream never holds up another. Each stream has two daemon threads: one connects to the proxy and
 * writes the guest's bytes to it, granting the guest credit only once they are written (so what
 * waits for the proxy is bounded by the window), and one reads the proxy and sends what it gets
 * within the guest's credit. One more thread sends {@code HELLO} every {@link #HELLO_RESEND} until
 * the guest answers (the guest opens its port late, and asks for a new HELLO after a reset).
 *
 * <p>The guest is hostile: a frame the protocol does not allow (a length beyond the bound, an
 * unknown type or stream, more data than it was granted, a reused stream id, more than
 * {@value EgressProtocol#MAX_STREAMS} streams) closes the whole tunnel. A guest that stops reading
 * closes it too, once a write has waited {@link #SEND_WAIT}.
 *
 * <p>The streams given must allow a read and a write at once from two threads (not
 * {@code Channels.newInputStream} of one socket channel: those share its blocking lock).
 * {@link #close()} ends every stream and thread and closes both streams.
 */
public final class EgressTunnel implements AutoCloseable {

    /** How often the handshake is sent again until the guest answers. */
    public static final Duration HELLO_RESEND = Duration.ofMillis(500);
    /** How long a write may wait behind another before the guest is taken to have stopped reading. */
    public static final Duration SEND_WAIT = Duration.ofSeconds(10);

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final System.Logger LOG = System.getLogger(EgressTunnel.class.getName());
    private static final byte[] EMPTY = new byte[0];

    private final InputStream in;
    private final OutputStream out;
    private final EgressConnector connector;
    private final String name;
    private final EgressFrame.Reader frames;
    private final WriteLock writeLock = new WriteLock(SEND_WAIT);
    /** Guards the handshake's fields; waited on by the hello thread and by {@link #awaitEstablished}. */
    private final Object state = new Object();
    private final Map<Long, EgressStream> streams = new ConcurrentHashMap<>();
    private final AtomicLong opened = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong sessions = new AtomicLong();
    /** Frames of an older session are never written after a newer session's HELLO. */
    private volatile int session;
    private boolean established;
    private int nonce;
    /** The reader's alone: the highest stream id the guest opened in this session. */
    private long lastOpened;
    private volatile String failure;

    private EgressTunnel(InputStream in, OutputStream out, EgressConnector connector, String name) {
        this.in = in;
        this.out = out;
        this.connector = connector;
        this.name = name;
        this.frames = new EgressFrame.Reader(in);
    }

    /**
     * Starts serving the tunnel on a port's two halves: sends {@code HELLO} until the guest answers,
     * then opens a proxy connection through {@code connector} for every stream it opens.
     *
     * @param in        what the guest's agent writes to the egress port
     * @param out       what it reads from the port
     * @param connector a new connection to the proxy per stream
     * @param name      for thread names and messages (the sandbox's)
     */
    public static EgressTunnel start(InputStream in, OutputStream out, EgressConnector connector, String name) {
        EgressTunnel tunnel = new EgressTunnel(Objects.requireNonNull(in, "in"), Objects.requireNonNull(out, "out"),
                Objects.requireNonNull(connector, "connector"), Objects.requireNonNull(name, "name"));
        ProcessPump.daemon("egress-reader-" + name, tunnel::readLoop).start();
        ProcessPump.daemon("egress-hello-" + name, tunnel::helloLoop).start();
        return tunnel;
    }

    /**
     * Waits until the guest answered the handshake (its listener then accepts connections).
     *
     * @return whether it did within {@code timeout}; false also once the tunnel is closed
     */
    public boolean awaitEstablished(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (state) {
            while (!established && failure == null) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                TimeUnit.NANOSECONDS.timedWait(state, left);
            }
            return established && failure == null;
        }
    }

    /** Whether the tunnel still serves: not closed, and the guest broke nothing. */
    public boolean isOpen() {
        return failure == null;
    }

    /** Why the tunnel is closed (the host closed it, the port ended, the guest broke the protocol); empty while open. */
    public Optional<String> failure() {
        return Optional.ofNullable(failure);
    }

    /** The streams the guest opened so far, in every session. */
    public long streamsOpened() {
        return opened.get();
    }

    /** The streams the proxy could not be reached for (the connector threw); the guest saw them closed. */
    public long streamsRefused() {
        return refused.get();
    }

    /** The streams that have a connection to the proxy or are getting one. */
    public int liveStreams() {
        return streams.size();
    }

    /** The sessions the guest answered: 1, and one more after each reset it asked for. */
    public long sessions() {
        return sessions.get();
    }

    /** Ends every stream and thread, and closes both streams. Idempotent. */
    @Override
    public void close() {
        fail("the host closed the egress tunnel");
    }

    @Override
    public String toString() {
        return "EgressTunnel[" + name + ", " + (isOpen() ? "open" : "closed") + ", streams " + liveStreams()
                + " live, " + streamsOpened() + " opened, " + streamsRefused() + " refused]";
    }

    // ---------------------------------------------------------------- for the streams

    EgressConnector connector() {
        return connector;
    }

    String name() {
        return name;
    }

    void refused() {
        refused.incrementAndGet();
    }

    /** The stream ended (both directions, or aborted): its id is not served any more. */
    void forget(EgressStream stream) {
        streams.remove(stream.id(), stream);
    }

    /**
     * Writes one frame of {@code generation}'s session; none once a newer session began, or the
     * tunnel closed. A write that cannot start within {@link #SEND_WAIT} closes the tunnel.
     *
     * @return whether it was written
     */
    boolean send(int generation, long stream, int type, byte[] payload, int offset, int length) {
        byte[] frame = EgressFrame.encode(stream, type, payload, offset, length);
        if (!writeLock.tryLock()) {
            fail("a write to the guest waited " + SEND_WAIT.toSeconds() + " s behind another: the guest stopped "
                    + "reading the egress port");
            return false;
        }
        try {
            if (failure != null || generation != session) {
                return false;
            }
            out.write(frame);
            out.flush();
            return true;
        } catch (IOException e) {
            fail("writing to the egress port failed: " + ErrorDetail.of(e));
            return false;
        } finally {
            writeLock.unlock();
        }
    }

    boolean send(int generation, long stream, int type, byte[] payload) {
        return send(generation, stream, type, payload, 0, payload.length);
    }

    // ---------------------------------------------------------------- the handshake

    private void helloLoop() {
        try {
            while (true) {
                int sent;
                int generation;
                synchronized (state) {
                    while (established && failure == null) {
                        state.wait();
                    }
                    if (failure != null) {
                        return;
                    }
                    // Only the answer to the latest HELLO counts: an older one may cross a resent one.
                    nonce = RANDOM.nextInt();
                    sent = nonce;
                    generation = session;
                }
                send(generation, EgressProtocol.SESSION, EgressProtocol.HELLO,
                        EgressFrame.hello(EgressProtocol.VERSION, sent));
                long deadline = System.nanoTime() + HELLO_RESEND.toNanos();
                synchronized (state) {
                    long left;
                    while (!established && failure == null && (left = deadline - System.nanoTime()) > 0) {
                        TimeUnit.NANOSECONDS.timedWait(state, left);
                    }
                }
            }
        } catch (InterruptedException e) {
            fail("the egress tunnel's hello thread was interrupted");
        }
    }

    /** Before the answer to our latest HELLO, every frame is another session's (or stale) and is dropped. */
    private void beforeHandshake(EgressFrame hello) {
        byte[] p = hello.payload();
        synchronized (state) {
            if ((int) BigEndian.u32(p, 6) != nonce) {
                return;
            }
            int version = BigEndian.u16(p, 4);
            if (version != EgressProtocol.VERSION) {
                throw new AgentProtocolViolation("the guest speaks egress tunnel version " + version + ", this host "
                        + EgressProtocol.VERSION);
            }
            established = true;
            lastOpened = 0;
            sessions.incrementAndGet();
            state.notifyAll();
        }
    }

    /** The guest asked for a new session (it reset, or its tunnel process restarted): every stream ends. */
    private void guestReset() {
        synchronized (state) {
            session++; // from here on, no frame of the old session is written
        }
        abortAll();
        synchronized (state) { // only now the hello thread may start the new one
            established = false;
            state.notifyAll();
        }
        LOG.log(System.Logger.Level.DEBUG, () -> "egress tunnel " + name + ": the guest reset the session");
    }

    // ---------------------------------------------------------------- the reader

    private void readLoop() {
        try {
            while (failure == null) {
                boolean live;
                synchronized (state) {
                    live = established;
                }
                if (live) {
                    route(frames.read());
                } else {
                    beforeHandshake(frames.readHello());
                }
            }
        } catch (AgentProtocolViolation violation) {
            fail("the guest broke the egress tunnel protocol (" + violation.getMessage() + ")");
        } catch (EOFException ended) {
            fail("the egress port's stream ended (the guest stopped, or its tunnel process restarted)");
        } catch (IOException | RuntimeException | OutOfMemoryError e) {
            fail("reading the egress port failed: " + ErrorDetail.of(e));
        }
    }

    private void route(EgressFrame frame) {
        long id = frame.stream();
        int type = frame.type();
        int length = frame.payload().length;
        if (type < EgressProtocol.HELLO || type > EgressProtocol.CREDIT) {
            throw new AgentProtocolViolation("a frame of unknown type " + type);
        }
        if (id == EgressProtocol.SESSION) {
            if (type != EgressProtocol.CLOSE || length != 0) {
                throw new AgentProtocolViolation(EgressProtocol.typeName(type) + " on stream 0");
            }
            guestReset();
            return;
        }
        if (type == EgressProtocol.HELLO) {
            throw new AgentProtocolViolation("HELLO on stream " + id);
        }
        int expected = type == EgressProtocol.CREDIT ? EgressProtocol.CREDIT_BYTES : 0;
        if (type == EgressProtocol.DATA ? length == 0 : length != expected) {
            throw new AgentProtocolViolation(EgressProtocol.typeName(type) + " of " + length + " bytes on stream "
                    + id);
        }
        if (type == EgressProtocol.OPEN) {
            open(id);
            return;
        }
        if (id > lastOpened) {
            throw new AgentProtocolViolation(EgressProtocol.typeName(type) + " on stream " + id
                    + ", which was never opened");
        }
        EgressStream stream = streams.get(id);
        if (stream == null) {
            return; // ended here: frames that crossed our CLOSE or our EOF
        }
        switch (type) {
            case EgressProtocol.DATA -> stream.fromGuest(frame.payload());
            case EgressProtocol.EOF -> stream.guestEof();
            case EgressProtocol.CLOSE -> stream.abort(false);
            default -> stream.credit(BigEndian.u32(frame.payload(), 0));
        }
    }

    private void open(long id) {
        if (id <= lastOpened) {
            throw new AgentProtocolViolation("OPEN of stream " + id + ": ids only grow, the last was " + lastOpened);
        }
        long live = streams.values().stream().filter(EgressStream::guestLive).count();
        if (live >= EgressProtocol.MAX_STREAMS) {
            throw new AgentProtocolViolation("OPEN of a stream beyond " + EgressProtocol.MAX_STREAMS + " at once");
        }
        lastOpened = id;
        EgressStream stream = new EgressStream(this, id, session);
        streams.put(id, stream);
        opened.incrementAndGet();
        stream.start();
    }

    // ---------------------------------------------------------------- closing

    private void abortAll() {
        for (EgressStream stream : List.copyOf(streams.values())) {
            stream.abort(false);
        }
    }

    private void fail(String reason) {
        synchronized (state) {
            if (failure != null) {
                return;
            }
            failure = reason;
            state.notifyAll();
        }
        LOG.log(System.Logger.Level.DEBUG, () -> "egress tunnel " + name + " closed: " + reason);
        abortAll();
        // A stream's close can wait behind a write stuck in it: closed on a thread of its own, never the caller's.
        ProcessPump.daemon("egress-close-" + name, () -> {
            closeQuietly(out);
            closeQuietly(in);
        }).start();
    }

    static void closeQuietly(Closeable closeable) {
        if (closeable == null) {
            return;
        }
        try {
            closeable.close();
        } catch (IOException | RuntimeException ignored) {
            // Closing what ended: nothing to add.
        }
    }

    static byte[] empty() {
        return EMPTY;
    }
}
