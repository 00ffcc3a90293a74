package org.sandbox4j.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sandbox4j.core.ExecOptions;

/**
 * The connection against a fake peer: the handshake ignores another session's frames, and every
 * hostile byte stream after it breaks the connection with a typed error, never an OOM or a hang.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AgentProtocolTest {

    private static final Duration SHORT = Duration.ofSeconds(10);

    @Test
    void framesOfAnotherSessionBeforeTheHelloOkAreIgnored() throws Exception {
        try (FakeAgent fake = new FakeAgent()) {
            CompletableFuture<Void> peer = CompletableFuture.runAsync(() -> {
                Frame hello = fake.read();
                fake.send(AgentProtocol.OUT, 7, Payload.create().u8(1).text("stale output").build());
                fake.send(AgentProtocol.HELLO_OK, hello.id(), FakeAgent.helloOk(new byte[32]));
                fake.raw(new byte[] {0, 0, 0, 9, 1, 2, 3, (byte) 0xff, 0x53});
                fake.send(0x77, hello.id(), new byte[5]);
                fake.send(AgentProtocol.HELLO_OK, hello.id() + 1, FakeAgent.helloOk(hello));
                fake.send(AgentProtocol.HELLO_OK, hello.id(), FakeAgent.helloOk(hello));
            });
            AgentConnection connection = AgentConnection.open(fake.hostIn(), fake.hostOut(), "fake", SHORT);
            peer.join();
            assertThat(connection.hello().agent()).isEqualTo("fake");
            assertThat(connection.isOpen()).isTrue();
            connection.close();
            assertThat(connection.isOpen()).isFalse();
        }
    }

    @Test
    void theHelloIsSentAgainUntilTheGuestAnswers() throws Exception {
        try (FakeAgent fake = new FakeAgent()) {
            CompletableFuture<Void> peer = CompletableFuture.runAsync(() -> {
                Frame first = fake.read();
                Frame second = fake.read();
                assertThat(second.payload()).isEqualTo(first.payload());
                fake.send(AgentProtocol.HELLO_OK, second.id(), FakeAgent.helloOk(second));
            });
            AgentConnection connection = AgentConnection.open(fake.hostIn(), fake.hostOut(), "fake", SHORT);
            peer.join();
            assertThat(connection.isOpen()).isTrue();
            connection.close();
        }
    }

    @Test
    void noAnswerWithinTheDeadlineIsATypedErrorNamingTheFix() throws Exception {
        try (FakeAgent fake = new FakeAgent()) {
            fake.drainHost();
            long start = System.nanoTime();
            assertThatThrownBy(() -> AgentConnection.open(fake.hostIn(), fake.hostOut(), "fake",
                    Duration.ofMillis(1200)))
                    .isInstanceOf(AgentConnectionFailed.class)
                    .hasMessageContaining("did not answer the handshake within 1200 ms")
                    .hasMessageContaining("runs s4j-agent");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(SHORT);
        }
    }

    @Test
    void aHugeLengthBreaksTheConnectionWithoutAllocatingIt() throws Exception {
        breaksAPendingCall(fake -> fake.raw(new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff, (byte) 0xf0, 0x53,
                0x34, 1, (byte) 0x82, 0, 0, 0, 1}), "malformed");
    }

    @Test
    void aBadMagicBreaksTheConnection() throws Exception {
        breaksAPendingCall(fake -> fake.raw(new byte[] {0, 0, 0, 8, 0x12, 0x34, 1, (byte) 0x82, 0, 0, 0, 1}),
                "magic");
    }

    @Test
    void garbageBreaksTheConnection() throws Exception {
        breaksAPendingCall(fake -> fake.raw("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes()), "malformed");
    }

    @Test
    void anUnknownTypeBreaksTheConnection() throws Exception {
        breaksAPendingCall(fake -> fake.send(0x6e, 5, new byte[0]), "unknown type");
    }

    @Test
    void theEndOfTheStreamBreaksTheConnection() throws Exception {
        breaksAPendingCall(fake -> {
            try {
                fake.close();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }, "ended");
    }

    @Test
    void aMalformedAnswerBreaksTheConnection() throws Exception {
        try (FakeAgent fake = new FakeAgent()) {
            AgentConnection connection = fake.openAnswering();
            CompletableFuture<Duration> ping = CompletableFuture.supplyAsync(() -> connection.ping(SHORT));
            waitForACall(connection);
            // A PONG whose data claims four gigabytes.
            fake.send(AgentProtocol.PONG, lastId(connection), new byte[] {(byte) 0xff, (byte) 0xff, (byte) 0xff,
                    (byte) 0xff});
            assertThatThrownBy(ping::join).hasCauseInstanceOf(AgentConnectionFailed.class)
                    .hasMessageContaining("malformed");
            assertThat(connection.isOpen()).isFalse();
        }
    }

    @Test
    void outputBeyondTheGrantedCreditBreaksTheConnectionBeforeTheHostHoldsIt() throws Exception {
        try (FakeAgent fake = new FakeAgent()) {
            AgentConnection connection = fake.openAnswering();
            // A listener that never returns: the exec's thread takes nothing more, so its queue fills.
            ExecOptions options = ExecOptions.in("/", SHORT)
                    .withListener((stream, chunk) -> sleep(Duration.ofSeconds(2)));
            CompletableFuture<Object> exec = CompletableFuture.supplyAsync(() -> connection.exec(List.of("x"), "/",
                    Map.of(), options, "x"));
            waitForACall(connection);
            int id = lastId(connection);
            byte[] chunk = Payload.create().u8(1).bytes(new byte[AgentProtocol.OUT_CHUNK_MAX]).build();
            try {
                // Past what both streams' credit and the small frames' allowance let the host hold.
                int beyondCredit = 2 * AgentProtocol.OUTPUT_WINDOW / AgentProtocol.OUT_CHUNK_MAX + 16;
                for (int i = 0; i < beyondCredit && connection.isOpen(); i++) {
                    fake.send(AgentProtocol.OUT, id, chunk);
                }
            } catch (java.io.UncheckedIOException closedByTheHost) {
                // The host broke the connection while the flood was still coming: what this test wants.
            }
            assertThat(connection.isOpen()).isFalse();
            assertThatThrownBy(exec::join).hasCauseInstanceOf(AgentConnectionFailed.class)
                    .hasMessageContaining("more about request");
        }
    }

    /** A pending ping fails promptly, typed, when the fake sends {@code hostile}. */
    private static void breaksAPendingCall(Consumer<FakeAgent> hostile, String said) throws Exception {
        try (FakeAgent fake = new FakeAgent()) {
            AgentConnection connection = fake.openAnswering();
            CompletableFuture<Duration> ping = CompletableFuture.supplyAsync(() -> connection.ping(
                    Duration.ofSeconds(50)));
            waitForACall(connection);
            long start = System.nanoTime();
            hostile.accept(fake);
            assertThatThrownBy(ping::join).hasCauseInstanceOf(AgentConnectionFailed.class)
                    .hasMessageContaining(said);
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(SHORT);
            assertThat(connection.isOpen()).isFalse();
            assertThatThrownBy(() -> connection.ping(SHORT)).isInstanceOf(AgentConnectionFailed.class);
        }
    }

    private static void waitForACall(AgentConnection connection) {
        long until = System.nanoTime() + SHORT.toNanos();
        while (connection.pendingCalls() == 0 && System.nanoTime() < until) {
            sleep(Duration.ofMillis(10));
        }
        assertThat(connection.pendingCalls()).isPositive();
    }

    private static int lastId(AgentConnection connection) {
        return connection.pendingIds().stream().max(Integer::compare).orElseThrow();
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
