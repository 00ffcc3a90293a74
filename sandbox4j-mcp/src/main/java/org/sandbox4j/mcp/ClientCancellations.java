package org.sandbox4j.mcp;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The tool calls of one transport in progress, by the client's JSON-RPC request id, so that a
 * client's {@code notifications/cancelled} interrupts the thread running the call (the program is
 * killed: core's {@code SandboxInterrupted}) and the call answers nothing, as the MCP
 * specification asks. The SDK drops that notification, and hands a tool handler neither the
 * request id nor a way to not answer; {@link TransportMapper} reads both notifications and requests
 * as they are decoded, and a handler that returns no result sends no response. Thread-safe.
 */
final class ClientCancellations {

    /** How many cancellations of calls not yet started are remembered (the notification can overtake the call). */
    static final int EARLY_CANCELLATIONS_KEPT = 64;

    /** The session every call of a one-session transport (stdio) is counted under. */
    private static final String THE_SESSION = "";

    private final boolean perSession;
    private final Map<CallKey, Running> running = new HashMap<>();
    private final Set<CallKey> cancelledEarly = new HashSet<>();
    private final Deque<CallKey> cancelledEarlyOrder = new ArrayDeque<>();

    private ClientCancellations(boolean perSession) {
        this.perSession = perSession;
    }

    /** For a transport of one session: a cancellation names its call by request id alone. */
    static ClientCancellations oneSession() {
        return new ClientCancellations(false);
    }

    /** For a transport of many sessions: request ids are the client's own, so they are counted per session. */
    static ClientCancellations perSession() {
        return new ClientCancellations(true);
    }

    /**
     * Registers the calling thread as running request {@code requestId} of {@code session}; close
     * the result when the call is over. A call without a request id cannot be cancelled.
     */
    synchronized Running start(String session, Optional<String> requestId) {
        Running call = new Running(requestId.map(id -> key(session, id)));
        call.key.ifPresent(key -> {
            if (cancelledEarly.remove(key)) {
                cancelledEarlyOrder.remove(key);
                call.cancelled = true;
            } else {
                running.put(key, call);
            }
        });
        return call;
    }

    /** The client cancelled request {@code requestId} of {@code session}: its thread is interrupted. */
    synchronized void cancel(String session, String requestId) {
        CallKey key = key(session, requestId);
        Running call = running.get(key);
        if (call != null) {
            call.cancelled = true;
            call.thread.interrupt();
            return;
        }
        if (cancelledEarly.add(key)) {
            cancelledEarlyOrder.addLast(key);
            if (cancelledEarlyOrder.size() > EARLY_CANCELLATIONS_KEPT) {
                cancelledEarly.remove(cancelledEarlyOrder.removeFirst());
            }
        }
    }

    private CallKey key(String session, String requestId) {
        return new CallKey(perSession ? Objects.requireNonNull(session, "session") : THE_SESSION, requestId);
    }

    private synchronized void finish(Running call) {
        call.key.ifPresent(key -> running.remove(key, call));
        if (call.cancelled) {
            // The interrupt was this registry's: the pool thread must not carry it into its next task.
            Thread.interrupted();
        }
    }

    private record CallKey(String session, String requestId) {
    }

    /** One call in progress on the thread that started it. */
    final class Running implements AutoCloseable {
        private final Optional<CallKey> key;
        private final Thread thread = Thread.currentThread();
        private boolean cancelled;

        private Running(Optional<CallKey> key) {
            this.key = key;
        }

        /** Whether the client cancelled this call: then it must send no response. */
        boolean cancelled() {
            synchronized (ClientCancellations.this) {
                return cancelled;
            }
        }

        @Override
        public void close() {
            finish(this);
        }
    }
}
