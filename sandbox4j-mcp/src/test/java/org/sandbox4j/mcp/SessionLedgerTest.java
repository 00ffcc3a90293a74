package org.sandbox4j.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.testkit.InMemoryBackend;
import org.sandbox4j.testkit.InMemoryBackend.Purge;

/** When the ledger ends a session, on a clock the test moves. */
class SessionLedgerTest {

    private static final Duration IDLE = Duration.ofSeconds(10);

    private final InMemoryBackend backend = InMemoryBackend.builder().isolation(Isolation.CONTAINER).build();
    private final SandboxRouter router = SandboxRouter.builder().backend(backend).minIsolation(Isolation.CONTAINER)
            .build();
    private final AtomicLong now = new AtomicLong();
    private final SessionLedger ledger = new SessionLedger(router, "s", now::get);

    private void advance(Duration by) {
        now.addAndGet(by.toNanos());
    }

    @Test
    void aSessionWithARequestOpenIsNeverIdleAndTheClockStartsWhenItEnds() {
        ledger.opened("a");
        assertThat(ledger.beginIfKnown("a")).isTrue();
        advance(IDLE.multipliedBy(5));
        assertThat(ledger.closeIdle(IDLE)).isZero();

        ledger.end("a");
        advance(IDLE);
        assertThat(ledger.closeIdle(IDLE)).as("idle for exactly the bound: not yet").isZero();
        advance(Duration.ofNanos(1));
        assertThat(ledger.closeIdle(IDLE)).isEqualTo(1);
        assertThat(backend.purged()).containsExactly(new Purge("s", "a"));
        assertThat(ledger.open()).isEmpty();
    }

    @Test
    void aMadeUpSessionIdIsNotRecorded() {
        assertThat(ledger.beginIfKnown("made-up")).isFalse();
        ledger.end("made-up");
        assertThat(ledger.open()).isEmpty();
    }

    @Test
    void aToolCallRecordsItsSessionAndClosingAllDisposesOfEach() {
        ledger.begin("a");
        ledger.end("a");
        ledger.opened("b");
        ledger.closeAll();
        assertThat(backend.purged()).containsExactlyInAnyOrder(new Purge("s", "a"), new Purge("s", "b"));
        assertThat(ledger.open()).isEmpty();
    }

    /**
     * A stdio server ends its session twice at once: its serving thread at end of input, and its
     * shutdown hook at the client's signal. The hook's closeAll must not return while the other
     * disposal is under way, or the JVM halts in the middle of it.
     */
    @Test
    void aSecondCloseAllWaitsForTheDisposalUnderWay() throws InterruptedException {
        CountDownLatch disposing = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        SessionLedger blocking = new SessionLedger(router, "s", now::get, session -> {
            disposing.countDown();
            try {
                release.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
            }
        });
        blocking.opened("a");
        Thread serving = new Thread(blocking::closeAll, "serving");
        serving.start();
        assertThat(disposing.await(30, TimeUnit.SECONDS)).isTrue();
        Thread hook = new Thread(blocking::closeAll, "hook");
        hook.start();
        hook.join(500);
        assertThat(hook.isAlive()).as("the hook's closeAll returned while a disposal was under way").isTrue();
        release.countDown();
        hook.join(30_000);
        serving.join(30_000);
        assertThat(hook.isAlive()).isFalse();
        assertThat(backend.purged()).containsExactly(new Purge("s", "a"));
    }
}
