package org.sandbox4j.docker;

import java.time.Duration;
import java.util.Optional;

/**
 * One container's resident agent in one backend instance: the live one, how many were started, and
 * why the last start failed. After a failed start the engine's path serves calls for
 * {@link #RETRY_PAUSE} before another start is tried, so a container where the agent cannot run
 * does not pay a failed start on every call. Thread-safe; starting is the caller's, under the
 * backend's per-container lock.
 */
final class AgentSlot {

    /** How long calls take the engine's path after a failed start before the next start is tried. */
    static final Duration RETRY_PAUSE = Duration.ofSeconds(5);

    private ContainerAgent current;
    private int started;
    private long quietUntil;
    private boolean quiet;
    private String lastFailure = "";

    /** The agent, while its session works; a broken one is closed and forgotten here. */
    synchronized Optional<ContainerAgent> live() {
        if (current != null && !current.isOpen()) {
            current.close();
            current = null;
        }
        return Optional.ofNullable(current);
    }

    /** Whether a start may be tried now: none failed within {@link #RETRY_PAUSE}. */
    synchronized boolean mayStart() {
        return !quiet || System.nanoTime() - quietUntil >= 0;
    }

    /** The generation of the agent about to start (1 for the first). */
    synchronized int nextGeneration() {
        return ++started;
    }

    synchronized void started(ContainerAgent agent) {
        current = agent;
        quiet = false;
        lastFailure = "";
    }

    synchronized void failed(String why) {
        lastFailure = why;
        quiet = true;
        quietUntil = System.nanoTime() + RETRY_PAUSE.toNanos();
    }

    /** Ends {@code agent} and, if it is the live one, forgets it: the next call starts another. */
    void discard(ContainerAgent agent) {
        synchronized (this) {
            if (current == agent) {
                current = null;
            }
        }
        agent.close();
    }

    /** For diagnostics. */
    synchronized String describe() {
        if (current != null && current.isOpen()) {
            return "guest agent: " + current.describe();
        }
        if (!lastFailure.isEmpty()) {
            return "engine exec and archive API: the guest agent could not start (" + lastFailure + "); another start "
                    + "is tried " + RETRY_PAUSE.toSeconds() + " s after the failure";
        }
        return "guest agent: starts at the next call (" + started + " started so far)";
    }

    /** Ends the live agent, if any. */
    void close() {
        ContainerAgent agent;
        synchronized (this) {
            agent = current;
            current = null;
        }
        if (agent != null) {
            agent.close();
        }
    }
}
