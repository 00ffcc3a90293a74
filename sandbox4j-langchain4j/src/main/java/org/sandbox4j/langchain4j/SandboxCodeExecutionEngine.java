package org.sandbox4j.langchain4j;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Function;

import dev.langchain4j.code.CodeExecutionEngine;

import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.FileListing;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.tool.SandboxTool;

/**
 * LangChain4j's {@link CodeExecutionEngine} over an {@code execute_code}-shaped tool (a string
 * parameter {@code code}): existing code that runs a model's programs through an engine moves
 * them into a sandbox by changing the line that creates the engine.
 *
 * <pre>{@code
 * CodeExecutionEngine engine = SandboxCodeExecutionEngine.builder()
 *         .scope("my-app").thread("conversation-42")
 *         .tool(context -> CodeAct.builder(router, "agent", context).build())
 *         .build().orElseThrow();                // empty only when no backend is configured
 * engine.execute("print(sum(range(10)))");      // "stdout:\n45"
 * }</pre>
 *
 * <p>{@code CodeExecutionEngine.execute(String)} carries no conversation, so the key is fixed when
 * the engine is built: {@code (scope, thread, agent dir)}. Every call of one engine runs in the same
 * sandbox (files a program leaves beside its call directory are there for the next one); build one
 * engine per conversation to keep conversations apart. Immutable and thread-safe.
 */
public final class SandboxCodeExecutionEngine implements CodeExecutionEngine {

    /** The parameter the program goes in. */
    public static final String CODE_PARAMETER = "code";

    /** The parameter naming the program's language, when the host chose one. */
    public static final String LANGUAGE_PARAMETER = "language";

    private final SandboxTool tool;
    private final String scope;
    private final String thread;
    private final Optional<String> language;

    private SandboxCodeExecutionEngine(SandboxTool tool, String scope, String thread, Optional<String> language) {
        this.tool = tool;
        this.scope = scope;
        this.thread = thread;
        this.language = language;
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Runs {@code code} in the engine's sandbox.
     *
     * @return the tool's report, as a model would read it: {@code stdout:} and {@code stderr:}
     *         sections and {@code exit code: N} when not 0; a refusal or a provider failure comes
     *         back as its fixed {@code Error:} sentence (the detail is in the host's log), never thrown
     * @throws org.sandbox4j.core.SandboxInterrupted the calling thread was interrupted
     */
    @Override
    public String execute(String code) {
        Objects.requireNonNull(code, "code");
        Map<String, Object> arguments = new LinkedHashMap<>();
        arguments.put(CODE_PARAMETER, code);
        language.ifPresent(name -> arguments.put(LANGUAGE_PARAMETER, name));
        return tool.call(arguments).text();
    }

    /** The tool the engine calls. */
    public String toolName() {
        return tool.name();
    }

    /** The scope of the engine's key. */
    public String scope() {
        return scope;
    }

    /** The thread of the engine's key: the one conversation every call belongs to. */
    public String thread() {
        return thread;
    }

    @Override
    public String toString() {
        return "SandboxCodeExecutionEngine[" + tool.name() + ", scope=" + scope + ", thread=" + thread + "]";
    }

    /** Single-use builder. */
    public static final class Builder {
        private String scope;
        private String thread;
        private String language;
        private Function<? super CallerContext, Optional<SandboxTool>> toolFactory;

        private Builder() {
        }

        /** The scope (tenant, user, application) of the key. */
        public Builder scope(String scope) {
            this.scope = scope;
            return this;
        }

        /** The conversation of every call: the key's thread. */
        public Builder thread(String thread) {
            this.thread = thread;
            return this;
        }

        /** The language of every program (default: the tool's own default); the tool must offer the choice. */
        public Builder language(String language) {
            this.language = language;
            return this;
        }

        /** Builds the tool for the engine's fixed context, e.g. {@code context -> CodeAct.builder(router, "agent", context).build()}. */
        public Builder tool(Function<? super CallerContext, Optional<SandboxTool>> factory) {
            this.toolFactory = factory;
            return this;
        }

        /**
         * Calls the tool factory and builds the engine.
         *
         * @return empty when the factory built no tool (no backend is configured)
         * @throws IllegalArgumentException a blank scope or thread; a tool without a string
         *                                  {@code code} parameter, with another required parameter,
         *                                  without a {@code language} parameter when one was given,
         *                                  or requiring a person's approval of each call
         * @throws org.sandbox4j.core.SandboxException from the factory: the router cannot serve the tool (a
         *                                        policy or an unsupported-capability refusal)
         */
        public Optional<SandboxCodeExecutionEngine> build() {
            Objects.requireNonNull(scope, "scope");
            Objects.requireNonNull(thread, "thread: CodeExecutionEngine.execute carries no conversation, so the "
                    + "engine is built for one");
            Objects.requireNonNull(toolFactory, "tool");
            if (scope.isBlank() || thread.isBlank()) {
                throw new IllegalArgumentException("the scope and the thread cannot be blank");
            }
            if (language != null && language.isBlank()) {
                throw new IllegalArgumentException("a language cannot be blank; give none for the tool's default");
            }
            String fixedScope = scope;
            String fixedThread = thread;
            CallerContext context = CallerContext.of(() -> fixedScope, () -> fixedThread,
                    FileListing.NONE); // an engine call names no files
            Optional<SandboxTool> built = Objects.requireNonNull(toolFactory.apply(context),
                    "the tool factory returned null; return Optional.empty() for no tool");
            if (built.isEmpty()) {
                return Optional.empty();
            }
            SandboxTool tool = built.get();
            checkShape(tool);
            return Optional.of(new SandboxCodeExecutionEngine(tool, scope, thread, Optional.ofNullable(language)));
        }

        private void checkShape(SandboxTool tool) {
            if (tool.requiresApproval()) {
                throw new IllegalArgumentException(tool.name() + " requires a person's approval of each call, "
                        + "which an engine cannot ask for; offer it through SandboxToolProvider with an approval");
            }
            Map<String, Object> schema = Json.parseObject(tool.parametersSchema());
            Map<?, ?> properties = schema.get("properties") instanceof Map<?, ?> map ? map : Map.of();
            if (!(properties.get(CODE_PARAMETER) instanceof Map<?, ?> code) || !"string".equals(code.get("type"))) {
                throw new IllegalArgumentException(tool.name() + " has no string parameter '" + CODE_PARAMETER
                        + "'; a CodeExecutionEngine runs execute_code-shaped tools");
            }
            List<?> required = schema.get("required") instanceof List<?> list ? list : List.of();
            for (Object name : required) {
                if (!CODE_PARAMETER.equals(name)) {
                    throw new IllegalArgumentException(tool.name() + " requires the parameter '" + name
                            + "', which CodeExecutionEngine.execute(code) cannot give");
                }
            }
            if (language != null && !properties.containsKey(LANGUAGE_PARAMETER)) {
                throw new IllegalArgumentException(tool.name() + " offers one language only (it has no '"
                        + LANGUAGE_PARAMETER + "' parameter), so the engine cannot ask for " + language
                        + "; offer more languages when building the tool, or give none");
            }
            if (language != null && properties.get(LANGUAGE_PARAMETER) instanceof Map<?, ?> offered
                    && offered.get("enum") instanceof List<?> languages && !languages.contains(language)) {
                throw new IllegalArgumentException(tool.name() + " does not offer " + language + "; it offers "
                        + languages);
            }
        }
    }
}
