package org.sandbox4j.springai;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxBackendNotPermitted;
import org.sandbox4j.core.SandboxCapabilityDenied;
import org.sandbox4j.core.SandboxFloorNotPermitted;
import org.sandbox4j.core.SandboxPurger;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.local.BubblewrapBackend;
import org.sandbox4j.testkit.InMemoryBackend;
import org.sandbox4j.testkit.InMemoryBackend.Purge;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.chat.memory.MessageWindowChatMemory;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The auto-configuration in an application context, as Spring Boot builds one: tools with a
 * backend bean, no bean at all without one, start-up failure on a policy the backend or the kind
 * cannot meet, and every property reaching the router, the kinds and the keys.
 */
class SandboxAutoConfigurationTest {

    private static final String FLOOR_CONTAINER = "sandbox4j.floor=container";

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(SandboxAutoConfiguration.class));

    @Configuration(proxyBeanMethods = false)
    static class ContainerBackend {
        @Bean
        InMemoryBackend inMemoryBackend() {
            return InMemoryBackend.builder().isolation(Isolation.CONTAINER).build();
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class TwoBackends {
        @Bean
        InMemoryBackend first() {
            return InMemoryBackend.builder().name("first").isolation(Isolation.CONTAINER).build();
        }

        @Bean
        InMemoryBackend second() {
            return InMemoryBackend.builder().name("second").isolation(Isolation.CONTAINER).build();
        }
    }

    /** The application's kind: whoami, recording what the auto-configuration handed it. */
    @Configuration(proxyBeanMethods = false)
    static class WhoamiKind {
        @Bean
        List<SandboxKindContext> handedToKinds() {
            return new CopyOnWriteArrayList<>();
        }

        @Bean
        SandboxKind whoami(List<SandboxKindContext> handedToKinds) {
            return kind -> {
                handedToKinds.add(kind);
                return Whoami.tool(kind.router(), kind.caller(), kind.agentDir());
            };
        }
    }

    @Configuration(proxyBeanMethods = false)
    static class Memory {
        @Bean
        ChatMemory chatMemory() {
            return MessageWindowChatMemory.builder().build();
        }
    }

    /** The application's own router, and no backend bean. */
    @Configuration(proxyBeanMethods = false)
    static class OwnRouter {
        @Bean
        SandboxRouter sandboxRouter() {
            return SandboxRouter.builder().backend(InMemoryBackend.builder().isolation(Isolation.MICROVM).build())
                    .build();
        }
    }

    private static String callAs(AssertableApplicationContext context, String conversation) {
        ToolCallback[] callbacks = context.getBean(ToolCallbackProvider.class).getToolCallbacks();
        assertThat(callbacks).hasSize(1);
        return callbacks[0].call("{}", new ToolContext(Map.of(ChatMemory.CONVERSATION_ID, conversation)));
    }

    @Test
    void withABackendBeanTheKindsAreToolCallbacksOnARouterWithAPurger() {
        runner.withUserConfiguration(ContainerBackend.class, WhoamiKind.class).withPropertyValues(FLOOR_CONTAINER)
                .run(context -> {
                    assertThat(context).hasNotFailed()
                            .hasSingleBean(SandboxRouter.class)
                            .hasSingleBean(SandboxPurger.class)
                            .hasSingleBean(ToolCallbackProvider.class)
                            .hasSingleBean(SandboxToolCallbackProvider.class);
                    assertThat(context.getBean(SandboxToolCallbackProvider.class).toolNames())
                            .containsExactly(Whoami.NAME);
                    assertThat(context.getBean(SandboxRouter.class).floor()).isEqualTo(Isolation.CONTAINER);
                    assertThat(callAs(context, "c-1")).isEqualTo(SandboxAutoConfiguration.DEFAULT_SCOPE + "|c-1|"
                            + SandboxAutoConfiguration.DEFAULT_AGENT_DIR);
                });
    }

    @Test
    void withoutABackendThereIsNoBeanAtAllSoNoToolIsAttached() {
        runner.withUserConfiguration(WhoamiKind.class, Memory.class).withPropertyValues(FLOOR_CONTAINER)
                .run(context -> {
                    assertThat(context).hasNotFailed()
                            .doesNotHaveBean(SandboxRouter.class)
                            .doesNotHaveBean(SandboxPurger.class)
                            .doesNotHaveBean(ToolCallbackProvider.class)
                            .doesNotHaveBean(ToolCallback.class)
                            .doesNotHaveBean(SandboxProperties.class);
                    assertThat(context.getBean(ChatMemory.class)).isNotInstanceOf(PurgingChatMemory.class);
                    assertThat(context.getBean("handedToKinds", List.class).isEmpty()).as("no kind was asked for a tool")
                            .isTrue();
                });
    }

    @Test
    void withABackendButNoKindThereIsARouterAndNoToolCallbacks() {
        runner.withUserConfiguration(ContainerBackend.class).withPropertyValues(FLOOR_CONTAINER).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(SandboxRouter.class)
                    .doesNotHaveBean(ToolCallbackProvider.class);
        });
    }

    @Test
    void aBackendBelowTheFloorFailsStartUp() {
        // The floor defaults to microvm; the backend is a container.
        runner.withUserConfiguration(ContainerBackend.class, WhoamiKind.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().isInstanceOf(SandboxBackendNotPermitted.class);
        });
        runner.withUserConfiguration(ContainerBackend.class, WhoamiKind.class)
                .withPropertyValues("sandbox4j.floor=hardened_container").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause()
                            .isInstanceOf(SandboxBackendNotPermitted.class);
                });
    }

    @Test
    void aKindTheRouterCannotServeFailsStartUp() {
        runner.withUserConfiguration(ContainerBackend.class, WhoamiKind.class)
                .withPropertyValues(FLOOR_CONTAINER, "sandbox4j.deny-capabilities=exec").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(SandboxCapabilityDenied.class);
                });
    }

    @Test
    void deployedForbidsAFloorBelowMicrovmAndAnUnknownFloorIsRefused() {
        runner.withUserConfiguration(ContainerBackend.class, WhoamiKind.class)
                .withPropertyValues(FLOOR_CONTAINER, "sandbox4j.deployed=true").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(SandboxFloorNotPermitted.class);
                });
        runner.withUserConfiguration(ContainerBackend.class, WhoamiKind.class)
                .withPropertyValues("sandbox4j.floor=process").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(IllegalArgumentException.class);
                });
    }

    @Test
    void theScopeIsTheApplicationsNameUnlessConfiguredAndTheAgentDirIsConfigurable() {
        runner.withUserConfiguration(ContainerBackend.class, WhoamiKind.class)
                .withPropertyValues(FLOOR_CONTAINER, "spring.application.name=shop").run(context ->
                        assertThat(callAs(context, "c-1")).isEqualTo("shop|c-1|spring-ai"));
        runner.withUserConfiguration(ContainerBackend.class, WhoamiKind.class)
                .withPropertyValues(FLOOR_CONTAINER, "spring.application.name=shop", "sandbox4j.scope=tenant-a",
                        "sandbox4j.agent-dir=helper")
                .run(context -> assertThat(callAs(context, "c-1")).isEqualTo("tenant-a|c-1|helper"));
    }

    @Test
    void theConversationIdKeyIsConfigurable() {
        runner.withUserConfiguration(ContainerBackend.class, WhoamiKind.class)
                .withPropertyValues(FLOOR_CONTAINER, "sandbox4j.conversation-id-key=sessionId").run(context -> {
                    ToolCallback callback = context.getBean(ToolCallbackProvider.class).getToolCallbacks()[0];
                    assertThat(callback.call("{}", new ToolContext(Map.of("sessionId", "s-1"))))
                            .isEqualTo("application|s-1|spring-ai");
                    assertThat(callAs(context, "c-1")).isEqualTo(SandboxToolCallback.NO_CONVERSATION);
                });
    }

    @Test
    void backendsNamesWhichBackendBeansServeAndInWhatOrder() {
        runner.withUserConfiguration(TwoBackends.class, WhoamiKind.class).withPropertyValues(FLOOR_CONTAINER)
                .run(context -> assertThat(context.getBean(SandboxRouter.class).backends())
                        .extracting(SandboxBackend::name).containsExactly("first", "second"));
        runner.withUserConfiguration(TwoBackends.class, WhoamiKind.class)
                .withPropertyValues(FLOOR_CONTAINER, "sandbox4j.backends=second").run(context -> {
                    assertThat(context.getBean(SandboxRouter.class).backends()).extracting(SandboxBackend::name)
                            .containsExactly("second");
                    callAs(context, "c-1");
                    assertThat(context.getBean("second", InMemoryBackend.class).keys()).hasSize(1);
                    assertThat(context.getBean("first", InMemoryBackend.class).keys()).isEmpty();
                });
        runner.withUserConfiguration(TwoBackends.class, WhoamiKind.class)
                .withPropertyValues(FLOOR_CONTAINER, "sandbox4j.backends=second,third").run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().isInstanceOf(IllegalStateException.class)
                            .hasMessageContaining("'third'").hasMessageContaining("first").hasMessageContaining("second");
                });
        runner.withUserConfiguration(TwoBackends.class, WhoamiKind.class)
                .withPropertyValues(FLOOR_CONTAINER, "sandbox4j.select=second").run(context -> {
                    callAs(context, "c-1");
                    assertThat(context.getBean("second", InMemoryBackend.class).keys()).hasSize(1);
                    assertThat(context.getBean("first", InMemoryBackend.class).keys()).isEmpty();
                });
    }

    @Test
    @SuppressWarnings("unchecked")
    void theEgressAllowlistAndTheLandingDirectoryReachTheKinds(@TempDir Path landing) {
        runner.withUserConfiguration(ContainerBackend.class, WhoamiKind.class)
                .withPropertyValues(FLOOR_CONTAINER, "sandbox4j.egress-allow=pypi.org:443,files.pythonhosted.org:443",
                        "sandbox4j.landing-dir=" + landing.resolve("out"))
                .run(context -> {
                    List<SandboxKindContext> handed = context.getBean("handedToKinds", List.class);
                    assertThat(handed).hasSize(1);
                    assertThat(handed.get(0).egressAllow()).containsExactly("pypi.org:443",
                            "files.pythonhosted.org:443");
                    assertThat(handed.get(0).outputSink()).isPresent();
                    assertThat(handed.get(0).router()).isSameAs(context.getBean(SandboxRouter.class));
                    assertThat(landing.resolve("out")).isDirectory();
                });
        runner.withUserConfiguration(ContainerBackend.class, WhoamiKind.class).withPropertyValues(FLOOR_CONTAINER)
                .run(context -> {
                    SandboxKindContext handed = ((List<SandboxKindContext>) context.getBean("handedToKinds",
                            List.class)).get(0);
                    assertThat(handed.egressAllow()).as("no network unless configured").isEmpty();
                    assertThat(handed.outputSink()).isEmpty();
                });
    }

    @Test
    void clearingAConversationInTheChatMemoryBeanPurgesItsSandboxes() {
        runner.withUserConfiguration(ContainerBackend.class, WhoamiKind.class, Memory.class)
                .withPropertyValues(FLOOR_CONTAINER, "sandbox4j.scope=tenant-a").run(context -> {
                    ChatMemory memory = context.getBean(ChatMemory.class);
                    assertThat(memory).isInstanceOf(PurgingChatMemory.class);
                    callAs(context, "c-1");

                    memory.clear("c-1");

                    assertThat(context.getBean(InMemoryBackend.class).purged())
                            .containsExactly(new Purge("tenant-a", "c-1"));
                });
        runner.withUserConfiguration(ContainerBackend.class, WhoamiKind.class, Memory.class)
                .withPropertyValues(FLOOR_CONTAINER, "sandbox4j.purge-on-chat-memory-clear=false").run(context ->
                        assertThat(context.getBean(ChatMemory.class)).isNotInstanceOf(PurgingChatMemory.class));
    }

    @Test
    void disabledConfiguresNothing() {
        runner.withUserConfiguration(ContainerBackend.class, WhoamiKind.class)
                .withPropertyValues(FLOOR_CONTAINER, "sandbox4j.enabled=false").run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(SandboxRouter.class)
                            .doesNotHaveBean(ToolCallbackProvider.class);
                });
    }

    @Test
    void theApplicationsOwnRouterIsUsedAsItIs() {
        runner.withUserConfiguration(OwnRouter.class, WhoamiKind.class).run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(SandboxRouter.class).hasSingleBean(SandboxPurger.class);
            assertThat(context.getBean(SandboxRouter.class).floor()).isEqualTo(Isolation.MICROVM);
            assertThat(context.getBean(SandboxToolCallbackProvider.class).toolNames()).containsExactly(Whoami.NAME);
        });
    }

    private static final String STATE_ROOT = "test.bubblewrap.state-root";

    /** A whole application: a bubblewrap backend bean and execute_code, through ChatClient. */
    @Configuration(proxyBeanMethods = false)
    static class BubblewrapApplication {
        @Bean
        BubblewrapBackend bubblewrap(Environment environment) {
            return BubblewrapBackend.builder().stateRoot(Path.of(environment.getRequiredProperty(STATE_ROOT)))
                    .build();
        }

        @Bean
        SandboxKind executeCode() {
            return kind -> CodeAct.builder(kind.router(), kind.agentDir(), kind.caller())
                    .egressAllow(kind.egressAllow())
                    .build();
        }
    }

    @Test
    void anApplicationWithABubblewrapBackendBeanRunsExecuteCodeThroughChatClient(@TempDir Path stateRoot) {
        runner.withUserConfiguration(BubblewrapApplication.class)
                .withPropertyValues(FLOOR_CONTAINER, STATE_ROOT + "=" + stateRoot).run(context -> {
            assertThat(context).hasNotFailed();
            ChatClient chat = ChatClient.builder(new ScriptedChatModel(CodeAct.TOOL_NAME))
                    .defaultTools(context.getBean(ToolCallbackProvider.class))
                    .build();

            String answer = chat.prompt().user("print(sum(range(10)))")
                    .toolContext(Map.of(ChatMemory.CONVERSATION_ID, "c-1")).call().content();

            assertThat(answer).isEqualTo(ScriptedChatModel.ANSWER_PREFIX + "stdout:\n45");
            context.getBean(SandboxPurger.class).purgeScopedThread(SandboxAutoConfiguration.DEFAULT_SCOPE, "c-1");
        });
    }
}
