package org.sandbox4j.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link HijackedExec} against a stand-in engine on a real unix socket that answers with the bytes
 * a test chooses: the takeover, the demultiplexing of stdout and stderr frames, and what it refuses
 * (another status, a head that never ends, a frame of no known stream, a stream cut mid-frame).
 */
class HijackedExecTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final String UPGRADED = "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
            + "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n";

    private Path directory;
    private Path socket;
    private ServerSocketChannel server;

    @BeforeEach
    void listen() throws IOException {
        directory = Files.createTempDirectory("s4jh");
        socket = directory.resolve("engine.sock");
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
    }

    @AfterEach
    void close() throws IOException {
        server.close();
        Files.deleteIfExists(socket);
        Files.deleteIfExists(directory);
    }

    @Test
    void stdoutFramesAreTheStreamAndStderrFramesGoToABoundedTail() throws Exception {
        CompletableFuture<String> request = serve(engine -> {
            write(engine, UPGRADED.getBytes(StandardCharsets.US_ASCII));
            write(engine, frame(1, "hello "));
            write(engine, frame(2, "x".repeat(3 * HijackedExec.STDERR_TAIL_BYTES) + "the last words"));
            write(engine, frame(1, ""));
            write(engine, frame(1, "world"));
        });
        try (HijackedExec exec = HijackedExec.start(socket, "abc/def", TIMEOUT)) {
            assertThat(new String(readAll(exec.stdout()), StandardCharsets.UTF_8)).isEqualTo("hello world");
            assertThat(exec.stderrTail()).endsWith("the last words").hasSizeLessThanOrEqualTo(ErrorText.MAX_CHARS + 1);
        }
        assertThat(request.get(5, TimeUnit.SECONDS)).startsWith("POST /exec/abc%2Fdef/start HTTP/1.1\r\n")
                .contains("Upgrade: tcp\r\n").endsWith("{\"Detach\":false,\"Tty\":false}");
    }

    @Test
    void stdinReachesTheEngine() throws Exception {
        CompletableFuture<byte[]> received = new CompletableFuture<>();
        serve(engine -> {
            write(engine, UPGRADED.getBytes(StandardCharsets.US_ASCII));
            ByteBuffer buffer = ByteBuffer.allocate(5);
            while (buffer.hasRemaining()) {
                try {
                    engine.read(buffer);
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }
            received.complete(buffer.array());
        });
        try (HijackedExec exec = HijackedExec.start(socket, "id", TIMEOUT)) {
            exec.stdin().write("input".getBytes(StandardCharsets.US_ASCII));
            assertThat(received.get(5, TimeUnit.SECONDS)).isEqualTo("input".getBytes(StandardCharsets.US_ASCII));
        }
    }

    @Test
    void anotherStatusIsRefusedWithTheEnginesWords() {
        serve(engine -> write(engine, ("HTTP/1.1 409 Conflict\r\nContent-Length: 40\r\n\r\n"
                + "{\"message\":\"container is not running\"}").getBytes(StandardCharsets.US_ASCII)));
        assertThatThrownBy(() -> HijackedExec.start(socket, "id", TIMEOUT)).isInstanceOf(IOException.class)
                .hasMessageContaining("409").hasMessageContaining("container is not running");
    }

    @Test
    void anEngineThatNeverAnswersIsGivenUpAtTheTimeout() {
        serve(engine -> sleep());
        long start = System.nanoTime();
        assertThatThrownBy(() -> HijackedExec.start(socket, "id", Duration.ofMillis(300)))
                .isInstanceOf(IOException.class).hasMessageContaining("did not answer");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    }

    @Test
    void aHeadThatNeverEndsIsRefusedAtItsBound() {
        serve(engine -> write(engine, ("HTTP/1.1 101 UPGRADED\r\nX: " + "y".repeat(HijackedExec.MAX_HEAD_BYTES))
                .getBytes(StandardCharsets.US_ASCII)));
        assertThatThrownBy(() -> HijackedExec.start(socket, "id", TIMEOUT)).isInstanceOf(IOException.class)
                .hasMessageContaining("head over");
    }

    @Test
    void aFrameOfNoKnownStreamBreaksTheStream() throws Exception {
        serve(engine -> {
            write(engine, UPGRADED.getBytes(StandardCharsets.US_ASCII));
            write(engine, frame(3, "forged"));
        });
        try (HijackedExec exec = HijackedExec.start(socket, "id", TIMEOUT)) {
            assertThatThrownBy(() -> readAll(exec.stdout())).isInstanceOf(IOException.class)
                    .hasMessageContaining("stream 3");
        }
    }

    @Test
    void aStreamCutInsideAFrameIsAnError() throws Exception {
        serve(engine -> {
            write(engine, UPGRADED.getBytes(StandardCharsets.US_ASCII));
            byte[] frame = frame(1, "0123456789");
            write(engine, java.util.Arrays.copyOf(frame, frame.length - 4));
        });
        try (HijackedExec exec = HijackedExec.start(socket, "id", TIMEOUT)) {
            assertThatThrownBy(() -> readAll(exec.stdout())).isInstanceOf(IOException.class)
                    .hasMessageContaining("inside a stdout frame");
        }
    }

    // ---------------------------------------------------------------- the stand-in engine

    /** Accepts one connection, reads the request (head and its body), then runs {@code answer} and closes. */
    private CompletableFuture<String> serve(Consumer<SocketChannel> answer) {
        return CompletableFuture.supplyAsync(() -> {
            try (SocketChannel engine = server.accept()) {
                String request = readRequest(engine);
                answer.accept(engine);
                return request;
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private static String readRequest(SocketChannel engine) throws IOException {
        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        ByteBuffer one = ByteBuffer.allocate(1);
        while (true) {
            one.clear();
            if (engine.read(one) < 0) {
                return seen.toString(StandardCharsets.US_ASCII);
            }
            seen.write(one.get(0));
            String text = seen.toString(StandardCharsets.US_ASCII);
            int end = text.indexOf("\r\n\r\n");
            if (end >= 0) {
                int length = Integer.parseInt(text.replaceAll("(?s).*Content-Length: (\\d+).*", "$1"));
                if (seen.size() == end + 4 + length) {
                    return text;
                }
            }
        }
    }

    private static byte[] frame(int stream, String payload) {
        byte[] bytes = payload.getBytes(StandardCharsets.UTF_8);
        ByteBuffer frame = ByteBuffer.allocate(HijackedExec.FRAME_HEADER_BYTES + bytes.length);
        frame.put((byte) stream).put(new byte[3]).putInt(bytes.length).put(bytes);
        return frame.array();
    }

    private static void write(SocketChannel engine, byte[] bytes) {
        try {
            ByteBuffer buffer = ByteBuffer.wrap(bytes);
            while (buffer.hasRemaining()) {
                engine.write(buffer);
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void sleep() {
        try {
            Thread.sleep(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static byte[] readAll(InputStream in) throws IOException {
        return in.readAllBytes();
    }
}
