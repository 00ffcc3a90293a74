package org.sandbox4j.springai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxCapabilityDenied;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.testkit.InMemoryBackend;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

/**
 * The provider's contract on an in-memory backend that records every key: where the key comes
 * from, what a call without a conversation gets, what the model sees on failure, and what
 * {@code build()} refuses.
 */
class SandboxToolCallbackProviderTest {

    private static final String SCOPE = "spring-ai-unit";
    private static final String AGENT = "agent";

    private final InMemoryBackend backend = InMemoryBackend.builder().isolation(Isolation.CONTAINER).build();
    private final SandboxRouter router = SandboxRouter.builder().backend(backend).minIsolation(Isolation.CONTAINER)
            .build();

    private SandboxToolCallbackProvider.Builder provider() {
        return SandboxToolCallbackProvider.builder().scope(SCOPE)
                .tools(context -> List.of(Whoami.tool(router, context, AGENT)));
    }

    private static ToolCallback only(SandboxToolCallbackProvider provider) {
        ToolCallback[] callbacks = provider.getToolCallbacks();
        assertThat(callbacks).hasSize(1);
        return callbacks[0];
    }

    private static ToolContext conversation(Object id) {
        return new ToolContext(Map.of(ChatMemory.CONVERSATION_ID, id));
    }

    @Test
    void eachCallbackIsTheToolsNameDescriptionAndSchemaAsTheyAre() {
        ToolDefinition definition = only(provider().build()).getToolDefinition();

        assertThat(definition.name()).isEqualTo(Whoami.NAME);
        assertThat(definition.description()).isEqualTo(Whoami.DESCRIPTION);
        assertThat(definition.inputSchema()).isEqualTo(Whoami.SCHEMA);
    }

    @Test
    void theKeyIsTheScopeTheConversationIdFromTheToolContextAndTheAgentDir() {
        ToolCallback callback = only(provider().build());

        assertThat(callback.call("{}", conversation("c-1"))).isEqualTo(SCOPE + "|c-1|" + AGENT);
        assertThat(callback.call("{}", conversation("c-2"))).isEqualTo(SCOPE + "|c-2|" + AGENT);
        assertThat(backend.keys()).containsExactly(new SandboxKey(SCOPE, "c-1", AGENT),
                new SandboxKey(SCOPE, "c-2", AGENT));
    }

    @Test
    void noArgumentTheModelSendsChangesTheKey() {
        ToolCallback callback = only(provider().build());

        assertThat(callback.call("{\"threadId\":\"someone-else\",\"" + ChatMemory.CONVERSATION_ID + "\":\"x\"}",
                conversation("mine"))).isEqualTo(SCOPE + "|mine|" + AGENT);
    }

    @Test
    void theConversationIdIsTheValuesTextAsSpringAisMemoryAdvisorsReadIt() {
        UUID id = UUID.randomUUID();

        assertThat(only(provider().build()).call("{}", conversation(id))).isEqualTo(SCOPE + "|" + id + "|" + AGENT);
    }

    @Test
    void aCallWithoutAConversationIdIsRefusedAndAcquiresNothing() {
        ToolCallback callback = only(provider().build());
        Map<String, Object> otherKeysOnly = new HashMap<>();
        otherKeysOnly.put("tenant", "acme");

        assertThat(callback.call("{}")).isEqualTo(SandboxToolCallback.NO_CONVERSATION);
        assertThat(callback.call("{}", null)).isEqualTo(SandboxToolCallback.NO_CONVERSATION);
        assertThat(callback.call("{}", new ToolContext(Map.of()))).isEqualTo(SandboxToolCallback.NO_CONVERSATION);
        assertThat(callback.call("{}", new ToolContext(otherKeysOnly))).isEqualTo(SandboxToolCallback.NO_CONVERSATION);
        assertThat(callback.call("{}", conversation("  "))).isEqualTo(SandboxToolCallback.NO_CONVERSATION);
        assertThat(backend.keys()).isEmpty();
    }

    @Test
    void theConversationKeyCanBeTheApplicationsOwn() {
        ToolCallback callback = only(provider().conversationIdKey("sessionId").build());

        assertThat(callback.call("{}", new ToolContext(Map.of("sessionId", "s-9")))).isEqualTo(SCOPE + "|s-9|" + AGENT);
        assertThat(callback.call("{}", conversation("c-1"))).isEqualTo(SandboxToolCallback.NO_CONVERSATION);
    }

    @Test
    void concurrentCallsOfTwoConversationsKeepTheirOwnKeys() throws Exception {
        ToolCallback callback = only(provider().build());
        List<CompletableFuture<String>> calls = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String id = "c-" + (i % 2);
            calls.add(CompletableFuture.supplyAsync(() -> callback.call("{}", conversation(id))));
        }
        for (int i = 0; i < calls.size(); i++) {
            assertThat(calls.get(i).get()).isEqualTo(SCOPE + "|c-" + (i % 2) + "|" + AGENT);
        }
    }

    @Test
    void aProviderFailureGivesTheModelAFixedSentenceWithoutItsDetail() {
        backend.setAcquireError(new IllegalStateException("secret provider detail at 10.1.2.3"));

        String text = only(provider().build()).call("{}", conversation("c-1"));

        assertThat(text).startsWith("Error:").doesNotContain("secret").doesNotContain("10.1.2.3");
    }

    @Test
    void malformedArgumentsAreAnErrorSentence() {
        assertThat(only(provider().build()).call("[1, 2]", conversation("c-1"))).startsWith("Error:");
        assertThat(backend.keys()).isEmpty();
    }

    @Test
    void aKindWithNoBackendIsLeftOutAndAKindTheRouterCannotServeFailsTheBuild() {
        SandboxRouter none = SandboxRouter.builder().build();
        assertThat(SandboxToolCallbackProvider.builder().scope(SCOPE)
                .tools(context -> List.of(Whoami.tool(none, context, AGENT))).build().getToolCallbacks()).isEmpty();
        assertThat(SandboxToolCallbackProvider.builder().scope(SCOPE).build().toolNames()).isEmpty();

        SandboxRouter denying = SandboxRouter.builder().backend(backend).minIsolation(Isolation.CONTAINER)
                .deny(Capability.EXEC).build();
        assertThatThrownBy(() -> SandboxToolCallbackProvider.builder().scope(SCOPE)
                .tools(context -> List.of(Whoami.tool(denying, context, AGENT))).build())
                .isInstanceOf(SandboxCapabilityDenied.class);
    }

    @Test
    void buildRefusesABlankScopeOrKeyAndTwoToolsWithOneName() {
        assertThatThrownBy(() -> provider().scope(" ").build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> provider().scope(null).build()).isInstanceOf(NullPointerException.class);
        assertThatThrownBy(() -> provider().conversationIdKey("").build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SandboxToolCallbackProvider.builder().scope(SCOPE)
                .tools(context -> List.of(Whoami.tool(router, context, AGENT), Whoami.tool(router, context, "other")))
                .build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'" + Whoami.NAME + "'");
    }

    @Test
    void aToolThatRequiresApprovalIsOfferedOnlyWithAnApprovalAndRunsOnlyWhenApproved() {
        assertThatThrownBy(() -> SandboxToolCallbackProvider.builder().scope(SCOPE)
                .tools(context -> List.of(Whoami.tool("host_lookup", router, context, AGENT, true))).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("approval");

        List<String> asked = new ArrayList<>();
        SandboxToolCallbackProvider provider = SandboxToolCallbackProvider.builder().scope(SCOPE)
                .approval((tool, arguments, conversationId) -> {
                    asked.add(tool + " " + arguments + " " + conversationId);
                    return conversationId.equals("yes");
                })
                .tools(context -> List.of(Whoami.tool("host_lookup", router, context, AGENT, true),
                        Whoami.tool(router, context, AGENT)))
                .build();
        SandboxToolCallback approved = provider.callbacks().get(0);
        SandboxToolCallback plain = provider.callbacks().get(1);

        assertThat(approved.requiresApproval()).isTrue();
        assertThat(approved.call("{}", conversation("no"))).isEqualTo(SandboxToolCallback.NOT_APPROVED);
        assertThat(approved.call("{}", conversation("yes"))).isEqualTo(SCOPE + "|yes|" + AGENT);
        assertThat(plain.call("{}", conversation("no"))).as("a tool that needs no approval is not put to the person")
                .isEqualTo(SCOPE + "|no|" + AGENT);
        assertThat(asked).containsExactly("host_lookup {} no", "host_lookup {} yes");
        assertThat(backend.keys()).extracting(SandboxKey::threadId).containsExactly("yes", "no");
    }

    @Test
    void theFactoryIsCalledOnceAndTheToolsComeInItsOrder() {
        int[] calls = {0};
        SandboxToolCallbackProvider provider = SandboxToolCallbackProvider.builder().scope(SCOPE)
                .tools(context -> {
                    calls[0]++;
                    return List.of(Whoami.tool("b", router, context, AGENT, false), Optional.empty(),
                            Whoami.tool("a", router, context, AGENT, false));
                })
                .build();
        provider.getToolCallbacks();
        provider.getToolCallbacks();

        assertThat(calls[0]).isEqualTo(1);
        assertThat(provider.toolNames()).containsExactly("b", "a");
        assertThat(provider.getToolCallbacks()).isNotSameAs(provider.getToolCallbacks());
    }
}
