package org.sandbox4j.langchain4j;

import java.util.Optional;

/**
 * The conversation of a LangChain4j call, from its memory id: the one mapping of LangChain4j's
 * context this adapter owns (core's {@link org.sandbox4j.core.tool.CurrentConversation} holds it
 * for the length of the call).
 */
final class MemoryIds {

    /**
     * The memory id LangChain4j passes when the AI service method has no {@code @MemoryId}
     * parameter ({@code ChatMemoryService.DEFAULT}): every caller of such a service shares it, so it
     * names no conversation.
     */
    static final String SHARED_DEFAULT = "default";

    private MemoryIds() {
    }

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
}
