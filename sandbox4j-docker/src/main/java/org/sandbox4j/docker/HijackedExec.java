package org.sandbox4j.docker;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.URLEncoder;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One exec's attached stream, taken over from the engine's HTTP connection: {@code POST
 * /exec/{id}/start} with {@code Upgrade: tcp} on the engine's unix socket, after which the
 * connection carries the exec's stdin one way and, with {@code Tty=false}, its stdout and stderr
 * the other, multiplexed in frames of an 8-byte header (stream byte, three zero bytes, a
 * big-endian u32 length) and that many bytes. {@link #stdout()} is the stdout frames' bytes in
 * order; stderr frames go to a bounded tail kept for messages; {@link #stdin()} writes to the
 * exec's stdin. Closing either stream, or this, closes the connection, which ends the exec's stdin.
 *
 * <p>Nothing here trusts the engine's or the guest's framing: the response head is bounded, a
 * frame's length is only ever counted down (never allocated), and an unknown stream byte ends the
 * stream as broken. Reads and writes may run on different threads at once.
 */
final class HijackedExec implements AutoCloseable {

    /** The longest response head (status line and headers) read before the stream is refused. */
    static final int MAX_HEAD_BYTES = 16 * 1024;
    /** How much of the exec's stderr is kept for messages: its last bytes. */
    static final int STDERR_TAIL_BYTES = 4 * 1024;
    /** A multiplexed frame's header: stream, three zero bytes, u32 length. */
    static final int FRAME_HEADER_BYTES = 8;
    private static final int STREAM_STDOUT = 1;
    private static final int STREAM_STDERR = 2;
    private static final int READ_BUFFER_BYTES = 64 * 1024;
    private static final int HTTP_SWITCHING_PROTOCOLS = 101;
    private static final int HTTP_OK = 200;
    private static final ScheduledExecutorService WATCHDOG = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "sandbox4j-docker-hijack-watchdog");
        thread.setDaemon(true);
        return thread;
    });

    private final SocketChannel channel;
    private final InputStream stdout;
    private final OutputStream stdin;
    private final StderrTail stderr = new StderrTail();

    private HijackedExec(SocketChannel channel, InputStream afterHead) {
        this.channel = channel;
        this.stdout = new Demultiplexed(afterHead);
        this.stdin = new ChannelOutput(channel);
    }

    /**
     * Starts exec {@code execId} attached, and takes its stream over.
     *
     * @param socket  the engine's unix socket
     * @param timeout how long the engine may take to answer the start
     * @throws IOException the engine could not be reached, did not answer in time, or refused
     *                     (the message carries its status and words, bounded)
     */
    static HijackedExec start(Path socket, String execId, Duration timeout) throws IOException {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        // A blocking channel has no read timeout: the watchdog closes it if the head does not come in time.
        AtomicBoolean expired = new AtomicBoolean();
        ScheduledFuture<?> watchdog = WATCHDOG.schedule(() -> {
            expired.set(true);
            closeQuietly(channel);
        }, timeout.toMillis(), TimeUnit.MILLISECONDS);
        try {
            channel.connect(UnixDomainSocketAddress.of(socket));
            byte[] body = "{\"Detach\":false,\"Tty\":false}".getBytes(StandardCharsets.US_ASCII);
            String head = "POST /exec/" + URLEncoder.encode(execId, StandardCharsets.UTF_8) + "/start HTTP/1.1\r\n"
                    + "Host: docker\r\n"
                    + "Content-Type: application/json\r\n"
                    + "Connection: Upgrade\r\n"
                    + "Upgrade: tcp\r\n"
                    + "Content-Length: " + body.length + "\r\n\r\n";
            OutputStream out = new ChannelOutput(channel);
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            BufferedInputStream in = new BufferedInputStream(new ChannelInput(channel), READ_BUFFER_BYTES);
            String response = readHead(in);
            int status = status(response);
            if (status != HTTP_SWITCHING_PROTOCOLS && status != HTTP_OK) {
                throw new IOException("the engine answered the exec's start with " + ErrorText.bounded(firstLine(response))
                        + ": " + ErrorText.bounded(errorBody(in)));
            }
            watchdog.cancel(false);
            if (expired.get()) {
                throw new IOException("the engine did not answer the exec's start within " + timeout.toMillis() + " ms");
            }
            return new HijackedExec(channel, in);
        } catch (IOException | RuntimeException failed) {
            watchdog.cancel(false);
            closeQuietly(channel);
            if (expired.get()) {
                throw new IOException("the engine did not answer the exec's start within " + timeout.toMillis()
                        + " ms", failed);
            }
            throw failed;
        }
    }

    /** The exec's stdout, demultiplexed. */
    InputStream stdout() {
        return stdout;
    }

    /** The exec's stdin. */
    OutputStream stdin() {
        return stdin;
    }

    /** The end of what the exec wrote to stderr: one line, its last characters, escaped for a message. */
    String stderrTail() {
        return stderr.text();
    }

    @Override
    public void close() {
        closeQuietly(channel);
    }

    // ---------------------------------------------------------------- the response head

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < end.length) {
            int b = in.read();
            if (b < 0) {
                throw new EOFException("the engine closed the connection before it answered the exec's start");
            }
            head.write(b);
            if (head.size() > MAX_HEAD_BYTES) {
                throw new IOException("the engine's answer to the exec's start has a head over " + MAX_HEAD_BYTES
                        + " bytes");
            }
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    private static String firstLine(String head) {
        int end = head.indexOf("\r\n");
        return end < 0 ? head : head.substring(0, end);
    }

    private static int status(String head) throws IOException {
        String[] words = firstLine(head).split(" ", 3);
        if (words.length < 2 || !words[0].toUpperCase(Locale.ROOT).startsWith("HTTP/")) {
            throw new IOException("the engine's answer to the exec's start is not HTTP: "
                    + ErrorText.bounded(firstLine(head)));
        }
        try {
            return Integer.parseInt(words[1]);
        } catch (NumberFormatException notAStatus) {
            throw new IOException("the engine's answer to the exec's start has no status: "
                    + ErrorText.bounded(firstLine(head)));
        }
    }

    /** What a refusal's body says, bounded; nothing more is read. */
    private static String errorBody(InputStream in) {
        try {
            byte[] bytes = new byte[ErrorText.MAX_CHARS];
            int read = in.readNBytes(bytes, 0, bytes.length);
            return new String(bytes, 0, read, StandardCharsets.UTF_8);
        } catch (IOException unreadable) {
            return "(no body)";
        }
    }

    private static void closeQuietly(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // Closing a socket: nothing to add.
        }
    }

    // ---------------------------------------------------------------- the streams

    /** The stdout frames' bytes; stderr frames go to the tail. Never holds more than its read buffer. */
    private final class Demultiplexed extends InputStream {
        private final InputStream in;
        private final byte[] header = new byte[FRAME_HEADER_BYTES];
        private final byte[] drain = new byte[STDERR_TAIL_BYTES];
        /** What is left of the stdout frame being read. */
        private long remaining;

        Demultiplexed(InputStream in) {
            this.in = in;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int read = read(one, 0, 1);
            return read < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            if (length == 0) {
                return 0;
            }
            while (remaining == 0) {
                if (!nextFrame()) {
                    return -1;
                }
            }
            int read = in.read(buffer, offset, (int) Math.min(length, remaining));
            if (read < 0) {
                throw new EOFException("the exec's stream ended inside a stdout frame");
            }
            remaining -= read;
            return read;
        }

        /** Reads one header; a stderr frame is taken whole into the tail. False at the stream's end. */
        private boolean nextFrame() throws IOException {
            int first = in.read();
            if (first < 0) {
                return false;
            }
            header[0] = (byte) first;
            if (in.readNBytes(header, 1, FRAME_HEADER_BYTES - 1) != FRAME_HEADER_BYTES - 1) {
                throw new EOFException("the exec's stream ended inside a frame header");
            }
            long length = ((header[4] & 0xffL) << 24) | ((header[5] & 0xff) << 16) | ((header[6] & 0xff) << 8)
                    | (header[7] & 0xff);
            switch (header[0]) {
                case STREAM_STDOUT -> remaining = length;
                case STREAM_STDERR -> {
                    for (long left = length; left > 0; ) {
                        int read = in.read(drain, 0, (int) Math.min(drain.length, left));
                        if (read < 0) {
                            throw new EOFException("the exec's stream ended inside a stderr frame");
                        }
                        stderr.add(drain, read);
                        left -= read;
                    }
                }
                default -> throw new IOException("the exec's stream carries a frame of stream " + (header[0] & 0xff)
                        + ", not stdout or stderr: it is not multiplexed as an exec without a tty is");
            }
            return true;
        }

        @Override
        public void close() {
            HijackedExec.this.close();
        }
    }

    /** The last bytes of stderr, for a message. */
    private static final class StderrTail {
        private final byte[] ring = new byte[STDERR_TAIL_BYTES];
        private long written;

        synchronized void add(byte[] bytes, int length) {
            for (int i = 0; i < length; i++) {
                ring[(int) (written++ % ring.length)] = bytes[i];
            }
        }

        synchronized String text() {
            int size = (int) Math.min(written, ring.length);
            byte[] ordered = new byte[size];
            for (int i = 0; i < size; i++) {
                ordered[i] = ring[(int) ((written - size + i) % ring.length)];
            }
            // Its last words matter: bounded from the front, unlike ErrorText's.
            String text = new String(ordered, StandardCharsets.UTF_8).replaceAll("\\s+", " ").strip();
            if (text.length() > ErrorText.MAX_CHARS) {
                text = "…" + text.substring(text.length() - ErrorText.MAX_CHARS);
            }
            return org.sandbox4j.core.spi.GuestText.escape(text);
        }
    }

    /** Reads the channel directly: {@code Channels.newInputStream} would hold a lock a writer also needs. */
    private static final class ChannelInput extends InputStream {
        private final SocketChannel channel;

        ChannelInput(SocketChannel channel) {
            this.channel = channel;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int read = read(one, 0, 1);
            return read < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            if (length == 0) {
                return 0;
            }
            return channel.read(ByteBuffer.wrap(buffer, offset, length));
        }

        @Override
        public void close() {
            closeQuietly(channel);
        }
    }

    /** Writes the channel directly, concurrently with a reader. */
    private static final class ChannelOutput extends OutputStream {
        private final SocketChannel channel;

        ChannelOutput(SocketChannel channel) {
            this.channel = channel;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] buffer, int offset, int length) throws IOException {
            ByteBuffer bytes = ByteBuffer.wrap(buffer, offset, length);
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
        }

        @Override
        public void close() {
            closeQuietly(channel);
        }
    }
}
