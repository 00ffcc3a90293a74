package org.sandbox4j.langchain4j;

import java.util.Optional;
import java.util.function.Supplier;

/**
 * The conversation of the tool call running on this thread, from LangChain4j's memory id. Set by
 * the executor around each call, read by the {@link org.sandbox4j.core.CallerContext}'s thread
 * supplier; never from the tool's arguments, so a model cannot name another conversation.
 */
final class MemoryIds {

    /**
     * The memory id LangChain4j passes when the AI service method has no {@code @MemoryId}
     * parameter ({@code ChatMemoryService.DEFAULT}): every caller of such a service shares it, so it
     * names no conversation.
     */
    static final String SHARED_DEFAULT = "default";

    private final ThreadLocal<String> current = new ThreadLocal<>();

    /**
     * The thread id for {@code memoryId}: its {@code toString()}; empty for none, a blank one, or
     * LangChain4j's shared {@value #SHARED_DEFAULT}.
     */
    static Optional<String> thread(Object memoryId) {
        if (memoryId == null) {
            return Optional.empty();
        }
        String thread = memoryId.toString();
        if (thread == null || thread.isBlank() || SHARED_DEFAULT.equals(thread)) {
            return Optional.empty();
        }
        return Optional.of(thread);
    }

    /** The thread of the call in progress on this thread, or null outside a tool call. */
    String current() {
        return current.get();
    }

    /** Runs {@code body} as a call of {@code thread}, restoring what was there before. */
    <T> T callAs(String thread, Supplier<T> body) {
        String previous = current.get();
        current.set(thread);
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
