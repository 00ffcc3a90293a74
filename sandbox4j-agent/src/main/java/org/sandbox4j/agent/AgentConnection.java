package org.sandbox4j.agent;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestText;

/**
 * One session with a guest agent ({@code s4j-agent}, protocol version 1, see {@code PROTOCOL.md})
 * over a byte stream: a microVM's virtio-serial port, or a resident agent's stdin and stdout.
 *
 * <p>One daemon reader thread reads every frame and hands it to the call waiting on its id, so
 * several execs and file calls run at once; one lock serialises writes. Nothing the agent sends is
 * trusted: each frame's length, magic and version are checked before its payload is allocated,
 * every field is bounded, each call holds no more than the host let the agent send, and every wait
 * has a deadline. A frame the protocol does not allow (an unknown type, a malformed payload, more
 * output than was granted) breaks the connection: every waiting call fails with
 * {@link AgentConnectionFailed}, and so does every later one.
 *
 * <p>Thread-safe. {@link #close()} fails what is pending and closes both streams; the reader ends
 * when its stream does (a resident agent's process is ended by {@link ResidentAgent#close()}).
 */
public final class AgentConnection implements AutoCloseable {

    /** How often the handshake is sent again until the agent answers (a guest opens its port late). */
    public static final Duration HELLO_RESEND = Duration.ofMillis(500);
    /** How long a request other than an exec may wait for its answer. */
    public static final Duration REQUEST_DEADLINE = Duration.ofSeconds(30);
    /** The longest lease {@link #setLease} arms. */
    public static final Duration MAX_LEASE = Duration.ofSeconds(AgentProtocol.LEASE_MAX_SECONDS);
    /** How long a write may wait behind another before the agent is taken to have stopped reading. */
    static final Duration SEND_WAIT = Duration.ofSeconds(10);
    /** What a one-answer request may have waiting: one frame and change. */
    static final long ONE_ANSWER_BYTES = 2L * (AgentProtocol.MAX_PAYLOAD + AgentProtocol.PREFIX_BYTES);

    /** The payload of the note queued for a call with an {@link OutputSink}: an OUT frame can never be empty. */
    static final byte[] OUTPUT_ARRIVED = new byte[0];

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final System.Logger LOG = System.getLogger(AgentConnection.class.getName());

    private final InputStream in;
    private final OutputStream out;
    private final String backendName;
    private final FrameStream frames;
    private final WriteLock writeLock = new WriteLock(SEND_WAIT);
    private final Map<Integer, PendingCall> calls = new ConcurrentHashMap<>();
    private final AtomicInteger nextId;
    private final int helloId;
    private final byte[] nonce = new byte[AgentProtocol.NONCE_BYTES];
    private final CompletableFuture<AgentHello> hello = new CompletableFuture<>();
    private final Object failing = new Object();
    private volatile AgentConnectionFailed failure;
    /** Written by the reader alone: frames before the handshake are another session's. */
    private boolean established;
    /** The last ERROR the agent answered a HELLO with, for the handshake's timeout message. */
    private volatile AgentError helloRefusal;

    private AgentConnection(InputStream in, OutputStream out, String backendName) {
        this.in = in;
        this.out = out;
        this.backendName = backendName;
        this.frames = new FrameStream(in);
        RANDOM.nextBytes(nonce);
        // Ids are the host's choice; a random start keeps a stale frame of an earlier host off this session's ids.
        this.helloId = 1 + RANDOM.nextInt(Integer.MAX_VALUE - 1);
        this.nextId = new AtomicInteger(helloId);
    }

    /**
     * Opens a session: sends {@code HELLO} with a fresh random nonce, and again every
     * {@link #HELLO_RESEND} until the agent's {@code HELLO_OK} echoing that nonce arrives; every
     * frame before it (an older session's) is discarded.
     *
     * @param in            the agent's output
     * @param out           the agent's input
     * @param backendName   for messages
     * @param helloDeadline how long the agent may take to answer (a microVM's boot)
     * @throws AgentConnectionFailed no answer within the deadline, or the stream ended or broke first
     */
    public static AgentConnection open(InputStream in, OutputStream out, String backendName, Duration helloDeadline) {
        Objects.requireNonNull(in, "in");
        Objects.requireNonNull(out, "out");
        Objects.requireNonNull(backendName, "backendName");
        if (helloDeadline.isNegative() || helloDeadline.isZero()) {
            throw new IllegalArgumentException("the hello deadline must be positive, not " + helloDeadline);
        }
        AgentConnection connection = new AgentConnection(in, out, backendName);
        connection.startReader();
        try {
            connection.handshake(helloDeadline);
            return connection;
        } catch (RuntimeException failed) {
            connection.close();
            throw failed;
        }
    }

    private void handshake(Duration helloDeadline) {
        long deadline = System.nanoTime() + helloDeadline.toNanos();
        byte[] payload = Payload.create().u16(AgentProtocol.VERSION).u16(AgentProtocol.VERSION).bytes(nonce).build();
        boolean interrupted = false;
        try {
            while (true) {
                send(AgentProtocol.HELLO, helloId, payload);
                long wait = Math.min(HELLO_RESEND.toNanos(), deadline - System.nanoTime());
                try {
                    hello.get(Math.max(wait, 0), TimeUnit.NANOSECONDS);
                    return;
                } catch (TimeoutException notYet) {
                    if (System.nanoTime() - deadline >= 0) {
                        AgentError refused = helloRefusal;
                        throw new AgentConnectionFailed("backend '" + backendName + "': the guest agent did not answer "
                                + "the handshake within " + helloDeadline.toMillis() + " ms (sent every "
                                + HELLO_RESEND.toMillis() + " ms"
                                + (refused == null ? "" : "; it refused it with " + refused.describe())
                                + "): check that the guest runs s4j-agent on this stream (for a microVM, that it "
                                + "booted: see its console log), or allow it longer");
                    }
                } catch (ExecutionException broken) {
                    throw failure();
                } catch (InterruptedException e) {
                    interrupted = true;
                    throw new SandboxInterrupted("interrupted while waiting for the guest agent's handshake", e);
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** What the agent said of itself in the handshake. */
    public AgentHello hello() {
        return hello.getNow(null);
    }

    /** The backend this connection serves, for messages. */
    public String backendName() {
        return backendName;
    }

    /** Whether the connection still works: not closed, and nothing broke it. */
    public boolean isOpen() {
        return failure == null;
    }

    /**
     * Sends {@code PING} and waits for its {@code PONG}.
     *
     * @return the round trip
     * @throws SandboxTimeoutException no answer within {@code timeout}
     */
    public Duration ping(Duration timeout) {
        byte[] data = new byte[16];
        RANDOM.nextBytes(data);
        long start = System.nanoTime();
        Frame answer = request(AgentProtocol.PING, Payload.create().bytes(data).build(), timeout, "ping");
        expect(answer, AgentProtocol.PONG, "ping");
        if (!Arrays.equals(data, decode(() -> answer.reader().bytes(AgentProtocol.PING_MAX, "the ping data")))) {
            throw broken(new AgentProtocolViolation("the agent answered a ping with other data"));
        }
        return Duration.ofNanos(System.nanoTime() - start);
    }

    /**
     * Mixes {@code seed} into the guest's random pool ({@code RESEED}); send it after every snapshot
     * restore, before any exec.
     *
     * @param seed 1 to 4096 bytes of fresh randomness
     * @return the bits of entropy the guest credited (0 where it may only mix them in)
     */
    public long reseed(byte[] seed) {
        if (seed.length < 1 || seed.length > AgentProtocol.RESEED_MAX) {
            throw new IllegalArgumentException("a reseed takes 1 to " + AgentProtocol.RESEED_MAX + " bytes, not "
                    + seed.length);
        }
        Frame answer = request(AgentProtocol.RESEED, Payload.create().bytes(seed).build(), REQUEST_DEADLINE, "reseed");
        return done(answer, "reseed the guest's random pool");
    }

    /**
     * Sets the guest's clock (CLOCK_REALTIME) to {@code now}: a guest restored from a snapshot
     * wakes with the clock of the instant the snapshot was taken.
     */
    public void setClock(java.time.Instant now) {
        if (now.getEpochSecond() < 0) {
            throw new IllegalArgumentException("the guest's clock cannot be set before 1970, to " + now);
        }
        done(request(AgentProtocol.SET_CLOCK, Payload.create().u64(now.getEpochSecond()).u32(now.getNano()).build(),
                REQUEST_DEADLINE, "set the clock"), "set the guest's clock");
    }

    /**
     * Arms or renews the guest's lease ({@code SET_LEASE}): unless this is sent again within
     * {@code lease}, the agent ends every command and powers the guest off (a resident agent exits),
     * whatever became of the host, so a guest whose host vanished ends itself. A new session does
     * not end a lease; {@link Duration#ZERO} does. Counted in whole seconds, rounded up.
     *
     * @param lease zero, or 1 s to 366 days
     * @return what was left of the lease it replaces; zero when none was armed
     * @throws SandboxException the agent predates leases ({@link AgentHello#lease()} is false)
     */
    public Duration setLease(Duration lease) {
        long seconds = lease.isZero() ? 0 : lease.plusNanos(999_999_999).getSeconds();
        if (lease.isNegative() || seconds > MAX_LEASE.toSeconds()) {
            throw new IllegalArgumentException("a guest's lease is 0 (none) to " + MAX_LEASE.toSeconds() + " s, not "
                    + lease);
        }
        AgentHello said = hello();
        if (said == null || !said.lease()) {
            throw new SandboxException("backend '" + backendName + "': the guest agent ("
                    + (said == null ? "no handshake" : GuestText.quote(said.agent())) + ") predates leases "
                    + "(SET_LEASE): rebuild the guest with sandbox4j-microvm/src/main/guest/build-guest.sh");
        }
        // An answer later than the lease is of no use: the guest has powered off by then.
        Duration wait = seconds == 0 || lease.compareTo(REQUEST_DEADLINE) > 0 ? REQUEST_DEADLINE : lease;
        long left = done(request(AgentProtocol.SET_LEASE, Payload.create().u32(seconds).build(), wait, "set the lease"),
                "set the guest's lease");
        return Duration.ofSeconds(left);
    }

    /**
     * Asks the agent to kill every command and power the guest off (a resident agent exits). The
     * stream ends afterwards, and this connection with it.
     */
    public void shutdown() {
        done(request(AgentProtocol.SHUTDOWN, Payload.create().u8(0).build(), REQUEST_DEADLINE, "shutdown"),
                "shut down");
    }

    /**
     * Runs {@code argv} in the guest and returns its result, as every backend's exec does: see
     * {@link AgentExec}. Several execs may run at once.
     *
     * @param argv        the program and its arguments, executed directly (a shell line is
     *                    {@code ["/bin/sh", "-c", line]}); a name without {@code /} is searched in
     *                    {@code env}'s {@code PATH}
     * @param cwd         the guest directory to run in, absolute
     * @param env         the command's whole environment: nothing else reaches it
     * @param options     the caller's stdin, timeout, output cap and listener (its working directory
     *                    and environment are not read: {@code cwd} and {@code env} are)
     * @param shellLine   the command as the caller wrote it, for messages
     */
    public ExecResult exec(List<String> argv, String cwd, Map<String, String> env, ExecOptions options,
            String shellLine) {
        return new AgentExec(this, argv, cwd, env, options, shellLine, false, false).run();
    }

    /**
     * As {@link #exec}, but whatever the command left running when its leader exits is ended too,
     * before its result (agent 1.2, {@link AgentHello#treeReport()}; an older agent leaves it).
     * Where the agent's kill cannot confirm the tree is gone, this throws {@link AgentKillFailed}.
     */
    public ExecResult execEndingTree(List<String> argv, String cwd, Map<String, String> env, ExecOptions options,
            String shellLine) {
        return new AgentExec(this, argv, cwd, env, options, shellLine, false, treeReport()).run();
    }

    /**
     * Starts {@code argv} as an interactive process ({@code Sandbox.start}): stdin through the
     * agent's window, output streamed into the handle's windows (or its listener) with credit given
     * back only for what the handle took, signals to the command's process group, and its lifetime,
     * {@code kill} and {@code close} ending the whole tree. With agent 1.2 the tree also ends when the
     * leader exits.
     *
     * @param sandboxId       the sandbox's name, for the per-sandbox process limit and messages
     * @param sandboxDisposed whether the sandbox was disposed of (asked after a death by signal)
     * @throws org.sandbox4j.core.SandboxProcessLimitExceeded the sandbox runs as many processes as it may
     */
    public org.sandbox4j.core.SandboxProcess start(List<String> argv, String cwd, Map<String, String> env,
            org.sandbox4j.core.ProcessOptions options, String shellLine, String sandboxId,
            java.util.function.BooleanSupplier sandboxDisposed) {
        return AgentProcess.start(this, argv, cwd, env, options, shellLine, sandboxId, sandboxDisposed);
    }

    /** Whether the agent ends a tree at its leader's exit on request and reports it (agent 1.2). */
    boolean treeReport() {
        AgentHello said = hello();
        return said != null && said.treeReport();
    }

    /**
     * As {@link #exec}, but with the agent's own identity rather than the unprivileged user it runs
     * commands as: for the host's own setup of a guest (making a work dir and handing it to that
     * user), never for a caller's command.
     */
    public ExecResult execAsAgent(List<String> argv, String cwd, Map<String, String> env, ExecOptions options,
            String shellLine) {
        return new AgentExec(this, argv, cwd, env, options, shellLine, true, false).run();
    }

    /** Fails every pending call and closes both streams. Idempotent. */
    @Override
    public void close() {
        broken(new AgentConnectionFailed("backend '" + backendName + "': the connection to the guest agent was closed "
                + "by the host"));
    }

    // ---------------------------------------------------------------- for the calls of this package

    /** The largest payload this host may send the agent. */
    int maxPayload() {
        AgentHello said = hello();
        return said == null ? AgentProtocol.MAX_PAYLOAD : Math.min(said.maxPayload(), AgentProtocol.MAX_PAYLOAD);
    }

    /** A fresh id the agent will answer on, bounded to {@code maxQueuedBytes} waiting. */
    PendingCall register(long maxQueuedBytes) {
        return register(maxQueuedBytes, null);
    }

    /**
     * A fresh id as {@link #register(long)}, whose OUT frames' data the reader puts into
     * {@code sink} (a {@link #OUTPUT_ARRIVED} note queued instead), or queues as frames when it is
     * {@code null}.
     */
    PendingCall register(long maxQueuedBytes, OutputSink sink) {
        while (true) {
            int id = nextId.incrementAndGet();
            if (id == 0 || id == helloId) {
                continue;
            }
            PendingCall call = new PendingCall(id, maxQueuedBytes, sink);
            if (calls.putIfAbsent(id, call) != null) {
                continue;
            }
            if (failure != null) {
                calls.remove(id);
                throw failure();
            }
            return call;
        }
    }

    /** How many calls wait for the agent (for tests). */
    int pendingCalls() {
        return calls.size();
    }

    /** The ids of the calls waiting (for tests). */
    java.util.Set<Integer> pendingIds() {
        return java.util.Set.copyOf(calls.keySet());
    }

    /** Frames about {@code call} that arrive later are dropped. */
    void unregister(PendingCall call) {
        calls.remove(call.id(), call);
    }

    /**
     * Writes one frame. A write that cannot start within {@link #SEND_WAIT} (another is stuck: the
     * agent stopped reading) breaks the connection. Not interruptible: a KILL must go out even from
     * an interrupted thread.
     */
    void send(int type, int id, byte[] payload) {
        if (failure != null) {
            throw failure();
        }
        byte[] frame = FrameStream.encode(type, id, payload);
        if (!writeLock.tryLock()) {
            throw broken(new AgentConnectionFailed("backend '" + backendName + "': a write to the guest agent waited "
                    + SEND_WAIT.toSeconds() + " s behind another that did not finish: the agent stopped reading"));
        }
        try {
            out.write(frame);
            out.flush();
        } catch (IOException e) {
            throw broken(new AgentConnectionFailed("backend '" + backendName + "': writing to the guest agent failed ("
                    + ErrorDetail.of(e) + "): it exited or its stream closed", e));
        } finally {
            writeLock.unlock();
        }
    }

    /** Sends one request and waits for its one answer (which may be an {@code ERROR}). */
    Frame request(int type, byte[] payload, Duration timeout, String what) {
        PendingCall call = register(ONE_ANSWER_BYTES);
        try {
            send(type, call.id(), payload);
            return next(call, System.nanoTime() + timeout.toNanos(), what, timeout);
        } finally {
            unregister(call);
        }
    }

    /**
     * The next frame of {@code call}.
     *
     * @throws SandboxTimeoutException none came before the deadline
     * @throws SandboxInterrupted      the thread was interrupted
     */
    Frame next(PendingCall call, long deadlineNanos, String what, Duration timeout) {
        Frame frame;
        try {
            frame = call.next(deadlineNanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxInterrupted("interrupted while waiting for the guest agent to " + what, e);
        }
        if (frame == null) {
            throw new SandboxTimeoutException("backend '" + backendName + "': the guest agent did not answer (" + what
                    + ") within " + timeout.toMillis() + " ms; the guest may be overloaded or hung");
        }
        return frame;
    }

    /** {@code frame} is of {@code type}, or the agent broke the protocol (an ERROR is the caller's to map first). */
    void expect(Frame frame, int type, String what) {
        if (frame.type() == AgentProtocol.ERROR) {
            throw refused(error(frame), what);
        }
        if (frame.type() != type) {
            throw broken(new AgentProtocolViolation("the agent answered a request to " + what + " with a frame of "
                    + "type 0x" + Integer.toHexString(frame.type())));
        }
    }

    /** The value of a {@code DONE} answer. */
    long done(Frame frame, String what) {
        expect(frame, AgentProtocol.DONE, what);
        return decode(() -> frame.reader().u64());
    }

    /** The {@code ERROR} in {@code frame}; a malformed one breaks the connection. */
    AgentError error(Frame frame) {
        return decode(() -> AgentError.of(frame));
    }

    /** Decodes agent fields; a malformed payload breaks the connection. */
    <T> T decode(java.util.function.Supplier<T> fields) {
        try {
            return fields.get();
        } catch (AgentProtocolViolation violation) {
            throw broken(violation);
        }
    }

    /** The agent could not do what it was asked, for a reason no caller maps: a fault of the guest or this host. */
    SandboxException refused(AgentError error, String what) {
        return new SandboxException("backend '" + backendName + "': the guest agent could not " + what + ": "
                + error.describe());
    }

    /** Breaks the connection for what the agent sent, and returns the failure to throw. */
    AgentConnectionFailed broken(AgentProtocolViolation violation) {
        return broken(new AgentConnectionFailed("backend '" + backendName + "': the guest agent broke the protocol ("
                + violation.getMessage() + "); the connection is closed: start a new one (restart the guest)",
                violation));
    }

    // ---------------------------------------------------------------- the reader

    private void startReader() {
        Thread reader = new Thread(this::readLoop, "sandbox4j-agent-reader-" + backendName);
        reader.setDaemon(true);
        reader.start();
    }

    private void readLoop() {
        try {
            while (failure == null) {
                FrameStream.Header header = frames.header(!established);
                if (established && intoSink(header)) {
                    continue;
                }
                Frame frame = frames.payload(header);
                if (established) {
                    route(frame);
                } else {
                    beforeHandshake(frame);
                }
            }
        } catch (AgentProtocolViolation violation) {
            broken(violation);
        } catch (EOFException ended) {
            broken(new AgentConnectionFailed("backend '" + backendName + "': the guest agent's stream ended (the "
                    + "agent exited, or the guest stopped)", ended));
        } catch (IOException | RuntimeException | OutOfMemoryError e) {
            broken(new AgentConnectionFailed("backend '" + backendName + "': reading from the guest agent failed: "
                    + ErrorDetail.of(e), e));
        }
    }

    /** Reads an OUT frame for a call with a sink into the sink; whether it did (else the frame is still unread). */
    private boolean intoSink(FrameStream.Header header) throws IOException {
        if (header.type() != AgentProtocol.OUT || header.id() == 0) {
            return false;
        }
        PendingCall call = calls.get(header.id());
        Optional<OutputSink> sink = call == null ? Optional.empty() : call.sink();
        if (sink.isEmpty()) {
            return false;
        }
        if (sink.get().receive(frames, header.payloadLength())) {
            call.deliver(new Frame(AgentProtocol.OUT, call.id(), OUTPUT_ARRIVED));
        }
        return true;
    }

    private void beforeHandshake(Frame frame) {
        if (frame.id() != helloId) {
            return;
        }
        if (frame.type() == AgentProtocol.ERROR) {
            AgentError refused;
            try {
                refused = AgentError.of(frame);
            } catch (AgentProtocolViolation stale) {
                return;
            }
            if (refused.code() == AgentProtocol.ErrorCode.VERSION) {
                throw new AgentProtocolViolation("the agent speaks no version this host does: "
                        + refused.describe());
            }
            helloRefusal = refused;
            return;
        }
        if (frame.type() != AgentProtocol.HELLO_OK) {
            return;
        }
        Optional<AgentHello> said = AgentHello.parse(frame, nonce);
        if (said.isPresent()) {
            established = true;
            hello.complete(said.get());
        }
    }

    private void route(Frame frame) {
        if (!AgentProtocol.isAgentMessage(frame.type())) {
            throw new AgentProtocolViolation("a frame of unknown type 0x" + Integer.toHexString(frame.type()));
        }
        if (frame.id() == 0) {
            if (frame.type() == AgentProtocol.ERROR) {
                throw new AgentProtocolViolation("the agent reported that the host's stream broke, and dropped the "
                        + "session: " + AgentError.of(frame).describe());
            }
            return;
        }
        PendingCall call = calls.get(frame.id());
        if (call != null) {
            call.deliver(frame);
        }
        // Otherwise about a call that ended (an ack crossing an EXIT, a resent HELLO's answer): dropped.
    }

    // ---------------------------------------------------------------- breaking

    private AgentConnectionFailed failure() {
        AgentConnectionFailed cause = failure;
        return new AgentConnectionFailed(cause.getMessage(), cause);
    }

    /** The first failure wins: every call fails with it, and both streams are closed. */
    private AgentConnectionFailed broken(AgentConnectionFailed cause) {
        synchronized (failing) {
            if (failure != null) {
                return failure();
            }
            failure = cause;
        }
        LOG.log(System.Logger.Level.DEBUG, () -> ErrorDetail.of(cause));
        calls.values().forEach(call -> call.fail(cause));
        calls.clear();
        hello.completeExceptionally(cause);
        // A stream's close can wait behind a write stuck in it: closed on a thread of its own, never the caller's.
        Thread closer = new Thread(() -> {
            closeQuietly(out);
            closeQuietly(in);
        }, "sandbox4j-agent-close-" + backendName);
        closer.setDaemon(true);
        closer.start();
        return cause;
    }

    private static void closeQuietly(Closeable stream) {
        try {
            stream.close();
        } catch (IOException | RuntimeException ignored) {
            // Closing what broke: nothing to add.
        }
    }
}
