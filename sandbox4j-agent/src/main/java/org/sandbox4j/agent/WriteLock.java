package org.sandbox4j.agent;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The lock that serialises the writes to one stream, which a writer waits for only so long: a
 * write that cannot start within {@code wait} is stuck behind another, so the peer stopped
 * reading, and the caller breaks the stream instead of hanging. The wait is not interruptible (an
 * interrupt is kept for the caller): a {@code KILL} or a {@code CLOSE} must go out even from an
 * interrupted thread. Both the agent's connection and the egress tunnel write through one.
 */
final class WriteLock {

    private final ReentrantLock lock = new ReentrantLock();
    private final Duration wait;

    WriteLock(Duration wait) {
        this.wait = wait;
    }

    /** Takes the lock; false when another write held it for the whole wait. */
    boolean tryLock() {
        long deadline = System.nanoTime() + wait.toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return lock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    void unlock() {
        lock.unlock();
    }
}
