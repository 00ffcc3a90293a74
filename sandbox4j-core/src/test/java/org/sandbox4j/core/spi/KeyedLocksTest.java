package org.sandbox4j.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class KeyedLocksTest {

    @Test
    void oneKeyIsHeldByOneThreadAtATime() throws Exception {
        KeyedLocks<String> locks = new KeyedLocks<>();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger mostInside = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<?>> runs = new ArrayList<>();
            for (int i = 0; i < 64; i++) {
                runs.add(pool.submit(() -> locks.withLock("sandbox-a", () -> {
                    mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                    Thread.onSpinWait();
                    inside.decrementAndGet();
                })));
            }
            for (Future<?> run : runs) {
                run.get(30, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(mostInside.get()).isEqualTo(1);
        assertThat(locks.keysInUse()).as("pruned once nobody holds or waits").isZero();
    }

    @Test
    void differentKeysDoNotWaitForEachOther() throws Exception {
        KeyedLocks<String> locks = new KeyedLocks<>();
        CountDownLatch aHeld = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        Thread holder = new Thread(() -> locks.withLock("a", () -> {
            aHeld.countDown();
            awaitQuietly(release);
        }));
        holder.start();
        assertThat(aHeld.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(locks.withLock("b", () -> "ran while a is held")).isEqualTo("ran while a is held");
        assertThat(locks.keysInUse()).isEqualTo(1);
        release.countDown();
        holder.join(10_000);
        assertThat(locks.keysInUse()).isZero();
    }

    @Test
    void aFailingBodyReleasesAndPrunesItsKeyAndTheLockIsReentrant() {
        KeyedLocks<String> locks = new KeyedLocks<>();
        assertThatThrownBy(() -> locks.withLock("k", () -> {
            throw new IllegalStateException("boom");
        })).isInstanceOf(IllegalStateException.class);
        assertThat(locks.keysInUse()).isZero();
        assertThat(locks.withLock("k", () -> locks.withLock("k", () -> "nested"))).isEqualTo("nested");
        assertThat(locks.keysInUse()).isZero();
        assertThatThrownBy(() -> locks.withLock(null, () -> 1)).isInstanceOf(NullPointerException.class);
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
