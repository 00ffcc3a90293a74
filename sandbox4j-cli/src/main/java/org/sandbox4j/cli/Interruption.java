package org.sandbox4j.cli;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a SIGINT or SIGTERM does to a command that runs a sandbox of its own: the JVM runs its
 * shutdown hooks, and this one disposes of the invocation's sandbox (else it would wait for its
 * lease) and says {@code sandbox4j: interrupted}; the JVM then exits 130 (SIGINT) or 143 (SIGTERM),
 * as a shell reports a command a signal ended. Whichever of the hook and the command's own close
 * comes first does the disposing; the other does nothing.
 */
final class Interruption {

    /** A session that disposes of nothing (a named thread's sandbox stays warm): no hook. */
    static final Interruption NONE = new Interruption(null, null);

    /** The one word the user sees when a signal ended the command. */
    static final String MESSAGE = "interrupted";

    /** Set once a signal began shutting the JVM down: the command's own failures are no news then. */
    private static final AtomicBoolean SIGNALLED = new AtomicBoolean();

    private final AtomicBoolean finished = new AtomicBoolean();
    private final Thread hook;

    private Interruption(Console console, Runnable dispose) {
        this.hook = dispose == null ? null : new Thread(() -> {
            if (finished.compareAndSet(false, true)) {
                SIGNALLED.set(true);
                console.error(MESSAGE);
                try {
                    dispose.run();
                } catch (RuntimeException e) {
                    console.detail("could not dispose of the sandbox while exiting: " + e.getMessage());
                }
            }
        }, "sandbox4j-interrupted");
    }

    static Interruption register(Console console, Runnable dispose) {
        Interruption interruption = new Interruption(console, dispose);
        Runtime.getRuntime().addShutdownHook(interruption.hook);
        return interruption;
    }

    /**
     * The command ends on its own: the hook is no longer needed.
     *
     * @return whether the command's close should dispose (false: the hook already is)
     */
    boolean finish() {
        if (hook == null) {
            return true;
        }
        if (!finished.compareAndSet(false, true)) {
            return false;
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // The JVM is exiting already; the hook will find the work done.
        }
        return true;
    }

    /** Whether a signal is ending the JVM (then the command's own failure is not reported). */
    static boolean signalled() {
        return SIGNALLED.get();
    }
}
