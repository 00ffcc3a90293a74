package org.sandbox4j.microvm;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import jdk.net.ExtendedSocketOptions;
import org.sandbox4j.core.SandboxException;

/**
 * The unix sockets QEMU serves (the agent's port, the console, its monitor): connecting to one, and
 * its two halves as streams. They live in QEMU's own directory, where a compromised QEMU could put
 * a link to some other socket in place of its own; so whoever answers must be QEMU's user, the
 * owner of that directory (which sits in one only this host user may write): the peer's
 * credentials are checked before a byte is sent.
 */
final class QemuSockets {

    private static final Duration POLL = Duration.ofMillis(10);

    private QemuSockets() {
    }

    /**
     * Connects to a socket QEMU serves, as soon as it is there, until the deadline or QEMU's exit.
     *
     * @throws IOException also when the socket is served by another user than QEMU's
     */
    static SocketChannel connect(Path socket, ProcessHandle qemu, long until) throws IOException {
        UserPrincipal server = serverOf(socket);
        while (true) {
            if (Files.exists(socket)) {
                SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
                try {
                    channel.connect(UnixDomainSocketAddress.of(socket));
                } catch (IOException notListeningYet) {
                    channel.close();
                    channel = null;
                }
                if (channel != null) {
                    return requirePeer(channel, server, socket);
                }
            }
            if (!qemu.isAlive()) {
                throw new IOException("QEMU exited before serving " + socket);
            }
            if (System.nanoTime() > until) {
                throw new IOException("QEMU did not serve " + socket + " in time");
            }
            sleep(POLL);
        }
    }

    /** Who must be at the other end of a socket in QEMU's directory: that directory's owner. */
    static UserPrincipal serverOf(Path socket) throws IOException {
        return Files.getOwner(socket.getParent(), LinkOption.NOFOLLOW_LINKS);
    }

    /** {@code channel}, when the process at its other end runs as {@code expected}; else closed, and refused. */
    static SocketChannel requirePeer(SocketChannel channel, UserPrincipal expected, Path socket) throws IOException {
        UserPrincipal peer;
        try {
            peer = channel.getOption(ExtendedSocketOptions.SO_PEERCRED).user();
        } catch (IOException | UnsupportedOperationException e) {
            channel.close();
            throw new IOException("cannot tell who is at the other end of " + socket + ": " + e.getMessage(), e);
        }
        if (!peer.equals(expected)) {
            channel.close();
            throw new IOException("the other end of " + socket + " runs as " + peer.getName() + ", not as QEMU's user "
                    + expected.getName() + " (is it a link to another socket?)");
        }
        return channel;
    }

    /**
     * A socket's reading half. Not {@code Channels.newInputStream}: its streams take the channel's
     * blocking lock on every call, so a read waiting for the guest would block every write.
     */
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

    /**
     * Closes {@code stream} once {@code until} (a {@link System#nanoTime()} instant) passes, unless
     * the returned guard is closed first: a blocking read or write on a unix socket has no timeout
     * of its own, and closing the channel is what ends it.
     */
    static Guard closeAt(long until, Closeable stream) {
        AtomicBoolean done = new AtomicBoolean();
        long delay = Math.max(until - System.nanoTime(), 0);
        CompletableFuture.delayedExecutor(delay, TimeUnit.NANOSECONDS)
                .execute(() -> {
                    if (done.compareAndSet(false, true)) {
                        try {
                            stream.close();
                        } catch (IOException alreadyBroken) {
                            // Closing is all the deadline asks; a stream that fails to close is no less ended.
                        }
                    }
                });
        return () -> done.set(true);
    }

    /** Cancels a {@link #closeAt} deadline. */
    interface Guard extends AutoCloseable {
        @Override
        void close();
    }

    /** Waits one poll interval before trying a socket again. */
    static void pause() {
        sleep(POLL);
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxException("interrupted while waiting for the guest to come up", e);
        }
    }
}
