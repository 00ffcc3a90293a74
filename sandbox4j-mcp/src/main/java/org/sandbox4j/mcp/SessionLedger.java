package org.sandbox4j.mcp;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

import org.sandbox4j.core.SandboxRouter;

/**
 * The MCP sessions one transport has seen, and the one place their sandboxes are disposed of:
 * {@code router.disposeScope(scope, sessionId)} when a session closes, goes idle past the SDK's
 * eviction, or the transport closes; whatever else a session held (its file area) is let go of
 * in the same place. Each session's record is replaced atomically per key, so a
 * request starting and an idle sweep never both win. Closing is serialised: a shutdown hook's
 * {@link #closeAll} waits for a disposal another thread has under way, since the JVM halts as
 * soon as its hooks return and would cut that disposal short.
 */
final class SessionLedger {

    private static final Logger LOG = System.getLogger(SessionLedger.class.getName());

    /** What is known of one session: requests still open on it, and when the last one ended. */
    private record Activity(int inFlight, long lastNanos) {
    }

    private final SandboxRouter router;
    private final String scope;
    private final LongSupplier nanoTime;
    private final Consumer<String> onClose;
    private final ConcurrentHashMap<String, Activity> sessions = new ConcurrentHashMap<>();

    SessionLedger(SandboxRouter router, String scope) {
        this(router, scope, session -> { });
    }

    /** @param onClose told of every session that ends, after its sandboxes are disposed of; must not throw */
    SessionLedger(SandboxRouter router, String scope, Consumer<String> onClose) {
        this(router, scope, System::nanoTime, onClose);
    }

    SessionLedger(SandboxRouter router, String scope, LongSupplier nanoTime) {
        this(router, scope, nanoTime, session -> { });
    }

    SessionLedger(SandboxRouter router, String scope, LongSupplier nanoTime, Consumer<String> onClose) {
        this.router = router;
        this.scope = scope;
        this.nanoTime = nanoTime;
        this.onClose = onClose;
    }

    /** A session the SDK has just created (its initialize answer named it). */
    void opened(String sessionId) {
        sessions.putIfAbsent(sessionId, new Activity(0, nanoTime.getAsLong()));
    }

    /** A tool call of a session the SDK dispatched: the session is real, so it is recorded. */
    void begin(String sessionId) {
        long now = nanoTime.getAsLong();
        sessions.merge(sessionId, new Activity(1, now), (old, fresh) -> new Activity(old.inFlight() + 1, now));
    }

    /**
     * A request naming a session starts. Only known sessions are counted, so a client cannot grow
     * the ledger by sending made-up ids.
     *
     * @return whether it was counted (then {@link #end} must follow)
     */
    boolean beginIfKnown(String sessionId) {
        long now = nanoTime.getAsLong();
        return sessions.computeIfPresent(sessionId, (id, old) -> new Activity(old.inFlight() + 1, now)) != null;
    }

    /** A counted request or call ended. */
    void end(String sessionId) {
        long now = nanoTime.getAsLong();
        sessions.computeIfPresent(sessionId, (id, old) -> new Activity(Math.max(0, old.inFlight() - 1), now));
    }

    /** The session closed: forget it and dispose of its sandboxes. Never throws. */
    synchronized int close(String sessionId) {
        sessions.remove(sessionId);
        return dispose(sessionId, "closed");
    }

    /** Closes every session with nothing open on it and no activity for longer than {@code idle}. */
    synchronized int closeIdle(Duration idle) {
        long now = nanoTime.getAsLong();
        int closed = 0;
        for (String sessionId : List.copyOf(sessions.keySet())) {
            AtomicBoolean removed = new AtomicBoolean();
            sessions.computeIfPresent(sessionId, (id, activity) -> {
                boolean idleLongEnough = activity.inFlight() == 0 && now - activity.lastNanos() > idle.toNanos();
                removed.set(idleLongEnough);
                return idleLongEnough ? null : activity;
            });
            if (removed.get()) {
                dispose(sessionId, "idle");
                closed++;
            }
        }
        return closed;
    }

    /** The transport closed: every session it saw ends. */
    synchronized void closeAll() {
        for (String sessionId : List.copyOf(sessions.keySet())) {
            close(sessionId);
        }
    }

    /** The sessions still open, for diagnostics and tests. */
    Set<String> open() {
        return Set.copyOf(sessions.keySet());
    }

    private int dispose(String sessionId, String why) {
        int disposed;
        try {
            disposed = router.disposeScope(scope, sessionId);
        } finally {
            onClose.accept(sessionId);
        }
        LOG.log(Level.DEBUG, () -> "MCP session " + sessionId + " " + why + ": disposed " + disposed + " sandbox(es)");
        return disposed;
    }
}
