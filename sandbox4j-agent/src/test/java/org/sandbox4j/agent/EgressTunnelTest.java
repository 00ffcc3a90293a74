package org.sandbox4j.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The egress tunnel end to end: the real agent (its tunnel process on a unix socket this test
 * listens on), {@link EgressTunnel} on the host, and a loopback {@link Upstream} as the proxy.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EgressTunnelTest {

    private static final int MIB = 1024 * 1024;

    private EgressHarness harness;
    private final ExecutorService pool = Executors.newCachedThreadPool(runnable -> {
        Thread thread = new Thread(runnable, "egress-test");
        thread.setDaemon(true);
        return thread;
    });

    @BeforeEach
    void startAgent() throws IOException {
        harness = EgressHarness.start();
    }

    @AfterEach
    void stopAgent() throws IOException {
        pool.shutdownNow();
        harness.close();
    }

    @Test
    void bytesGetThroughBothWaysWhileTheAgentStillServesExecs() throws Exception {
        EgressTunnel tunnel = harness.connect();
        try (Socket client = harness.client()) {
            client.getOutputStream().write("ECHO\nhello through the tunnel".getBytes(StandardCharsets.US_ASCII));
            assertThat(new String(client.getInputStream().readNBytes(24), StandardCharsets.US_ASCII))
                    .isEqualTo("hello through the tunnel");
        }
        assertThat(harness.exec("echo still serving")).isEqualTo("still serving\n");
        assertThat(tunnel.streamsOpened()).isEqualTo(1);
        assertThat(tunnel.isOpen()).isTrue();
    }

    @Test
    void manyConcurrentStreamsWithMoreThanTheWindowArriveIntactAndInOrder() throws Exception {
        EgressTunnel tunnel = harness.connect();
        int streams = 20;
        int size = 3 * MIB;
        List<CompletableFuture<Void>> echoes = new ArrayList<>();
        for (int i = 0; i < streams; i++) {
            long seed = i;
            echoes.add(CompletableFuture.runAsync(() -> echo(seed, size), pool));
        }
        CompletableFuture.allOf(echoes.toArray(CompletableFuture[]::new)).get(100, TimeUnit.SECONDS);
        assertThat(tunnel.streamsOpened()).isEqualTo(streams);
        assertThat(tunnel.isOpen()).isTrue();
    }

    @Test
    void aClientThatStopsReadingStallsOnlyItsOwnStream() throws Exception {
        harness.connect();
        long flood = 16L * MIB;
        try (Socket stalled = harness.client()) {
            stalled.getOutputStream().write(("FLOOD " + flood + "\n").getBytes(StandardCharsets.US_ASCII));
            // the flood fills the guest's window and the client's socket; another stream still flows
            echo(7, 2 * MIB);
            InputStream in = stalled.getInputStream();
            byte[] buffer = new byte[65536];
            long got = 0;
            for (int n; (n = in.read(buffer)) >= 0; ) {
                for (int i = 0; i < n; i++) {
                    assertThat(buffer[i]).isEqualTo(Upstream.pattern(got + i));
                }
                got += n;
            }
            assertThat(got).isEqualTo(flood);
        }
    }

    @Test
    void anUpstreamThatStopsReadingStallsOnlyItsOwnStream() throws Exception {
        harness.connect();
        try (Socket stalled = harness.client()) {
            OutputStream out = stalled.getOutputStream();
            out.write("STALL\n".getBytes(StandardCharsets.US_ASCII));
            CompletableFuture<Void> pushing = CompletableFuture.runAsync(() -> {
                try {
                    byte[] chunk = new byte[65536];
                    while (true) {
                        out.write(chunk); // blocks once the window and the socket buffers are full
                    }
                } catch (IOException closed) {
                    // the test closed the socket
                }
            }, pool);
            echo(8, 2 * MIB);
            assertThat(pushing).isNotDone();
        }
    }

    @Test
    void aHalfCloseReachesTheUpstreamWhichStillAnswers() throws Exception {
        harness.connect();
        try (Socket client = harness.client()) {
            OutputStream out = client.getOutputStream();
            out.write("COUNT\n".getBytes(StandardCharsets.US_ASCII));
            out.write(new byte[300_000]);
            client.shutdownOutput();
            assertThat(new String(client.getInputStream().readAllBytes(), StandardCharsets.US_ASCII))
                    .isEqualTo("300000\n");
        }
    }

    @Test
    void aStreamTheProxyRefusesClosesTheGuestsConnection() throws Exception {
        EgressTunnel tunnel = harness.connect(() -> {
            throw new IOException("proxy is down");
        });
        try (Socket client = harness.client()) {
            client.getOutputStream().write("ECHO\nx".getBytes(StandardCharsets.US_ASCII));
            assertThat(readUntilClosed(client)).isEmpty();
        }
        assertThat(tunnel.streamsRefused()).isEqualTo(1);
        assertThat(tunnel.isOpen()).isTrue();
        assertThat(harness.upstream.connections()).isZero();
    }

    @Test
    void connectionsBeforeTheHostsHelloAreClosedAtOnce() throws Exception {
        try (Socket client = harness.client()) {
            assertThat(readUntilClosed(client)).isEmpty();
        }
        harness.connect();
        echo(1, 1000);
    }

    @Test
    void afterTheHostGoesAwayANewTunnelOnANewConnectionWorks() throws Exception {
        harness.connect();
        echo(1, MIB);
        harness.disconnect();
        EgressTunnel second = harness.connect();
        echo(2, MIB);
        assertThat(second.streamsOpened()).isEqualTo(1);
    }

    @Test
    void streamsBeyondTheLimitAreClosedAtOnce() throws Exception {
        EgressTunnel tunnel = harness.connect();
        List<Socket> open = new ArrayList<>();
        try {
            for (int i = 0; i < EgressProtocol.MAX_STREAMS; i++) {
                Socket client = harness.client();
                open.add(client);
                client.getOutputStream().write("ECHO\n!".getBytes(StandardCharsets.US_ASCII));
                assertThat(client.getInputStream().read()).isEqualTo('!'); // live: it got through
            }
            try (Socket beyond = harness.client()) {
                assertThat(readUntilClosed(beyond)).isEmpty();
            }
            assertThat(tunnel.isOpen()).isTrue();
            assertThat(tunnel.streamsOpened()).isEqualTo(EgressProtocol.MAX_STREAMS);
        } finally {
            for (Socket client : open) {
                client.close();
            }
        }
    }

    @Test
    void aHostThatBreaksTheProtocolGetsTheSessionResetAndMayStartANewOne() throws Exception {
        try (SocketChannel port = harness.acceptPort()) {
            InputStream in = EgressHarness.input(port);
            EgressFrame.Reader frames = new EgressFrame.Reader(in);
            OutputStream out = EgressHarness.output(port);
            out.write(EgressFrame.encode(0, EgressProtocol.HELLO, EgressFrame.hello(EgressProtocol.VERSION, 11)));
            assertHello(frames.read(), 11);
            out.write(EgressFrame.encode(9, EgressProtocol.DATA, new byte[] {1}));
            EgressFrame reset = frames.read();
            assertThat(reset.stream()).isZero();
            assertThat(reset.type()).isEqualTo(EgressProtocol.CLOSE);
            // without a session, a guest program is refused
            try (Socket client = harness.client()) {
                assertThat(readUntilClosed(client)).isEmpty();
            }
            out.write(EgressFrame.encode(0, EgressProtocol.HELLO, EgressFrame.hello(EgressProtocol.VERSION, 12)));
            assertHello(frames.read(), 12);
            try (Socket client = harness.client()) {
                EgressFrame open = frames.read();
                assertThat(open.type()).isEqualTo(EgressProtocol.OPEN);
                assertThat(open.stream()).isEqualTo(1);
                // more than a DATA frame may hold: reset again
                out.write(new byte[] {0, 0, 0, 1, EgressProtocol.DATA, 0, 2, 0, 0});
                EgressFrame again = frames.read();
                assertThat(again.type()).isEqualTo(EgressProtocol.CLOSE);
                assertThat(again.stream()).isZero();
                assertThat(readUntilClosed(client)).isEmpty();
            }
        }
    }

    private static void assertHello(EgressFrame frame, int nonce) {
        assertThat(frame.stream()).isZero();
        assertThat(frame.type()).isEqualTo(EgressProtocol.HELLO);
        assertThat(frame.payload()).isEqualTo(EgressFrame.hello(EgressProtocol.VERSION, nonce));
    }

    /** Sends {@code size} seeded random bytes through an ECHO stream while reading them back, and compares. */
    private void echo(long seed, int size) {
        try (Socket client = harness.client()) {
            OutputStream out = client.getOutputStream();
            out.write("ECHO\n".getBytes(StandardCharsets.US_ASCII));
            CompletableFuture<Void> writing = CompletableFuture.runAsync(() -> {
                try {
                    Random random = new Random(seed);
                    byte[] chunk = new byte[50_000];
                    for (int sent = 0; sent < size; sent += chunk.length) {
                        random.nextBytes(chunk);
                        out.write(chunk, 0, Math.min(chunk.length, size - sent));
                    }
                    client.shutdownOutput();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, pool);
            Random expected = new Random(seed);
            byte[] want = new byte[50_000];
            byte[] got = new byte[50_000];
            InputStream in = client.getInputStream();
            for (int received = 0; received < size; received += want.length) {
                expected.nextBytes(want);
                int n = Math.min(want.length, size - received);
                assertThat(in.readNBytes(got, 0, n)).isEqualTo(n);
                assertThat(ByteBuffer.wrap(got, 0, n)).isEqualTo(ByteBuffer.wrap(want, 0, n));
            }
            assertThat(in.read()).isEqualTo(-1);
            writing.join();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** What the peer sent before it closed (a reset counts as closed). */
    private static byte[] readUntilClosed(Socket client) throws IOException {
        try {
            return client.getInputStream().readAllBytes();
        } catch (SocketException reset) {
            return new byte[0];
        }
    }
}
