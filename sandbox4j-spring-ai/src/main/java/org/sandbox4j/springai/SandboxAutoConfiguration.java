package org.sandbox4j.springai;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

import org.sandbox4j.core.FileListing;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxPurger;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.outputs.FileSystemSink;
import org.sandbox4j.core.outputs.OutputSink;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.env.Environment;

/**
 * Spring Boot auto-configuration: sandbox4j kinds as Spring AI tool callbacks.
 *
 * <p>With at least one {@link SandboxBackend} bean (or the application's own
 * {@link SandboxRouter}): a {@code SandboxRouter} over those backends with the
 * {@code sandbox4j.*} policy, a {@link SandboxPurger}, every {@code ChatMemory} bean wrapped so
 * that clearing a conversation purges its sandboxes, and, when the application defines
 * {@link SandboxKind} beans, one {@link SandboxToolCallbackProvider} offering them. Without a
 * backend: no bean at all, so no tool is attached. A backend below the floor, or a kind the router
 * cannot serve, fails application start-up.
 */
@AutoConfiguration
@ConditionalOnProperty(prefix = SandboxProperties.PREFIX, name = "enabled", havingValue = "true", matchIfMissing = true)
@Conditional(SandboxAutoConfiguration.OnBackendOrRouter.class)
@EnableConfigurationProperties(SandboxProperties.class)
public class SandboxAutoConfiguration {

    /** The scope of every key when neither {@code sandbox4j.scope} nor {@code spring.application.name} is set. */
    public static final String DEFAULT_SCOPE = "application";

    /** The agent directory of every key unless {@code sandbox4j.agent-dir} says otherwise. */
    public static final String DEFAULT_AGENT_DIR = "spring-ai";

    private static final String APPLICATION_NAME = "spring.application.name";

    /** The router over the application's backend beans, under the configured policy. */
    @Bean
    @ConditionalOnMissingBean
    public SandboxRouter sandboxRouter(ObjectProvider<SandboxBackend> backends, SandboxProperties properties) {
        SandboxRouter.Builder router = SandboxRouter.builder()
                .backends(serving(backends.orderedStream().toList(), properties.backends()))
                .deployed(properties.deployed())
                .denyCapabilities(properties.denyCapabilities())
                .denyIdentities(properties.denyIdentities());
        properties.floorValue().ifPresent(router::minIsolation);
        Optional.ofNullable(properties.select()).filter(name -> !name.isBlank()).ifPresent(router::select);
        return router.build();
    }

    /** What the application's conversation-delete path calls. */
    @Bean
    @ConditionalOnMissingBean
    public SandboxPurger sandboxPurger(SandboxRouter router) {
        return new SandboxPurger(router);
    }

    /** The kinds the application defined, as Spring AI tool callbacks. */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(SandboxKind.class)
    public SandboxToolCallbackProvider sandboxToolCallbacks(SandboxRouter router, ObjectProvider<SandboxKind> kinds,
            ObjectProvider<ToolCallApproval> approval, ObjectProvider<FileListing> fileListing,
            SandboxProperties properties, Environment environment) {
        List<SandboxKind> all = kinds.orderedStream().toList();
        Optional<OutputSink> sink = Optional.ofNullable(properties.landingDir()).map(FileSystemSink::at);
        return SandboxToolCallbackProvider.builder()
                .scope(scope(properties, environment))
                .conversationIdKey(properties.conversationIdKey())
                .fileListing(fileListing.getIfAvailable(() -> FileListing.ALL))
                .approval(approval.getIfAvailable())
                .tools(caller -> {
                    SandboxKindContext context = new SandboxKindContext(router, caller, properties.agentDir(),
                            properties.egressAllow(), sink);
                    return all.stream().map(kind -> kind.create(context)).toList();
                })
                .build();
    }

    /** Wraps every {@code ChatMemory} bean in a {@link PurgingChatMemory}. */
    @Bean
    @ConditionalOnProperty(prefix = SandboxProperties.PREFIX, name = "purge-on-chat-memory-clear", havingValue = "true",
            matchIfMissing = true)
    public static BeanPostProcessor sandboxChatMemoryPurging(ObjectProvider<SandboxPurger> purger,
            ObjectProvider<SandboxProperties> properties, Environment environment) {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessAfterInitialization(Object bean, String beanName) {
                if (!(bean instanceof ChatMemory memory) || bean instanceof PurgingChatMemory) {
                    return bean;
                }
                // Resolved at the first clear, not now: a post-processor must not pull the router
                // (and the backends) into existence while the context is still being built.
                return new PurgingChatMemory(memory, conversationId -> purger.getObject()
                        .purgeScopedThread(scope(properties.getObject(), environment), conversationId));
            }
        };
    }

    /** The scope of every key: {@code sandbox4j.scope}, else the application's name, else {@link #DEFAULT_SCOPE}. */
    static String scope(SandboxProperties properties, Environment environment) {
        if (properties.scope() != null && !properties.scope().isBlank()) {
            return properties.scope();
        }
        String name = environment.getProperty(APPLICATION_NAME);
        return name == null || name.isBlank() ? DEFAULT_SCOPE : name;
    }

    /**
     * The backends that serve: every bean, or those {@code sandbox4j.backends} names, in its order.
     *
     * @throws IllegalStateException a configured name no backend bean answers to
     */
    static List<SandboxBackend> serving(List<SandboxBackend> beans, List<String> names) {
        if (names.isEmpty()) {
            return beans;
        }
        Map<String, SandboxBackend> byName = beans.stream()
                .collect(Collectors.toMap(SandboxBackend::name, Function.identity(), (first, second) -> first));
        List<SandboxBackend> chosen = new ArrayList<>();
        for (String name : names) {
            SandboxBackend backend = byName.get(name);
            if (backend == null) {
                throw new IllegalStateException(SandboxProperties.PREFIX + ".backends names '" + name
                        + "', but no SandboxBackend bean is named so; the backend beans are " + byName.keySet()
                        + " (define a bean for it, or remove the name)");
            }
            chosen.add(backend);
        }
        return chosen;
    }

    /** A backend bean, or the application's own router: either means sandboxes are configured. */
    static final class OnBackendOrRouter extends AnyNestedCondition {

        OnBackendOrRouter() {
            super(ConfigurationPhase.REGISTER_BEAN);
        }

        @ConditionalOnBean(SandboxBackend.class)
        static final class Backend {
        }

        @ConditionalOnBean(SandboxRouter.class)
        static final class Router {
        }
    }
}
