package org.sandbox4j.langchain4j;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.langchain4j.service.tool.ToolProvider;
import dev.langchain4j.service.tool.ToolProviderRequest;
import dev.langchain4j.service.tool.ToolProviderResult;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.tool.AdapterBuilder;
import org.sandbox4j.core.tool.SandboxTool;

/**
 * sandbox4j kinds as LangChain4j tools. The conversation key of every call is
 * {@code (scope, memory id, agent dir)}: the memory id comes from the AI service invocation of the
 * call in progress ({@code @MemoryId}), never from the tool's arguments, so two conversations
 * never share a sandbox. A call without a memory id (LangChain4j passes {@code "default"} when the
 * AI service method has no {@code @MemoryId}) is refused with a fixed sentence.
 *
 * <pre>{@code
 * SandboxToolProvider sandbox = SandboxToolProvider.builder()
 *         .scope("my-app")
 *         .tools(context -> List.of(CodeAct.builder(router, "agent", context).build()))
 *         .build();
 * Assistant assistant = AiServices.builder(Assistant.class)
 *         .chatModel(model)
 *         .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(20))
 *         .toolProvider(sandbox)
 *         .build();
 * }</pre>
 *
 * <p>The tool factory is called once, at {@link Builder#build()}, with the {@link CallerContext}
 * the provider answers per call; a kind that cannot be served fails there, and one with no backend
 * (an empty {@code Optional}) is left out, so with no backend configured the provider offers no
 * tools. Immutable and thread-safe; tools may run concurrently.
 */
public final class SandboxToolProvider implements ToolProvider {

    /** The {@link ToolSpecification#metadata()} key saying a person must approve each call. */
    public static final String REQUIRES_APPROVAL_METADATA = "org.sandbox4j/requiresApproval";

    private static final String FRAMEWORK = "LangChain4j";

    private final String scope;
    private final Map<ToolSpecification, ToolExecutor> tools;
    private final ToolProviderResult result;

    private SandboxToolProvider(String scope, Map<ToolSpecification, ToolExecutor> tools) {
        this.scope = scope;
        this.tools = tools;
        this.result = ToolProviderResult.builder().addAll(tools).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The same tools for every invocation; each call reads its conversation from its own invocation. */
    @Override
    public ToolProviderResult provideTools(ToolProviderRequest request) {
        return result;
    }

    /**
     * The specification and executor of each tool, in the factory's order, for
     * {@code AiServices.tools(Map)} or a hand-written tool loop; empty when none was configured.
     */
    public Map<ToolSpecification, ToolExecutor> tools() {
        return tools;
    }

    /** The names of the tools offered, in the factory's order. */
    public List<String> toolNames() {
        return tools.keySet().stream().map(ToolSpecification::name).toList();
    }

    /** The scope of every key this provider forms. */
    public String scope() {
        return scope;
    }

    @Override
    public String toString() {
        return "SandboxToolProvider[scope=" + scope + ", tools=" + toolNames() + "]";
    }

    /** The LangChain4j specification of {@code tool}: name, description and parameters as the kind states them. */
    static ToolSpecification specification(SandboxTool tool) {
        return ToolSpecification.builder()
                .name(tool.name())
                .description(tool.description())
                .parameters(JsonSchemas.parameters(tool.name(), tool.parametersSchema()))
                .addMetadata(REQUIRES_APPROVAL_METADATA, tool.requiresApproval())
                .build();
    }

    /** Single-use builder: core's {@link AdapterBuilder} settings, with LangChain4j's {@link ToolApproval}. */
    public static final class Builder extends AdapterBuilder<Builder, ToolApproval> {

        private Builder() {
            super(FRAMEWORK);
        }

        /**
         * Calls the tool factory and builds the provider.
         *
         * @throws IllegalArgumentException a blank scope; two tools with one name; a tool whose
         *                                  schema LangChain4j cannot carry faithfully; a tool that
         *                                  requires approval with no {@link #approval} given
         * @throws org.sandbox4j.core.SandboxException from the factory: a kind the router cannot serve (a
         *                                        policy or an unsupported-capability refusal)
         */
        public SandboxToolProvider build() {
            Assembled assembled = assemble("give SandboxToolProvider.builder().approval(...) that asks",
                    SandboxToolExecutor.LOG);
            Map<ToolSpecification, ToolExecutor> tools = new LinkedHashMap<>();
            for (SandboxTool tool : assembled.tools()) {
                tools.put(specification(tool), new SandboxToolExecutor(tool, assembled.calls(), givenApproval()));
            }
            return new SandboxToolProvider(givenScope(), Collections.unmodifiableMap(tools));
        }
    }
}
