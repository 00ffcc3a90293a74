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
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.sandbox4j.core.SandboxException;

/** The unix sockets QEMU serves (the agent's port, the console): connecting to one, and its two halves as streams. */
final class QemuSockets {

    private static final Duration POLL = Duration.ofMillis(10);

    private QemuSockets() {
    }

    /** Connects to a socket QEMU serves, as soon as it is there, until the deadline or QEMU's exit. */
    static SocketChannel connect(Path socket, ProcessHandle qemu, long until) throws IOException {
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
            if (!qemu.isAlive()) {
                throw new IOException("QEMU exited before serving " + socket);
            }
            if (System.nanoTime() > until) {
                throw new IOException("QEMU did not serve " + socket + " in time");
            }
            sleep(POLL);
        }
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

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxException("interrupted while waiting for the guest to come up", e);
        }
    }
}
