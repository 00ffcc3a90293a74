package org.sandbox4j.microvm;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.sandbox4j.agent.AgentConnection;
import org.sandbox4j.core.spi.TreeRemoval;

/**
 * The microVM mechanism with none of {@link MicroVmBackend} around it, for the benchmarks to compare
 * with: the very QEMU command line the backend boots ({@link QemuLaunch#argv()} with the builder's
 * defaults) started with a {@link ProcessBuilder}, and a bare {@link AgentConnection} on its agent
 * socket; no record, no console reader, no work dir. It lives in this package, in the bench's jar,
 * only to reach the package-private {@link QemuLaunch}; the QEMU process is killed by pid on close,
 * on a failed boot and at JVM exit.
 */
public final class HandBootedGuest implements AutoCloseable {

    // MicroVmBackend.Builder's defaults, so this guest and the backend's are the same machine.
    private static final Path QEMU = Path.of("/usr/bin/qemu-system-x86_64");
    private static final int MEMORY_MIB = 256;
    private static final int CPUS = 1;
    private static final int OVERLAY_MIB = 128;
    private static final int PROCESSES = 256;
    private static final Duration POLL = Duration.ofMillis(10);
    private static final Duration EXIT_WAIT = Duration.ofSeconds(5);
    private static final String NAME = "hand-booted";

    private final Path directory;
    private final Process qemu;
    private final Thread killAtExit;
    private final AgentConnection agent;

    private HandBootedGuest(Path directory, Process qemu, Thread killAtExit, AgentConnection agent) {
        this.directory = directory;
        this.qemu = qemu;
        this.killAtExit = killAtExit;
        this.agent = agent;
    }

    /**
     * Boots {@code guest} under the accelerator the backend would pick first on this host, in a
     * fresh temporary directory, and opens a bare agent connection before {@code deadline} passes.
     */
    public static HandBootedGuest boot(GuestImage guest, Duration deadline) throws IOException {
        long until = System.nanoTime() + deadline.toNanos();
        Path directory = Files.createTempDirectory("s4jq");
        QemuLaunch launch = new QemuLaunch(QEMU, guest, Accelerator.probeHost().accelerator(), MEMORY_MIB, CPUS,
                OVERLAY_MIB, PROCESSES, directory);
        Process qemu = new ProcessBuilder(launch.argv()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        Thread killAtExit = new Thread(qemu::destroyForcibly, NAME + " qemu killer");
        Runtime.getRuntime().addShutdownHook(killAtExit);
        try {
            qemu.getOutputStream().close();
            SocketChannel channel = connect(launch.agentSocket(), qemu, until);
            Duration left = Duration.ofNanos(Math.max(until - System.nanoTime(), 1));
            AgentConnection agent = AgentConnection.open(input(channel), output(channel), NAME, left);
            return new HandBootedGuest(directory, qemu, killAtExit, agent);
        } catch (IOException | RuntimeException e) {
            kill(qemu, killAtExit, directory);
            throw e;
        }
    }

    /** The bare connection to the guest's agent. */
    public AgentConnection agent() {
        return agent;
    }

    /** Kills QEMU by its pid and removes the directory. */
    @Override
    public void close() {
        try {
            agent.close();
        } finally {
            kill(qemu, killAtExit, directory);
        }
    }

    private static void kill(Process qemu, Thread killAtExit, Path directory) {
        qemu.destroyForcibly();
        try {
            qemu.waitFor(EXIT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            Runtime.getRuntime().removeShutdownHook(killAtExit);
            TreeRemoval.remove(directory, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | IllegalStateException leftForTheOs) {
            // A temporary directory left behind, or the JVM already exiting (its hook kills QEMU).
        }
    }

    /** As MicroVm's: the socket QEMU serves, as soon as it listens, until the deadline or QEMU's exit. */
    private static SocketChannel connect(Path socket, Process qemu, long until) throws IOException {
        while (true) {
            if (Files.exists(socket)) {
                SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
                try {
                    channel.connect(UnixDomainSocketAddress.of(socket));
                    return channel;
                } catch (IOException notListeningYet) {
                    channel.close();
                }
            }
            if (!qemu.isAlive() || System.nanoTime() > until) {
                throw new IOException("QEMU did not serve " + socket + (qemu.isAlive() ? " in time" : ": it exited"));
            }
            try {
                Thread.sleep(POLL.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while waiting for " + socket, e);
            }
        }
    }

    /** Not Channels.newInputStream, whose lock would hold every write behind the reader (as in MicroVm). */
    private static InputStream input(SocketChannel channel) {
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

    private static OutputStream output(SocketChannel channel) {
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
}
