package org.sandbox4j.springai;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.FileListing;
import org.sandbox4j.core.tool.SandboxTool;
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

    /** Single-use builder. */
    public static final class Builder {
        private String scope;
        private Function<? super CallerContext, ? extends Collection<Optional<SandboxTool>>> toolFactory;
        private String conversationIdKey = DEFAULT_CONVERSATION_ID_KEY;
        private FileListing fileListing = FileListing.ALL;
        private ToolCallApproval approval;

        private Builder() {
        }

        /** The scope (tenant, user, application) of every key. */
        public Builder scope(String scope) {
            this.scope = scope;
            return this;
        }

        /**
         * Builds the tools for the context the provider supplies: its thread is the conversation of
         * the call in progress. An empty {@code Optional} (a kind with no backend) is left out;
         * without a factory the provider offers no tools.
         */
        public Builder tools(Function<? super CallerContext, ? extends Collection<Optional<SandboxTool>>> factory) {
            this.toolFactory = factory;
            return this;
        }

        /** The tool-context key holding the conversation id (default {@link #DEFAULT_CONVERSATION_ID_KEY}). */
        public Builder conversationIdKey(String key) {
            this.conversationIdKey = key;
            return this;
        }

        /** Which names of a file store the tools may use (default: all of them). */
        public Builder fileListing(FileListing listing) {
            this.fileListing = Objects.requireNonNull(listing, "listing");
            return this;
        }

        /**
         * Asked before each call of a tool that requires approval (only those); without it such a
         * tool is refused at build.
         */
        public Builder approval(ToolCallApproval approval) {
            this.approval = approval;
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
            Objects.requireNonNull(scope, "scope");
            if (scope.isBlank()) {
                throw new IllegalArgumentException("the scope cannot be blank; name the user or application");
            }
            Objects.requireNonNull(conversationIdKey, "conversationIdKey");
            if (conversationIdKey.isBlank()) {
                throw new IllegalArgumentException("the conversation id key cannot be blank");
            }
            ConversationContext conversations = new ConversationContext();
            String fixedScope = scope;
            CallerContext context = CallerContext.of(() -> fixedScope, conversations::current, fileListing);
            List<SandboxToolCallback> callbacks = new ArrayList<>();
            if (toolFactory != null) {
                Collection<Optional<SandboxTool>> built = Objects.requireNonNull(toolFactory.apply(context),
                        "the tool factory returned null; return an empty list for no tools");
                Set<String> names = new HashSet<>();
                for (Optional<SandboxTool> tool : built) {
                    if (tool == null || tool.isEmpty()) {
                        continue;
                    }
                    SandboxTool sandboxTool = tool.get();
                    if (!names.add(sandboxTool.name())) {
                        throw new IllegalArgumentException("two tools are named '" + sandboxTool.name()
                                + "'; Spring AI calls a tool by its name, so each must be unique");
                    }
                    if (sandboxTool.requiresApproval() && approval == null) {
                        throw new IllegalArgumentException("the tool '" + sandboxTool.name() + "' acts with the "
                                + "user's identity and needs a person to approve each call, which Spring AI has no "
                                + "step for; give the provider an approval(...) that asks");
                    }
                    // Only a tool that asks for approval is put to the person; the others run as called.
                    Optional<ToolCallApproval> gate = sandboxTool.requiresApproval()
                            ? Optional.of(approval) : Optional.empty();
                    callbacks.add(new SandboxToolCallback(sandboxTool, conversationIdKey, conversations, gate));
                }
            }
            return new SandboxToolCallbackProvider(fixedScope, conversationIdKey, callbacks);
        }
    }
}
