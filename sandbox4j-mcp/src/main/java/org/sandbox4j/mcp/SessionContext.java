package org.sandbox4j.mcp;

import java.util.function.Supplier;

/**
 * The MCP session of the tool call running on this thread. Set by the server around each tool
 * handler from the SDK's exchange, read by the {@link org.sandbox4j.core.CallerContext}'s thread
 * supplier; never from the tool's arguments, so a model cannot name another session.
 */
final class SessionContext {

    private final ThreadLocal<String> current = new ThreadLocal<>();

    /** The session of the call in progress on this thread, or null outside a tool call. */
    String current() {
        return current.get();
    }

    /** Runs {@code body} as a call of {@code sessionId}, restoring what was there before. */
    <T> T callAs(String sessionId, Supplier<T> body) {
        String previous = current.get();
        current.set(sessionId);
        try {
            return body.get();
        } finally {
            if (previous == null) {
                current.remove();
            } else {
                current.set(previous);
            }
        }
    }
}
