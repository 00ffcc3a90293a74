package org.sandbox4j.springai;

import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

import org.sandbox4j.core.SandboxPurger;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.messages.Message;

/**
 * A {@link ChatMemory} whose {@link #clear(String)} (Spring AI's conversation-delete path) also
 * disposes of the conversation's sandboxes, in every backend, through a {@link SandboxPurger}.
 * The auto-configuration wraps every {@code ChatMemory} bean in one (unless
 * {@code sandbox4j.purge-on-chat-memory-clear=false}); elsewhere, {@link #wrap} one yourself.
 */
public final class PurgingChatMemory implements ChatMemory {

    private final ChatMemory delegate;
    private final Consumer<String> purge;

    PurgingChatMemory(ChatMemory delegate, Consumer<String> purge) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.purge = Objects.requireNonNull(purge, "purge");
    }

    /**
     * {@code memory}, whose {@code clear(conversationId)} also purges the sandboxes of
     * {@code (scope, conversationId)}: the scope must be the tool callbacks' own.
     */
    public static ChatMemory wrap(ChatMemory memory, SandboxPurger purger, String scope) {
        Objects.requireNonNull(purger, "purger");
        Objects.requireNonNull(scope, "scope");
        return new PurgingChatMemory(memory, conversationId -> purger.purgeScopedThread(scope, conversationId));
    }

    /** The memory this one adds purging to. */
    public ChatMemory delegate() {
        return delegate;
    }

    @Override
    public void add(String conversationId, List<Message> messages) {
        delegate.add(conversationId, messages);
    }

    @Override
    public List<Message> get(String conversationId) {
        return delegate.get(conversationId);
    }

    /** Clears the conversation's messages, then disposes of its sandboxes (which never throws). */
    @Override
    public void clear(String conversationId) {
        try {
            delegate.clear(conversationId);
        } finally {
            purge.accept(conversationId);
        }
    }

    @Override
    public String toString() {
        return "PurgingChatMemory[" + delegate + "]";
    }
}
