package org.sandbox4j.springai;

import java.util.List;
import java.util.Objects;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.tool.AdapterBuilder;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;

/**
 * sandbox4j kinds as Spring AI tool callbacks. The key of every call is
 * {@code (scope, conversation id, agent dir)}: the conversation id comes from the call's
 * {@link org.springframework.ai.chat.model.ToolContext} (by default under
 * {@link ChatMemory#CONVERSATION_ID}, the key Spring AI's memory advisors use), never from the
 * tool's arguments, so two conversations never share a sandbox.
 *
 * <pre>{@code
 * SandboxToolCallbackProvider tools = SandboxToolCallbackProvider.builder()
 *         .scope("my-app")
 *         .tools(context -> List.of(CodeAct.builder(router, "agent", context).build()))
 *         .build();
 * String answer = ChatClient.create(chatModel).prompt()
 *         .user("What is the sum of 0..9?")
 *         .toolCallbacks(tools)
 *         .toolContext(Map.of(ChatMemory.CONVERSATION_ID, conversationId))
 *         .call().content();
 * }</pre>
 *
 * <p>The tool factory is called once, at {@link Builder#build()}, with the {@link CallerContext}
 * the provider answers per call; a kind that cannot be served fails there, and one with no
 * backend (an empty {@code Optional}) is left out. Thread-safe.
 */
public final class SandboxToolCallbackProvider implements ToolCallbackProvider {

    /** The tool-context key the conversation id is read from unless told otherwise. */
    public static final String DEFAULT_CONVERSATION_ID_KEY = ChatMemory.CONVERSATION_ID;

    private static final String FRAMEWORK = "Spring AI";

    private final String scope;
    private final String conversationIdKey;
    private final List<SandboxToolCallback> callbacks;

    private SandboxToolCallbackProvider(String scope, String conversationIdKey, List<SandboxToolCallback> callbacks) {
        this.scope = scope;
        this.conversationIdKey = conversationIdKey;
        this.callbacks = List.copyOf(callbacks);
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A fresh array of the callbacks, in the factory's order; empty when no kind has a backend. */
    @Override
    public ToolCallback[] getToolCallbacks() {
        return callbacks.toArray(new ToolCallback[0]);
    }

    /** The callbacks, in the factory's order. */
    public List<SandboxToolCallback> callbacks() {
        return callbacks;
    }

    /** The names of the tools, in the factory's order. */
    public List<String> toolNames() {
        return callbacks.stream().map(callback -> callback.getToolDefinition().name()).toList();
    }

    /** The scope of every key this provider forms. */
    public String scope() {
        return scope;
    }

    /** The tool-context key the conversation id is read from. */
    public String conversationIdKey() {
        return conversationIdKey;
    }

    @Override
    public String toString() {
        return "SandboxToolCallbackProvider" + toolNames();
    }

    /** Single-use builder: core's {@link AdapterBuilder} settings, and where the conversation id is read from. */
    public static final class Builder extends AdapterBuilder<Builder, ToolCallApproval> {
        private String conversationIdKey = DEFAULT_CONVERSATION_ID_KEY;

        private Builder() {
            super(FRAMEWORK);
        }

        /** The tool-context key holding the conversation id (default {@link #DEFAULT_CONVERSATION_ID_KEY}). */
        public Builder conversationIdKey(String key) {
            this.conversationIdKey = key;
            return this;
        }

        /**
         * Calls the tool factory and builds the provider.
         *
         * @throws IllegalArgumentException a blank scope or key, two tools with one name, a tool that
         *                                  requires approval with no {@link #approval} given
         * @throws org.sandbox4j.core.SandboxPolicyRefusal from the factory: a kind the router cannot serve
         */
        public SandboxToolCallbackProvider build() {
            Objects.requireNonNull(conversationIdKey, "conversationIdKey");
            if (conversationIdKey.isBlank()) {
                throw new IllegalArgumentException("the conversation id key cannot be blank");
            }
            Assembled assembled = assemble("give SandboxToolCallbackProvider.builder().approval(...) "
                    + "(or a ToolCallApproval bean) that asks", System.getLogger(SandboxToolCallback.class.getName()));
            List<SandboxToolCallback> callbacks = assembled.tools().stream()
                    .map(tool -> new SandboxToolCallback(tool, conversationIdKey, assembled.calls(), givenApproval()))
                    .toList();
            return new SandboxToolCallbackProvider(givenScope(), conversationIdKey, callbacks);
        }
    }
}
