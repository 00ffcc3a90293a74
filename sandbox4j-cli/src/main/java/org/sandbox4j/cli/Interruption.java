package org.sandbox4j.cli;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a SIGINT or SIGTERM does to a command that runs a sandbox of its own: the JVM runs its
 * shutdown hooks, and this one disposes of the invocation's sandbox (else it would wait for its
 * lease) and says {@code sandbox4j: interrupted}; the JVM then exits 130 (SIGINT) or 143 (SIGTERM),
 * as a shell reports a command a signal ended. Whichever of the hook and the command's own close
 * comes first does the disposing; a hook that comes second waits for the close to finish, so the
 * JVM does not halt halfway through it.
 */
final class Interruption {

    /** The one word the user sees when a signal ended the command. */
    static final String MESSAGE = "interrupted";

    /** How long a late hook waits for the command's own disposal: a backend's dispose is bounded well within. */
    static final Duration CLOSE_WAIT = Duration.ofSeconds(30);

    /** Set once a signal began shutting the JVM down: the command's own failures are no news then. */
    private static final AtomicBoolean SIGNALLED = new AtomicBoolean();

    private final AtomicBoolean claimed = new AtomicBoolean();
    private final CountDownLatch closed = new CountDownLatch(1);
    private final Thread hook;

    private Interruption(Console console, Runnable dispose) {
        this.hook = dispose == null ? null : new Thread(() -> onSignal(console, dispose), "sandbox4j-interrupted");
    }

    /** For a session whose sandbox outlives it (a named thread's stays warm): no hook. */
    static Interruption none() {
        return new Interruption(null, null);
    }

    static Interruption register(Console console, Runnable dispose) {
        Interruption interruption = new Interruption(console, dispose);
        Runtime.getRuntime().addShutdownHook(interruption.hook);
        return interruption;
    }

    private void onSignal(Console console, Runnable dispose) {
        if (!claimed.compareAndSet(false, true)) {
            awaitClose();
            return;
        }
        SIGNALLED.set(true);
        console.error(MESSAGE);
        try {
            dispose.run();
        } catch (RuntimeException e) {
            console.detail("could not dispose of the sandbox while exiting: " + e.getMessage());
        }
    }

    private void awaitClose() {
        try {
            closed.await(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * The command ends on its own: runs {@code dispose} unless the hook already is, then lets the
     * hook go.
     *
     * @return whether this close did the disposing (false: a signal is ending the JVM, and the hook does)
     */
    boolean close(Runnable dispose) {
        if (!claimed.compareAndSet(false, true)) {
            return false;
        }
        try {
            dispose.run();
        } finally {
            closed.countDown();
            if (hook != null) {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // The JVM is exiting already; the hook finds the work done.
                }
            }
        }
        return true;
    }

    /** Whether a signal is ending the JVM (then the command's own failure is not reported). */
    static boolean signalled() {
        return SIGNALLED.get();
    }
}
