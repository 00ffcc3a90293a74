package org.sandbox4j.core.spi;

import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxTimeoutException;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Host calls on guest-shaped state under a deadline: the work runs on a daemon worker and the
 * caller waits at most the deadline for it. Java has no non-blocking open, so a guest that swaps
 * a FIFO in for a file at the wrong instant can block the open that reads it until something opens
 * the FIFO's other end; the caller then gets a typed {@link SandboxTimeoutException} instead of
 * hanging, and the stuck worker is counted. One instance per sandbox: once
 * {@value #MAX_STUCK} of its calls are stuck at once, its further calls are refused at once (a
 * guest cannot tie up more than that many host threads), until they come free.
 */
public final class HostCalls {

    /** How many of one sandbox's calls may be stuck at once before its further calls are refused. */
    public static final int MAX_STUCK = 4;
    private static final ExecutorService WORKERS = Executors.newCachedThreadPool(task -> {
        Thread thread = new Thread(task, "sandbox4j-host-call");
        thread.setDaemon(true);
        return thread;
    });

    /** A call that may throw what the file system said. */
    @FunctionalInterface
    public interface Call<T> {
        T run() throws Exception;
    }

    private static final int RUNNING = 0;
    private static final int DONE = 1;
    private static final int ABANDONED = 2;

    private final String backendName;
    private final Duration deadline;
    private final AtomicInteger stuck = new AtomicInteger();

    /**
     * @param backendName for messages
     * @param deadline    how long one call may take
     */
    public HostCalls(String backendName, Duration deadline) {
        this.backendName = backendName;
        this.deadline = deadline;
    }

    /**
     * Runs {@code call} and returns what it returned, or throws what it threw (unchecked as they
     * are; a checked exception wrapped in {@link SandboxException}).
     *
     * @param what what the call does, for messages ("read 'x'")
     * @throws SandboxTimeoutException the call did not end within the deadline, or too many of this
     *                                 sandbox's calls are stuck already
     * @throws SandboxInterrupted      the caller was interrupted while waiting
     */
    public <T> T run(String what, Call<T> call) {
        if (stuck.get() >= MAX_STUCK) {
            throw new SandboxTimeoutException("backend '" + backendName + "' refused to " + what + ": " + MAX_STUCK
                    + " earlier calls on this sandbox are still stuck (its guest may have swapped in FIFOs); dispose "
                    + "of the sandbox");
        }
        // RUNNING until the worker ends it (DONE) or the caller gives up on it (ABANDONED), whichever is first.
        AtomicInteger state = new AtomicInteger(RUNNING);
        Future<T> pending = WORKERS.submit((Callable<T>) () -> {
            try {
                return call.run();
            } finally {
                if (!state.compareAndSet(RUNNING, DONE)) {
                    stuck.decrementAndGet();
                }
            }
        });
        try {
            try {
                return pending.get(deadline.toNanos(), TimeUnit.NANOSECONDS);
            } catch (TimeoutException late) {
                if (!state.compareAndSet(RUNNING, ABANDONED)) {
                    // It ended just now: take its outcome after all.
                    return pending.get();
                }
                stuck.incrementAndGet();
                pending.cancel(true);
                throw late;
            }
        } catch (TimeoutException late) {
            throw new SandboxTimeoutException("backend '" + backendName + "' could not " + what + " within "
                    + deadline.toSeconds() + " s (the guest may have swapped in a FIFO); the call was abandoned and "
                    + "nothing else was done");
        } catch (InterruptedException interrupted) {
            pending.cancel(true);
            Thread.currentThread().interrupt();
            throw new SandboxInterrupted("interrupted while trying to " + what, interrupted);
        } catch (CancellationException cancelled) {
            throw new SandboxInterrupted("the call to " + what + " was cancelled", cancelled);
        } catch (ExecutionException failed) {
            Throwable cause = failed.getCause();
            if (cause instanceof RuntimeException unchecked) {
                throw unchecked;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new SandboxException("backend '" + backendName + "' could not " + what + ": "
                    + ErrorDetail.of(cause), cause);
        }
    }

    /** How many of this sandbox's calls are stuck now. */
    public int stuck() {
        return stuck.get();
    }
}
