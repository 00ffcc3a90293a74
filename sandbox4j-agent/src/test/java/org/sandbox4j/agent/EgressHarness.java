package org.sandbox4j.agent;

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
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.sandbox4j.core.ExecOptions;

/**
 * The real agent on this host ({@code --stdio --no-cgroup}, its main protocol on its stdin and
 * stdout) with its egress tunnel on a unix socket this harness listens on, a loopback
 * {@link Upstream} standing in for the proxy, and the tunnel's host end.
 */
final class EgressHarness implements AutoCloseable {

    static final Duration WAIT = Duration.ofSeconds(20);
    private static final Duration POLL = Duration.ofMillis(10);

    final Path dir;
    final Upstream upstream;
    final int listenPort;
    private final ServerSocketChannel portServer;
    private final Process agent;
    private final AgentConnection connection;
    private SocketChannel port;
    private EgressTunnel tunnel;

    private EgressHarness(Path dir, ServerSocketChannel portServer, Upstream upstream, int listenPort, Process agent,
            AgentConnection connection) {
        this.dir = dir;
        this.portServer = portServer;
        this.upstream = upstream;
        this.listenPort = listenPort;
        this.agent = agent;
        this.connection = connection;
    }

    static EgressHarness start() throws IOException {
        Path dir = Files.createTempDirectory("s4j-egress-");
        Path socket = dir.resolve("port.sock");
        ServerSocketChannel portServer = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        portServer.bind(UnixDomainSocketAddress.of(socket));
        portServer.configureBlocking(false);
        int listenPort;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            listenPort = probe.getLocalPort();
        }
        Upstream upstream = Upstream.start();
        Path log = Path.of("target", "egress-agent-" + listenPort + ".log").toAbsolutePath();
        ProcessBuilder builder = new ProcessBuilder(AgentBinary.path().toString(), "--stdio", "--no-cgroup",
                "--egress-port", socket.toString(), "--egress-listen", "127.0.0.1:" + listenPort)
                .redirectError(log.toFile());
        builder.environment().clear();
        Process agent = builder.start();
        AgentConnection connection = AgentConnection.open(agent.getInputStream(), agent.getOutputStream(), "egress",
                ResidentAgent.HELLO_DEADLINE);
        return new EgressHarness(dir, portServer, upstream, listenPort, agent, connection);
    }

    /** The agent's main protocol, served beside the tunnel. */
    AgentConnection connection() {
        return connection;
    }

    /** Runs {@code sh -c line} through the agent's main protocol and returns its stdout. */
    String exec(String line) {
        return connection.exec(List.of("/bin/sh", "-c", line), "/", Map.of("PATH", "/usr/bin:/bin"),
                ExecOptions.in("/", WAIT), line).stdoutText();
    }

    /** Accepts the agent's next connection to the port and serves a tunnel on it, forwarding to the upstream. */
    EgressTunnel connect() throws IOException, InterruptedException {
        return connect(EgressConnector.tcp(upstream.address()));
    }

    EgressTunnel connect(EgressConnector connector) throws IOException, InterruptedException {
        port = acceptPort();
        tunnel = EgressTunnel.start(input(port), output(port), connector, "test");
        if (!tunnel.awaitEstablished(WAIT)) {
            throw new AssertionError("the agent did not answer the tunnel's HELLO: " + tunnel.failure());
        }
        return tunnel;
    }

    /** The agent's next connection to the port, raw. */
    SocketChannel acceptPort() throws IOException, InterruptedException {
        long until = System.nanoTime() + WAIT.toNanos();
        while (true) {
            SocketChannel accepted = portServer.accept();
            if (accepted != null) {
                accepted.configureBlocking(true);
                return accepted;
            }
            if (System.nanoTime() > until) {
                throw new AssertionError("the agent did not connect to its egress port");
            }
            Thread.sleep(POLL.toMillis());
        }
    }

    /** Ends the tunnel and its connection to the port, as a host that goes away. */
    void disconnect() {
        if (tunnel != null) {
            tunnel.close();
        }
        EgressTunnel.closeQuietly(port);
    }

    /** A guest program's connection to the agent's listener. */
    Socket client() throws IOException {
        Socket socket = new Socket(InetAddress.getLoopbackAddress(), listenPort);
        socket.setSoTimeout((int) WAIT.toMillis());
        return socket;
    }

    @Override
    public void close() throws IOException {
        disconnect();
        connection.close();
        agent.destroyForcibly();
        upstream.close();
        portServer.close();
        Files.deleteIfExists(dir.resolve("port.sock"));
        Files.deleteIfExists(dir);
    }

    /** A socket's reading half; not {@code Channels.newInputStream}, whose read blocks the channel's writes. */
    static InputStream input(SocketChannel channel) {
        return new InputStream() {
            @Override
            public int read() throws IOException {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] bytes, int offset, int length) throws IOException {
                Objects.checkFromIndexSize(offset, length, bytes.length);
                return length == 0 ? 0 : channel.read(ByteBuffer.wrap(bytes, offset, length));
            }

            @Override
            public void close() throws IOException {
                channel.close();
            }
        };
    }

    static OutputStream output(SocketChannel channel) {
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] bytes, int offset, int length) throws IOException {
                ByteBuffer buffer = ByteBuffer.wrap(bytes, offset, length);
                while (buffer.hasRemaining()) {
                    channel.write(buffer);
                }
            }

            @Override
            public void close() throws IOException {
                channel.close();
            }
        };
    }

    static InetSocketAddress loopback(int port) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
    }
}
