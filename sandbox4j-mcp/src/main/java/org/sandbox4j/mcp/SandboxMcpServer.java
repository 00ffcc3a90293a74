package org.sandbox4j.mcp;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.function.BiFunction;
import java.util.function.Function;

import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema.ServerCapabilities;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.tool.AdapterBuilder;
import org.sandbox4j.core.tool.CallApproval;
import org.sandbox4j.core.tool.CurrentConversation;
import org.sandbox4j.core.tool.FrameworkCalls;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.ToolSet;

/**
 * An MCP server, on the official MCP Java SDK, that offers sandbox4j kinds as MCP tools. The
 * conversation key of every call is {@code (scope, MCP session id, agent dir)}: the session comes
 * from the SDK's exchange for the call in progress, never from the tool's arguments, so two MCP
 * sessions never share a sandbox. When a session closes, its sandboxes are disposed of.
 *
 * <pre>{@code
 * try (SandboxMcpServer server = SandboxMcpServer.builder()
 *         .router(router)
 *         .scope("alice")
 *         .tools(context -> List.of(CodeAct.builder(router, "mcp", context).build()))
 *         .build()) {
 *     server.serveStdio();                       // until the client closes stdin
 * }
 * }</pre>
 *
 * <p>The tool factory is called once, at {@link Builder#build()}, with the {@link CallerContext}
 * the server answers per call; a kind that cannot be served fails there, and one with no backend
 * (an empty {@code Optional}) is left out. A tool that requires a person's approval of each call
 * fails there too unless the host gave {@link Builder#approval} or {@link Builder#approvalByClient}
 * (core's {@link ToolSet} rule, as in every adapter).
 *
 * <p>With {@link Builder#sessionFiles session files} enabled, the server also lists
 * {@code write_file}, {@code read_file}, {@code list_files} and {@code delete_file}, working on a
 * file area of the calling session's own, and hands the factory that area as a
 * {@link SessionFileStore} so {@code execute_code} can take its {@code files} from it and land its
 * {@code outputs} in it. The area is deleted with the session. Thread-safe.
 */
public final class SandboxMcpServer implements AutoCloseable {

    /** The path of the streamable HTTP endpoint. */
    public static final String ENDPOINT_PATH = "/mcp";

    /** The name the server gives in its initialize answer unless told otherwise. */
    public static final String DEFAULT_SERVER_NAME = "sandbox4j";

    /** The version it gives unless told otherwise: the jar's, or this when the jar does not say. */
    public static final String UNKNOWN_VERSION = "unknown";

    /**
     * How long an HTTP session may stay idle (no request, no open stream) before it is ended and its
     * sandboxes disposed of: a client that went away without a DELETE holds nothing for long.
     */
    public static final Duration DEFAULT_IDLE_SESSION_TIMEOUT = Duration.ofMinutes(10);

    private static final String FRAMEWORK = "MCP";

    /** What a stdio transport's one session is called while a message is decoded (its id is the SDK's). */
    private static final String STDIO_SESSION = "stdio";

    /** {@link Builder#approvalByClient()}: the client asked before it sent the call. */
    private static final CallApproval CLIENT_ASKS = (tool, arguments, session) -> true;

    private final SandboxRouter router;
    private final String scope;
    private final List<SandboxTool> tools;
    private final FrameworkCalls calls;
    private final Optional<CallApproval> approval;
    private final Optional<SessionFileStore> sessionFiles;
    private final Optional<String> bearerToken;
    private final Duration idleSessionTimeout;
    private final String serverName;
    private final String serverVersion;
    private final McpJsonMapper mapper = McpJsonDefaults.getMapper();
    private final List<AutoCloseable> servings = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    private SandboxMcpServer(Builder b, String scope, AdapterBuilder.Assembled assembled,
            Optional<CallApproval> approval, Optional<SessionFileStore> sessionFiles) {
        this.router = b.router;
        this.scope = scope;
        this.tools = assembled.tools();
        this.calls = assembled.calls();
        this.approval = approval;
        this.sessionFiles = sessionFiles;
        this.bearerToken = Optional.ofNullable(b.bearerToken);
        this.idleSessionTimeout = b.idleSessionTimeout;
        this.serverName = b.serverName;
        this.serverVersion = b.serverVersion;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The names of the tools the server lists: the factory's, in its order, then the file tools
     * when session files are enabled; empty when nothing was configured.
     */
    public List<String> toolNames() {
        List<String> names = new ArrayList<>(tools.stream().map(SandboxTool::name).toList());
        sessionFiles.ifPresent(files -> names.addAll(SessionFiles.TOOL_NAMES));
        return List.copyOf(names);
    }

    /** The session file areas the tools were handed, when session files are enabled. */
    public Optional<SessionFileStore> sessionFiles() {
        return sessionFiles;
    }

    /** The scope of every key this server forms. */
    public String scope() {
        return scope;
    }

    /**
     * Serves one MCP session over this process's stdin and stdout, and returns when stdin closes
     * (or the server is closed); the session's sandboxes are then disposed of, as they are when
     * the process is ended by a signal (a shutdown hook, held while serving). While it serves,
     * {@code System.out} is pointed at {@code System.err}, so nothing but the protocol reaches
     * stdout.
     */
    public void serveStdio() {
        PrintStream protocol = System.out;
        InputStream in = System.in;
        System.setOut(System.err);
        try {
            serveStdio(in, protocol);
        } finally {
            System.setOut(protocol);
        }
    }

    /** {@link #serveStdio()} on the given streams. */
    void serveStdio(InputStream in, OutputStream out) {
        ensureOpen();
        SessionLedger ledger = newLedger();
        CountDownLatch ended = new CountDownLatch(1);
        ClientCancellations cancellations = ClientCancellations.oneSession();
        StdioServerTransportProvider transport = new StdioServerTransportProvider(
                new TransportMapper(mapper, cancellations, () -> STDIO_SESSION), new EndOfInput(in, ended::countDown),
                out);
        McpSyncServer server = configure(McpServer.sync(transport), ledger, cancellations);
        AutoCloseable serving = ended::countDown;
        servings.add(serving);
        // A client that ends the server by signal (most do, after closing stdin or instead of it)
        // still gets its session's sandboxes disposed of.
        Thread onSignal = new Thread(ledger::closeAll, "sandbox4j-mcp-stdio-shutdown");
        boolean hooked = addShutdownHook(onSignal);
        try {
            ended.await();
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
        } finally {
            servings.remove(serving);
            server.closeGracefully();
            ledger.closeAll();
            if (hooked) {
                removeShutdownHook(onSignal);
            }
        }
    }

    private static boolean addShutdownHook(Thread hook) {
        try {
            Runtime.getRuntime().addShutdownHook(hook);
            return true;
        } catch (IllegalStateException shuttingDown) {
            return false;
        }
    }

    private static void removeShutdownHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // The hook is running or has run: it disposes of what closeAll left, which is nothing.
        }
    }

    /** Serves streamable HTTP on {@code 127.0.0.1:port} ({@code 0}: a free port) until the endpoint is closed. */
    public HttpEndpoint serveHttp(int port) {
        return serveHttp(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
    }

    /**
     * Serves streamable HTTP on {@code address}, which must be a loopback address.
     *
     * @throws IllegalArgumentException a non-loopback or unresolved address
     * @throws IllegalStateException    the address could not be bound, or the server is closed
     */
    public HttpEndpoint serveHttp(InetSocketAddress address) {
        Objects.requireNonNull(address, "address");
        if (address.getAddress() == null || !address.getAddress().isLoopbackAddress()) {
            throw new IllegalArgumentException("MCP over HTTP listens on a loopback address only, not " + address
                    + "; serve on 127.0.0.1 (serveHttp(port)) and put a reverse proxy with its own authentication "
                    + "in front if other machines must reach it");
        }
        ensureOpen();
        SessionLedger ledger = newLedger();
        ClientCancellations cancellations = ClientCancellations.perSession();
        HttpServletStreamableServerTransportProvider transport = HttpServletStreamableServerTransportProvider.builder()
                .jsonMapper(new TransportMapper(mapper, cancellations, SessionTracker::receivingSession))
                .mcpEndpoint(ENDPOINT_PATH)
                // The SDK evicts a session idle over a whole sweep: with half the timeout, by the timeout.
                .sessionSweepInterval(idleSessionTimeout.dividedBy(2))
                .build();
        McpSyncServer server = configure(McpServer.sync(transport), ledger, cancellations);
        HttpEndpoint[] self = new HttpEndpoint[1];
        HttpEndpoint endpoint = HttpEndpoint.start(address, transport, server, ledger, bearerToken,
                idleSessionTimeout, () -> servings.remove(self[0]));
        self[0] = endpoint;
        servings.add(endpoint);
        return endpoint;
    }

    /** A transport's ledger: a closing session's sandboxes are disposed of, and its file area deleted. */
    private SessionLedger newLedger() {
        return new SessionLedger(router, scope, session -> sessionFiles.ifPresent(files -> files.deleteArea(session)));
    }

    private <S extends McpServer.SyncSpecification<S>> McpSyncServer configure(McpServer.SyncSpecification<S> spec,
            SessionLedger ledger, ClientCancellations cancellations) {
        List<SyncToolSpecification> specifications = new ArrayList<>();
        for (SandboxTool tool : tools) {
            specifications.add(ToolBridge.specification(tool, mapper, calls, approval, ledger, cancellations));
        }
        sessionFiles.ifPresent(files -> specifications.addAll(FileTools.specifications(files, mapper, calls,
                ledger, cancellations)));
        return spec.serverInfo(serverName, serverVersion)
                .jsonMapper(mapper)
                .capabilities(ServerCapabilities.builder().tools(false).build())
                .tools(specifications)
                .build();
    }

    /**
     * Stops every transport still serving, disposes of the sandboxes of every session they saw,
     * and deletes every session file area left. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        for (AutoCloseable serving : List.copyOf(servings)) {
            try {
                serving.close();
            } catch (Exception ignored) {
                // Each serving logs its own failures; closing the rest matters more.
            }
        }
        servings.clear();
        sessionFiles.ifPresent(SessionFileStore::deleteAll);
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("this SandboxMcpServer is closed");
        }
    }

    /** Tells when the client closed its end (end of input, or a read that failed). */
    private static final class EndOfInput extends FilterInputStream {
        private final Runnable onEnd;

        EndOfInput(InputStream in, Runnable onEnd) {
            super(in);
            this.onEnd = onEnd;
        }

        @Override
        public int read() throws IOException {
            return watch(() -> super.read());
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            return watch(() -> super.read(buffer, offset, length));
        }

        private int watch(IoRead read) throws IOException {
            try {
                int n = read.read();
                if (n < 0) {
                    onEnd.run();
                }
                return n;
            } catch (IOException failure) {
                onEnd.run();
                throw failure;
            }
        }

        @FunctionalInterface
        private interface IoRead {
            int read() throws IOException;
        }
    }

    /**
     * Single-use builder: core's {@link AdapterBuilder} settings, with the router, the session
     * files and the transports' settings.
     */
    public static final class Builder extends AdapterBuilder<Builder, CallApproval> {
        private SandboxRouter router;
        private BiFunction<? super CallerContext, ? super SessionFileStore,
                ? extends Collection<Optional<SandboxTool>>> filesToolFactory;
        private SessionFiles sessionFiles;
        private String bearerToken;
        private Duration idleSessionTimeout = DEFAULT_IDLE_SESSION_TIMEOUT;
        private String serverName = DEFAULT_SERVER_NAME;
        private String serverVersion = Optional.ofNullable(SandboxMcpServer.class.getPackage().getImplementationVersion())
                .orElse(UNKNOWN_VERSION);

        private Builder() {
            super(FRAMEWORK);
        }

        /** The router the tools were built on: a closing session's sandboxes are disposed of through it. */
        public Builder router(SandboxRouter router) {
            this.router = router;
            return this;
        }

        /** {@inheritDoc} The thread is the MCP session of the call in progress. */
        @Override
        public Builder tools(Function<? super CallerContext, ? extends Collection<Optional<SandboxTool>>> factory) {
            this.filesToolFactory = null;
            return super.tools(Objects.requireNonNull(factory, "factory"));
        }

        /**
         * As {@link #tools(Function)}, and the factory is also handed the session file areas
         * (enable them with {@link #sessionFiles}), to give a kind as its file store and output
         * sink: {@code (context, files) -> List.of(CodeAct.builder(router, "mcp", context)
         * .fileStore(files).outputs(OutputMode.DECLARED).outputSink(files).build())}.
         */
        public Builder tools(BiFunction<? super CallerContext, ? super SessionFileStore,
                ? extends Collection<Optional<SandboxTool>>> factory) {
            this.filesToolFactory = Objects.requireNonNull(factory, "factory");
            return this;
        }

        /**
         * Enables the file tools ({@link SessionFiles#TOOL_NAMES}) on a per-session file area under
         * {@code files.root()}; off by default, and then the server lists no file tool.
         */
        public Builder sessionFiles(SessionFiles files) {
            this.sessionFiles = Objects.requireNonNull(files, "files");
            return this;
        }

        /**
         * {@inheritDoc} The thread it is asked with is the MCP session id; {@link #approvalByClient()}
         * is the other way to offer such a tool.
         */
        @Override
        public Builder approval(CallApproval approval) {
            return super.approval(Objects.requireNonNull(approval, "approval"));
        }

        /**
         * Declares that the MCP client asks a person before each call of a tool the server lists
         * as destructive (every tool that requires approval is, with {@code destructiveHint=true}),
         * so the server runs such calls as they come. Only for a client known to ask: the server
         * cannot tell whether one did.
         */
        public Builder approvalByClient() {
            return super.approval(CLIENT_ASKS);
        }

        /** HTTP only: requests must carry {@code Authorization: Bearer <token>}, or get 401. */
        public Builder bearerToken(String token) {
            this.bearerToken = token;
            return this;
        }

        /** HTTP only: how long a session may stay idle before it may be ended (and its sandboxes disposed of). */
        public Builder idleSessionTimeout(Duration timeout) {
            this.idleSessionTimeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /** The name and version given in the initialize answer (the CLI gives its own). */
        public Builder serverInfo(String name, String version) {
            this.serverName = Objects.requireNonNull(name, "name");
            this.serverVersion = Objects.requireNonNull(version, "version");
            return this;
        }

        /**
         * Calls the tool factory and builds the server.
         *
         * @throws IllegalArgumentException a blank scope or token, a non-positive idle timeout, two
         *                                  tools with one name (the file tools' included), a tool that
         *                                  requires approval with neither {@link #approval} nor
         *                                  {@link #approvalByClient()} given
         * @throws IllegalStateException    a factory that takes the session files, without them enabled
         * @throws java.io.UncheckedIOException the session files' root cannot be made, or is not a directory
         * @throws org.sandbox4j.core.SandboxPolicyRefusal from the factory: a kind the router cannot serve
         */
        public SandboxMcpServer build() {
            Objects.requireNonNull(router, "router: closing a session disposes of its sandboxes through it");
            if (bearerToken != null && bearerToken.isBlank()) {
                throw new IllegalArgumentException("a bearer token cannot be blank; give none to serve without one");
            }
            if (idleSessionTimeout.isNegative() || idleSessionTimeout.isZero()) {
                throw new IllegalArgumentException("the idle session timeout must be positive, not "
                        + idleSessionTimeout);
            }
            if (filesToolFactory != null && sessionFiles == null) {
                throw new IllegalStateException("the tool factory takes the session files, but none are enabled; "
                        + "call sessionFiles(SessionFiles.builder().root(...).build()), or give a factory of the "
                        + "context alone");
            }
            CurrentConversation sessions = new CurrentConversation();
            Optional<SessionFileStore> files = Optional.ofNullable(sessionFiles)
                    .map(limits -> new SessionFileStore(limits, () -> sessions.thread().orElse(null)));
            ToolSet rules = rules("give SandboxMcpServer.builder().approval(...) that asks, or approvalByClient() if "
                    + "the MCP client asks a person before each call of a tool marked destructive");
            if (files.isPresent()) {
                rules = rules.reserving(SessionFiles.TOOL_NAMES, "the session files' tools");
            }
            Assembled assembled = assemble(rules, sessions, filesToolFactory == null ? givenToolFactory()
                    : context -> filesToolFactory.apply(context, files.orElse(null)), ToolBridge.LOG);
            return new SandboxMcpServer(this, givenScope(), assembled, givenApproval(), files);
        }
    }
}
