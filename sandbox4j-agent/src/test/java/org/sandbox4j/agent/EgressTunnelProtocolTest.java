package org.sandbox4j.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.channels.Channels;
import java.nio.channels.Pipe;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link EgressTunnel} against a fake guest on a pair of pipes: the handshake ignores what is not
 * the answer to its latest HELLO, a guest's reset starts a new session, and every frame the
 * protocol does not allow closes the tunnel, promptly and with every stream ended.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EgressTunnelProtocolTest {

    private static final Duration SHORT = Duration.ofSeconds(10);

    /** A proxy that is never reached: streams stay open, nothing is written, no credit is granted. */
    private final CountDownLatch released = new CountDownLatch(1);
    private final EgressConnector hanging = () -> {
        try {
            released.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        throw new IOException("released");
    };
    private FakeGuest guest;
    private EgressTunnel tunnel;

    @AfterEach
    void close() throws IOException {
        released.countDown();
        if (tunnel != null) {
            tunnel.close();
        }
        if (guest != null) {
            guest.close();
        }
    }

    @Test
    void onlyTheAnswerToTheLatestHelloEstablishesTheSession() throws Exception {
        guest = new FakeGuest();
        tunnel = EgressTunnel.start(guest.hostIn(), guest.hostOut(), hanging, "fake");
        EgressFrame hello = guest.read();
        assertThat(hello.stream()).isZero();
        assertThat(hello.type()).isEqualTo(EgressProtocol.HELLO);
        int nonce = (int) BigEndian.u32(hello.payload(), 6);
        guest.send(3, EgressProtocol.DATA, new byte[10]); // an older session's frame
        guest.raw(new byte[] {0, 0, 0, 0, 1, (byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xff}); // junk
        guest.send(0, EgressProtocol.HELLO, EgressFrame.hello(EgressProtocol.VERSION, nonce + 1));
        assertThat(tunnel.awaitEstablished(Duration.ofMillis(200))).isFalse();
        // unanswered, the tunnel sends HELLO again, with a new nonce: only its answer counts
        EgressFrame resent = guest.read();
        assertThat(resent.type()).isEqualTo(EgressProtocol.HELLO);
        guest.answer(resent);
        assertThat(tunnel.awaitEstablished(SHORT)).isTrue();
        assertThat(tunnel.sessions()).isEqualTo(1);
    }

    @Test
    void aGuestsResetEndsEveryStreamAndStartsANewSession() throws Exception {
        established(false);
        guest.send(1, EgressProtocol.OPEN, new byte[0]);
        waitFor(() -> tunnel.liveStreams() == 1);
        guest.send(0, EgressProtocol.CLOSE, new byte[0]);
        EgressFrame hello = guest.read();
        assertThat(hello.type()).isEqualTo(EgressProtocol.HELLO);
        assertThat(tunnel.liveStreams()).isZero();
        guest.answer(hello);
        waitFor(() -> tunnel.sessions() == 2);
        guest.send(1, EgressProtocol.OPEN, new byte[0]); // ids start again in a new session
        waitFor(() -> tunnel.liveStreams() == 1);
        assertThat(tunnel.isOpen()).isTrue();
    }

    @Test
    void aLengthBeyondTheBoundClosesTheTunnel() throws Exception {
        closesTheTunnel(g -> g.raw(new byte[] {0, 0, 0, 1, EgressProtocol.DATA, 0x7f, (byte) 0xff, (byte) 0xff,
                (byte) 0xff}), "more than 65536");
    }

    @Test
    void anUnknownTypeClosesTheTunnel() throws Exception {
        closesTheTunnel(g -> g.send(1, 0x42, new byte[0]), "unknown type");
    }

    @Test
    void aFrameOnAStreamNeverOpenedClosesTheTunnel() throws Exception {
        closesTheTunnel(g -> g.send(5, EgressProtocol.DATA, new byte[1]), "never opened");
    }

    @Test
    void aReusedStreamIdClosesTheTunnel() throws Exception {
        closesTheTunnel(g -> {
            g.send(4, EgressProtocol.OPEN, new byte[0]);
            g.send(4, EgressProtocol.OPEN, new byte[0]);
        }, "ids only grow");
    }

    @Test
    void dataBeyondTheCreditClosesTheTunnel() throws Exception {
        closesTheTunnel(g -> {
            g.send(1, EgressProtocol.OPEN, new byte[0]);
            for (int sent = 0; sent <= EgressProtocol.WINDOW; sent += EgressProtocol.DATA_MAX) {
                g.send(1, EgressProtocol.DATA, new byte[EgressProtocol.DATA_MAX]);
            }
        }, "beyond its credit");
    }

    @Test
    void creditBeyondTheWindowClosesTheTunnel() throws Exception {
        closesTheTunnel(g -> {
            g.send(1, EgressProtocol.OPEN, new byte[0]);
            g.send(1, EgressProtocol.CREDIT, EgressFrame.credit(1));
        }, "beyond the window");
    }

    @Test
    void tooManyStreamsCloseTheTunnel() throws Exception {
        closesTheTunnel(g -> {
            for (int id = 1; id <= EgressProtocol.MAX_STREAMS + 1; id++) {
                g.send(id, EgressProtocol.OPEN, new byte[0]);
            }
        }, "beyond 64 at once");
    }

    @Test
    void aControlFrameWithAPayloadClosesTheTunnel() throws Exception {
        closesTheTunnel(g -> {
            g.send(1, EgressProtocol.OPEN, new byte[0]);
            g.send(1, EgressProtocol.EOF, new byte[3]);
        }, "EOF of 3 bytes");
    }

    @Test
    void theEndOfThePortClosesTheTunnel() throws Exception {
        closesTheTunnel(g -> {
            try {
                g.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }, "ended");
    }

    private void closesTheTunnel(Consumer<FakeGuest> hostile, String said) throws Exception {
        established(true);
        long start = System.nanoTime();
        try {
            hostile.accept(guest);
        } catch (UncheckedIOException closedByTheHost) {
            // the tunnel closed the pipe while the hostile frames were still going out: what is asserted
        }
        waitFor(() -> !tunnel.isOpen());
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(SHORT);
        assertThat(tunnel.failure()).get().asString().contains(said);
        waitFor(() -> tunnel.liveStreams() == 0);
    }

    /** A tunnel that the fake answered; what the host sends next is read and dropped when {@code drain}. */
    private void established(boolean drain) throws InterruptedException {
        guest = new FakeGuest();
        tunnel = EgressTunnel.start(guest.hostIn(), guest.hostOut(), hanging, "fake");
        guest.answer(guest.read());
        assertThat(tunnel.awaitEstablished(SHORT)).isTrue();
        if (drain) {
            guest.drainHost();
        }
    }

    private static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long until = System.nanoTime() + SHORT.toNanos();
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited too long").isLessThan(until);
            Thread.sleep(10);
        }
    }

    /** The guest's end of two pipes: reads the host's frames, writes what the test wants. */
    private static final class FakeGuest implements AutoCloseable {
        private final Pipe toHost;
        private final Pipe fromHost;
        private final EgressFrame.Reader hostFrames;
        private final OutputStream guestOut;
        private volatile boolean draining;

        FakeGuest() {
            try {
                toHost = Pipe.open();
                fromHost = Pipe.open();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            hostFrames = new EgressFrame.Reader(Channels.newInputStream(fromHost.source()));
            guestOut = Channels.newOutputStream(toHost.sink());
        }

        InputStream hostIn() {
            return Channels.newInputStream(toHost.source());
        }

        OutputStream hostOut() {
            return Channels.newOutputStream(fromHost.sink());
        }

        EgressFrame read() {
            try {
                return hostFrames.read();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        void answer(EgressFrame hello) {
            send(0, EgressProtocol.HELLO, EgressFrame.hello(EgressProtocol.VERSION,
                    (int) BigEndian.u32(hello.payload(), 6)));
        }

        void send(long stream, int type, byte[] payload) {
            raw(EgressFrame.encode(stream, type, payload));
        }

        void raw(byte[] bytes) {
            try {
                guestOut.write(bytes);
                guestOut.flush();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        /** Reads and drops what the host sends from now on, so its writes never block. */
        void drainHost() {
            if (draining) {
                return;
            }
            draining = true;
            Thread drain = new Thread(() -> {
                try {
                    while (true) {
                        read();
                    }
                } catch (RuntimeException ended) {
                    // the host closed its end
                }
            }, "fake-guest-drain");
            drain.setDaemon(true);
            drain.start();
        }

        @Override
        public void close() throws IOException {
            toHost.sink().close();
            fromHost.source().close();
        }
    }
}
