package org.sandbox4j.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.invocation.InvocationContext;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.service.tool.AiServiceTool;
import dev.langchain4j.service.tool.ToolExecutionResult;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.langchain4j.service.tool.ToolProviderRequest;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxCapabilityNotSupported;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.tool.FrameworkCalls;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.SandboxedTool;
import org.sandbox4j.core.tool.ToolResult;
import org.sandbox4j.langchain4j.Assistants.Assistant;
import org.sandbox4j.testkit.InMemoryBackend;

/**
 * The provider's contract on an in-memory backend that records every key: where the key comes
 * from, what a call without a conversation gets, what the model sees when the provider fails,
 * when there are no tools and when construction fails, and approval.
 */
class SandboxToolProviderTest {

    private static final String SCOPE = "lc4j-unit";
    private static final String AGENT = "agent";
    private static final String WHOAMI = "whoami";
    private static final String NO_CONVERSATION =
            "Error: no active thread context — whoami must be called from within a thread";

    private final InMemoryBackend backend = InMemoryBackend.builder().isolation(Isolation.CONTAINER).build();
    private final SandboxRouter router = SandboxRouter.builder().backend(backend).minIsolation(Isolation.CONTAINER)
            .build();
    private final List<LogRecord> logged = new ArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord record) {
            logged.add(record);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    @AfterEach
    void stopCapturing() {
        Logger.getLogger("").removeHandler(capture);
        Thread.interrupted();
    }

    /** A kind that is not execute_code: it acquires its sandbox and answers with the key it ran under. */
    private static Optional<SandboxTool> whoami(SandboxRouter router, CallerContext context, boolean approval) {
        return SandboxedTool.builder(WHOAMI, SandboxSpec.builder(WHOAMI).build())
                .router(router)
                .context(context)
                .agentDir(AGENT)
                .description("Says which conversation key the call ran under.")
                .parametersSchema("{\"type\":\"object\",\"properties\":{\"threadId\":{\"type\":\"string\"}}}")
                .requiresApproval(approval)
                .body((call, arguments) -> {
                    SandboxKey key = call.key();
                    call.acquire(key);
                    return ToolResult.ok(key.scope() + "|" + key.threadId() + "|" + key.agentDir());
                })
                .build();
    }

    private SandboxToolProvider provider() {
        return SandboxToolProvider.builder().scope(SCOPE)
                .tools(context -> List.of(whoami(router, context, false), CodeAct.builder(router, AGENT, context).build()))
                .build();
    }

    private static ToolExecutor executor(SandboxToolProvider provider, String name) {
        return provider.tools().entrySet().stream().filter(entry -> entry.getKey().name().equals(name))
                .map(Map.Entry::getValue).findFirst().orElseThrow();
    }

    private static ToolExecutionRequest request(String name, String arguments) {
        return ToolExecutionRequest.builder().id("1").name(name).arguments(arguments).build();
    }

    private static InvocationContext invocation(Object memoryId) {
        return InvocationContext.builder().chatMemoryId(memoryId).build();
    }

    private static ToolProviderRequest providerRequest() {
        return ToolProviderRequest.builder().invocationContext(invocation("c")).userMessage(UserMessage.from("hi"))
                .build();
    }

    @Test
    void theKeyIsTheScopeTheMemoryIdAndTheAgentDirAndNoArgumentChangesIt() {
        ScriptedChatModel model = new ScriptedChatModel(WHOAMI);
        Assistant assistant = Assistants.assistant(model, provider());

        assertThat(assistant.chat("conversation-1", "{}")).endsWith(SCOPE + "|conversation-1|" + AGENT);
        assertThat(assistant.chat("conversation-2", "{\"threadId\":\"conversation-1\"}"))
                .as("an argument naming another conversation changes nothing")
                .endsWith(SCOPE + "|conversation-2|" + AGENT);
        assertThat(backend.keys()).extracting(SandboxKey::threadId).containsExactly("conversation-1", "conversation-2");
    }

    @Test
    void aMemoryIdThatIsNotAStringIsKeyedByItsText() {
        ToolExecutor whoami = executor(provider(), WHOAMI);

        assertThat(whoami.execute(request(WHOAMI, "{}"), 42L)).isEqualTo(SCOPE + "|42|" + AGENT);
        assertThat(whoami.executeWithContext(request(WHOAMI, "{}"), invocation(7)).resultText())
                .isEqualTo(SCOPE + "|7|" + AGENT);
    }

    @Test
    void aCallWithoutAConversationIsRefusedWithAFixedSentenceAndAcquiresNothing() {
        ToolExecutor whoami = executor(provider(), WHOAMI);
        Logger.getLogger("").addHandler(capture);

        for (Object none : new Object[] {null, MemoryIds.SHARED_DEFAULT, " "}) {
            assertThat(whoami.execute(request(WHOAMI, "{}"), none)).as("memory id %s", none).isEqualTo(NO_CONVERSATION);
            ToolExecutionResult result = whoami.executeWithContext(request(WHOAMI, "{}"), invocation(none));
            assertThat(result.isError()).isTrue();
            assertThat(result.resultText()).isEqualTo(NO_CONVERSATION);
        }
        assertThat(whoami.executeWithContext(request(WHOAMI, "{}"), null).resultText()).isEqualTo(NO_CONVERSATION);
        assertThat(whoami.execute(request(WHOAMI, "not json at all"), null))
                .as("refused before the arguments are read").isEqualTo(NO_CONVERSATION);
        assertThat(backend.keys()).isEmpty();
        assertThat(logged).extracting(LogRecord::getMessage).anyMatch(message -> message.contains("@MemoryId"));
    }

    @Test
    void anAssistantWithoutAMemoryIdIsRefused() {
        ScriptedChatModel model = new ScriptedChatModel(WHOAMI);

        assertThat(Assistants.shared(model, provider()).chat("{}")).endsWith(NO_CONVERSATION);
        assertThat(backend.keys()).isEmpty();
    }

    @Test
    void aProviderFailureShowsTheModelTheToolsFixedSentenceAndLogsTheDetail() {
        backend.setAcquireError(new IllegalStateException("connection to sandbox-host.internal:2375 refused"));
        Logger.getLogger("").addHandler(capture);

        ToolExecutionResult result = executor(provider(), WHOAMI)
                .executeWithContext(request(WHOAMI, "{}"), invocation("conversation-1"));

        assertThat(result.isError()).isTrue();
        assertThat(result.resultText()).isEqualTo("Error: sandbox unavailable — degrading to T0 (LLM self-check only)");
        assertThat(logged).extracting(LogRecord::getMessage)
                .anyMatch(message -> message.contains("sandbox-host.internal:2375"));
    }

    @Test
    void aCancelledCallIsAnsweredAndTheInterruptIsKept() {
        SandboxToolProvider provider = SandboxToolProvider.builder().scope(SCOPE)
                .tools(context -> List.of(SandboxedTool.builder("slow", SandboxSpec.builder("slow").build())
                        .router(router).context(context).agentDir(AGENT).description("Is cancelled.")
                        .body((call, arguments) -> {
                            throw new SandboxInterrupted("cancelled while waiting for the sandbox");
                        })
                        .build()))
                .build();

        String text = executor(provider, "slow").execute(request("slow", "{}"), "conversation-1");

        assertThat(text).isEqualTo(FrameworkCalls.CANCELLED);
        assertThat(Thread.currentThread().isInterrupted()).isTrue();
    }

    @Test
    void noBackendMeansNoTools() {
        SandboxRouter none = SandboxRouter.builder().build();
        SandboxToolProvider provider = SandboxToolProvider.builder().scope(SCOPE)
                .tools(context -> List.of(whoami(none, context, false), CodeAct.builder(none, AGENT, context).build()))
                .build();

        assertThat(provider.tools()).isEmpty();
        assertThat(provider.toolNames()).isEmpty();
        assertThat(provider.provideTools(providerRequest()).aiServiceTools()).isEmpty();
        assertThat(SandboxToolProvider.builder().scope(SCOPE).build().tools()).as("no factory").isEmpty();
        List<ChatRequest> seen = new ArrayList<>();
        ChatModel model = new ChatModel() {
            @Override
            public ChatResponse doChat(ChatRequest request) {
                seen.add(request);
                return ChatResponse.builder().aiMessage(AiMessage.from("no tools here")).build();
            }
        };
        assertThat(Assistants.assistant(model, provider).chat("conversation-1", "hello")).isEqualTo("no tools here");
        assertThat(seen).singleElement().satisfies(request -> assertThat(request.toolSpecifications())
                .as("the model is offered no tool").isNullOrEmpty());
    }

    @Test
    void aBackendThatCannotServeTheSpecFailsConstruction() {
        InMemoryBackend execOnly = InMemoryBackend.builder().isolation(Isolation.CONTAINER)
                .capabilities(Capability.EXEC).build();
        SandboxRouter weak = SandboxRouter.builder().backend(execOnly).minIsolation(Isolation.CONTAINER).build();

        assertThatThrownBy(() -> SandboxToolProvider.builder().scope(SCOPE)
                .tools(context -> List.of(CodeAct.builder(weak, AGENT, context).build())).build())
                .isInstanceOf(SandboxCapabilityNotSupported.class)
                .hasMessageContaining("files_in");
    }

    @Test
    void theProviderOffersEachKindAsItsSpecificationAndExecutor() {
        SandboxToolProvider provider = provider();

        assertThat(provider.toolNames()).containsExactly(WHOAMI, CodeAct.TOOL_NAME);
        assertThat(provider.provideTools(providerRequest()).aiServiceTools())
                .extracting(AiServiceTool::toolSpecification, AiServiceTool::toolExecutor)
                .containsExactlyElementsOf(provider.tools().entrySet().stream()
                        .map(entry -> tuple(entry.getKey(), entry.getValue())).toList());
        assertThat(provider.isDynamic()).isFalse();
        ToolSpecification whoami = provider.tools().keySet().iterator().next();
        assertThat(whoami.description()).isEqualTo("Says which conversation key the call ran under.");
        assertThat(whoami.parameters().properties()).containsOnlyKeys("threadId");
        assertThat(whoami.metadata()).containsEntry(SandboxToolProvider.REQUIRES_APPROVAL_METADATA, false);
        assertThat(provider.scope()).isEqualTo(SCOPE);
    }

    @Test
    void twoToolsWithOneNameOrABlankScopeFailConstruction() {
        assertThatThrownBy(() -> SandboxToolProvider.builder().scope(SCOPE)
                .tools(context -> List.of(whoami(router, context, false), whoami(router, context, false))).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'whoami'");
        assertThatThrownBy(() -> SandboxToolProvider.builder().scope(" ").build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aToolThatRequiresApprovalIsOfferedOnlyWithAnApprovalAndRunsOnlyWhenApproved() {
        assertThatThrownBy(() -> SandboxToolProvider.builder().scope(SCOPE)
                .tools(context -> List.of(whoami(router, context, true))).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("approval");

        List<String> asked = new ArrayList<>();
        boolean[] answer = {false};
        SandboxToolProvider provider = SandboxToolProvider.builder().scope(SCOPE)
                .tools(context -> List.of(whoami(router, context, true)))
                .approval((thread, request) -> {
                    asked.add(thread + " " + request.name() + " " + request.arguments());
                    return answer[0];
                })
                .build();
        ToolExecutor whoami = executor(provider, WHOAMI);
        assertThat(provider.tools().keySet().iterator().next().metadata())
                .containsEntry(SandboxToolProvider.REQUIRES_APPROVAL_METADATA, true);

        assertThat(whoami.execute(request(WHOAMI, "{}"), "conversation-1")).isEqualTo(FrameworkCalls.NOT_APPROVED);
        assertThat(backend.keys()).as("nothing acquired for a call not approved").isEmpty();
        answer[0] = true;
        assertThat(whoami.execute(request(WHOAMI, "{}"), "conversation-1")).endsWith("|conversation-1|" + AGENT);
        assertThat(asked).containsExactly("conversation-1 whoami {}", "conversation-1 whoami {}");
    }

    @Test
    void anApprovalThatFailsIsANo() {
        SandboxToolProvider provider = SandboxToolProvider.builder().scope(SCOPE)
                .tools(context -> List.of(whoami(router, context, true)))
                .approval((thread, request) -> {
                    throw new IllegalStateException("the approval service is down");
                })
                .build();

        assertThat(executor(provider, WHOAMI).execute(request(WHOAMI, "{}"), "conversation-1"))
                .isEqualTo(FrameworkCalls.NOT_APPROVED);
        assertThat(backend.keys()).isEmpty();
    }
}
