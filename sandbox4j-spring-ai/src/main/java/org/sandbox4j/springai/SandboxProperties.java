package org.sandbox4j.springai;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code sandbox4j.*} properties of the auto-configuration. Backends are not properties: the
 * application defines its {@link org.sandbox4j.core.SandboxBackend} beans (this module depends on
 * no backend), and these say which of them serve and under what policy.
 *
 * @param enabled                 {@code false}: configure nothing at all
 * @param scope                   the scope of every key; default {@code spring.application.name},
 *                                else {@link SandboxAutoConfiguration#DEFAULT_SCOPE}
 * @param agentDir                the agent directory of every key
 * @param backends                the names ({@code SandboxBackend.name()}) of the backend beans to
 *                                register, in the order they are tried; empty: every backend bean,
 *                                in bean order
 * @param select                  serve every spec from the backend of this name only (the router's
 *                                {@code select})
 * @param floor                   the minimum isolation, as its wire value ({@code container},
 *                                {@code microvm}, ...); default the router's, {@code microvm}
 * @param deployed                a deployed environment: the floor can never be below
 *                                {@code microvm}
 * @param denyCapabilities        capabilities (wire values) no spec may require on this host
 * @param denyIdentities          host-tool identities (wire values) no spec may carry
 * @param egressAllow             hosts a kind may let its guest reach; empty: no network at all
 * @param landingDir              where kinds land the files they hand back; none: no landing sink
 * @param conversationIdKey       the Spring AI tool-context key holding the conversation id
 * @param purgeOnChatMemoryClear  wrap every {@code ChatMemory} bean so that clearing a
 *                                conversation also disposes of its sandboxes
 */
@ConfigurationProperties(prefix = SandboxProperties.PREFIX)
public record SandboxProperties(
        @DefaultValue("true") boolean enabled,
        String scope,
        @DefaultValue(SandboxAutoConfiguration.DEFAULT_AGENT_DIR) String agentDir,
        @DefaultValue List<String> backends,
        String select,
        String floor,
        @DefaultValue("false") boolean deployed,
        @DefaultValue List<String> denyCapabilities,
        @DefaultValue List<String> denyIdentities,
        @DefaultValue List<String> egressAllow,
        Path landingDir,
        @DefaultValue(SandboxToolCallbackProvider.DEFAULT_CONVERSATION_ID_KEY) String conversationIdKey,
        @DefaultValue("true") boolean purgeOnChatMemoryClear) {

    /** The prefix of every property. */
    public static final String PREFIX = "sandbox4j";

    public SandboxProperties {
        backends = backends == null ? List.of() : List.copyOf(backends);
        denyCapabilities = denyCapabilities == null ? List.of() : List.copyOf(denyCapabilities);
        denyIdentities = denyIdentities == null ? List.of() : List.copyOf(denyIdentities);
        egressAllow = egressAllow == null ? List.of() : List.copyOf(egressAllow);
    }

    /** The floor, when one is configured. */
    public Optional<String> floorValue() {
        return Optional.ofNullable(floor).filter(value -> !value.isBlank());
    }
}
