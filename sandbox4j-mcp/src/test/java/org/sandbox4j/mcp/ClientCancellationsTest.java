package org.sandbox4j.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

class ClientCancellationsTest {

    @Test
    void aCancellationInterruptsTheCallsThreadAndTheCallIsMarkedCancelled() throws Exception {
        ClientCancellations calls = ClientCancellations.perSession();
        CountDownLatch started = new CountDownLatch(1);
        AtomicBoolean interrupted = new AtomicBoolean();
        AtomicBoolean cancelled = new AtomicBoolean();
        AtomicBoolean flagLeftAfterClose = new AtomicBoolean(true);
        Thread call = new Thread(() -> {
            try (ClientCancellations.Running running = calls.start("s", Optional.of("7"))) {
                started.countDown();
                try {
                    Thread.sleep(60_000);
                } catch (InterruptedException expected) {
                    interrupted.set(true);
                    Thread.currentThread().interrupt();
                }
                cancelled.set(running.cancelled());
            }
            flagLeftAfterClose.set(Thread.currentThread().isInterrupted());
        });
        call.start();
        assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();

        calls.cancel("s", "7");
        call.join(10_000);

        assertThat(interrupted).isTrue();
        assertThat(cancelled).isTrue();
        assertThat(flagLeftAfterClose).as("the pool thread does not carry the interrupt on").isFalse();
    }

    @Test
    void aCancellationNamesTheCallInItsOwnSessionOnly() {
        ClientCancellations calls = ClientCancellations.perSession();
        try (ClientCancellations.Running running = calls.start("a", Optional.of("1"))) {
            calls.cancel("b", "1");
            assertThat(running.cancelled()).isFalse();
            assertThat(Thread.currentThread().isInterrupted()).isFalse();
        }
    }

    @Test
    void aCancellationThatOvertakesItsCallCancelsItAtItsStart() {
        ClientCancellations calls = ClientCancellations.oneSession();
        calls.cancel("any", "\"x\"");
        try (ClientCancellations.Running running = calls.start("session", Optional.of("\"x\""))) {
            assertThat(running.cancelled()).isTrue();
        }
        try (ClientCancellations.Running again = calls.start("session", Optional.of("\"x\""))) {
            assertThat(again.cancelled()).as("remembered once").isFalse();
        }
    }

    @Test
    void earlyCancellationsAreRememberedBoundedly() {
        ClientCancellations calls = ClientCancellations.oneSession();
        for (int i = 0; i <= ClientCancellations.EARLY_CANCELLATIONS_KEPT; i++) {
            calls.cancel("s", String.valueOf(i));
        }
        try (ClientCancellations.Running oldest = calls.start("s", Optional.of("0"))) {
            assertThat(oldest.cancelled()).as("the oldest was let go").isFalse();
        }
        try (ClientCancellations.Running newest = calls.start("s",
                Optional.of(String.valueOf(ClientCancellations.EARLY_CANCELLATIONS_KEPT)))) {
            assertThat(newest.cancelled()).isTrue();
        }
    }
}
