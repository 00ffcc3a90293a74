package org.sandbox4j.core.hosttools;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.TransferLimits;

/**
 * Many threads dispatching at once never oversubscribe a cap: a slot is reserved before the body
 * runs. The waits below are deadlock guards, not timing assertions.
 */
class HostToolRunConcurrencyTest {

    private static final int THREADS = 32;
    private static final long GUARD_SECONDS = 30;

    private final ExecutorService pool = Executors.newFixedThreadPool(THREADS);

    @AfterEach
    void stop() {
        pool.shutdownNow();
    }

    @Test
    void bodiesHoldingTheirSlotsKeepEveryOtherDispatchOut() throws Exception {
        int responseCap = 5;
        AtomicInteger entered = new AtomicInteger();
        CountDownLatch admitted = new CountDownLatch(responseCap);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch refused = new CountDownLatch(THREADS - responseCap);
        HostTool blocking = HostTool.builder().body(arguments -> {
            entered.incrementAndGet();
            admitted.countDown();
            release.await();
            return "ok";
        }).build();
        HostToolRegistry registry = HostToolRegistry.builder().maxDispatchesPerRun(THREADS)
                .responseLimits(new TransferLimits(100, 10_000, responseCap)).build();
        registry.register("blocking", blocking);
        HostToolRun run = new HostToolRun(registry, new RecordingLogger());

        List<Future<DispatchResult>> results = new ArrayList<>();
        CountDownLatch start = new CountDownLatch(1);
        for (int i = 0; i < THREADS; i++) {
            results.add(pool.submit(() -> {
                start.await();
                DispatchResult result = run.dispatch("blocking", null, 0);
                if (!result.ok()) {
                    refused.countDown();
                }
                return result;
            }));
        }
        start.countDown();

        // While the admitted bodies are all still blocked, every other dispatch has been refused.
        // A refused dispatch may finish before an admitted one has entered its body (its slot is
        // reserved first), so wait for both before counting.
        assertThat(refused.await(GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(admitted.await(GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
        assertThat(entered).hasValue(responseCap);
        release.countDown();

        int delivered = 0;
        for (Future<DispatchResult> result : results) {
            DispatchResult outcome = result.get(GUARD_SECONDS, TimeUnit.SECONDS);
            if (outcome.ok()) {
                delivered++;
            } else {
                assertThat(outcome.refusal()).contains("response cap (5) is exhausted");
            }
        }
        assertThat(delivered).isEqualTo(responseCap);
        assertThat(entered).hasValue(responseCap);
        assertThat(run.delivered()).isEqualTo(responseCap);
        assertThat(run.deliveredBytes()).isEqualTo(responseCap * 4L);
        assertThat(run.dispatched()).isEqualTo(THREADS);
    }

    @Test
    void theDispatchCapHoldsUnderContention() throws Exception {
        int dispatchCap = 7;
        AtomicInteger bodies = new AtomicInteger();
        HostToolRegistry registry = HostToolRegistry.builder().maxDispatchesPerRun(dispatchCap).build();
        registry.register("count", HostTool.builder().body(arguments -> bodies.incrementAndGet()).build());
        HostToolRun run = new HostToolRun(registry, new RecordingLogger());

        List<DispatchResult> outcomes = dispatchAllAtOnce(run, "count", 0);

        assertThat(outcomes.stream().filter(DispatchResult::ok)).hasSize(dispatchCap);
        assertThat(outcomes.stream().filter(r -> !r.ok()))
                .allSatisfy(r -> assertThat(r.refusal()).contains("dispatch cap (7)"));
        assertThat(bodies).hasValue(dispatchCap);
        assertThat(run.dispatched()).isEqualTo(THREADS);
    }

    @Test
    void theByteBudgetHoldsUnderContention() throws Exception {
        // Each response crosses 4 bytes of JSON ("ok") plus 6 of framing; the budget fits 3 of them.
        long crossing = 10;
        HostToolRegistry registry = HostToolRegistry.builder().maxDispatchesPerRun(THREADS)
                .responseLimits(new TransferLimits(100, 35, THREADS)).build();
        registry.register("ok", Tools.returning("ok"));
        HostToolRun run = new HostToolRun(registry, new RecordingLogger());

        List<DispatchResult> outcomes = dispatchAllAtOnce(run, "ok", 6);

        assertThat(outcomes.stream().filter(DispatchResult::ok)).hasSize(3);
        assertThat(run.deliveredBytes()).isEqualTo(3 * crossing);
        assertThat(run.delivered()).isEqualTo(3);
    }

    private List<DispatchResult> dispatchAllAtOnce(HostToolRun run, String name, long framing) throws Exception {
        CountDownLatch start = new CountDownLatch(1);
        List<Future<DispatchResult>> futures = new ArrayList<>();
        for (int i = 0; i < THREADS; i++) {
            futures.add(pool.submit(() -> {
                start.await();
                return run.dispatch(name, null, framing);
            }));
        }
        start.countDown();
        List<DispatchResult> outcomes = new ArrayList<>();
        for (Future<DispatchResult> future : futures) {
            outcomes.add(future.get(GUARD_SECONDS, TimeUnit.SECONDS));
        }
        return outcomes;
    }
}
