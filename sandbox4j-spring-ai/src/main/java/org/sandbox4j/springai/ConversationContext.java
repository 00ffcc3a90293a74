package org.sandbox4j.springai;

import java.util.function.Supplier;

/**
 * The conversation of the tool call running on this thread. Set by {@link SandboxToolCallback}
 * around each call from Spring AI's {@link org.springframework.ai.chat.model.ToolContext}, read by
 * the {@link org.sandbox4j.core.CallerContext}'s thread supplier; never from the tool's
 * arguments, so a model cannot name another conversation.
 */
final class ConversationContext {

    private final ThreadLocal<String> current = new ThreadLocal<>();

    /** The conversation of the call in progress on this thread, or null outside a tool call. */
    String current() {
        return current.get();
    }

    /** Runs {@code body} as a call of {@code conversationId}, restoring what was there before. */
    <T> T callAs(String conversationId, Supplier<T> body) {
        String previous = current.get();
        current.set(conversationId);
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
