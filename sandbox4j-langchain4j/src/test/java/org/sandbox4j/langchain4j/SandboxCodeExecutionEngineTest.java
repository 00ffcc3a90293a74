package org.sandbox4j.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Optional;

import dev.langchain4j.code.CodeExecutionEngine;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.sandbox4j.codeact.CodeAct;
import org.sandbox4j.codeact.Language;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.SandboxCapabilityNotSupported;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.tool.SandboxedTool;
import org.sandbox4j.core.tool.ToolResult;
import org.sandbox4j.testkit.InMemoryBackend;

/** The CodeExecutionEngine runs code in a real bubblewrap sandbox under the key fixed at construction. */
class SandboxCodeExecutionEngineTest {

    private static BubblewrapFixture fixture;

    @BeforeAll
    static void start() {
        fixture = new BubblewrapFixture();
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    private static SandboxCodeExecutionEngine.Builder engine(SandboxRouter router, String thread) {
        return SandboxCodeExecutionEngine.builder().scope(BubblewrapFixture.SCOPE).thread(thread)
                .tool(context -> CodeAct.builder(router, BubblewrapFixture.AGENT, context).build());
    }

    @Test
    void theEngineRunsCodeInASandbox() {
        CodeExecutionEngine engine = engine(fixture.router, "engine-1").build().orElseThrow();

        assertThat(engine.execute("print(sum(range(10)))")).isEqualTo("stdout:\n45");
        assertThat(engine.execute("import os\nprint(os.getuid() != 0, open('/proc/1/comm').read().strip() != 'systemd')"))
                .as("not the host's root, in its own PID namespace").isEqualTo("stdout:\nTrue True");
        assertThat(engine.execute("import sys\nsys.exit(3)")).isEqualTo("exit code: 3");
        assertThat(fixture.sandboxesOf("engine-1")).as("the key's thread is the one given").hasSize(1);
    }

    @Test
    void oneEngineIsOneConversationAndAnotherThreadAnother() {
        CodeExecutionEngine first = engine(fixture.router, "engine-a").build().orElseThrow();
        CodeExecutionEngine second = engine(fixture.router, "engine-b").build().orElseThrow();
        String read = "import os\nprint(open('../kept').read() if os.path.exists('../kept') else 'absent')";

        first.execute("open('../kept', 'w').write('from the first call')");

        assertThat(first.execute(read)).isEqualTo("stdout:\nfrom the first call");
        assertThat(second.execute(read)).isEqualTo("stdout:\nabsent");
    }

    @Test
    void aChosenLanguageIsAskedFor() {
        CodeExecutionEngine bash = SandboxCodeExecutionEngine.builder().scope(BubblewrapFixture.SCOPE)
                .thread("engine-bash").language("bash")
                .tool(context -> CodeAct.builder(fixture.router, BubblewrapFixture.AGENT, context)
                        .languages(Language.PYTHON, Language.BASH).build())
                .build().orElseThrow();

        assertThat(bash.execute("echo $((6 * 7))")).isEqualTo("stdout:\n42");
    }

    @Test
    void noBackendMeansNoEngine() {
        assertThat(engine(SandboxRouter.builder().build(), "t").build()).isEmpty();
    }

    @Test
    void aBackendThatCannotServeTheSpecFailsConstruction() {
        InMemoryBackend execOnly = InMemoryBackend.builder().isolation(Isolation.CONTAINER)
                .capabilities(Capability.EXEC).build();
        SandboxRouter weak = SandboxRouter.builder().backend(execOnly).minIsolation(Isolation.CONTAINER).build();

        assertThatThrownBy(() -> engine(weak, "t").build()).isInstanceOf(SandboxCapabilityNotSupported.class);
    }

    @Test
    void aToolTheEngineCannotDriveFailsConstruction() {
        InMemoryBackend backend = InMemoryBackend.builder().isolation(Isolation.CONTAINER).build();
        SandboxRouter router = SandboxRouter.builder().backend(backend).minIsolation(Isolation.CONTAINER).build();

        assertThatThrownBy(() -> builderFor(router, "{\"type\":\"object\",\"properties\":{\"query\":{\"type\":\"string\"}}}",
                false).build()).hasMessageContaining("no string parameter 'code'");
        assertThatThrownBy(() -> builderFor(router, "{\"type\":\"object\",\"properties\":{\"code\":{\"type\":\"string\"},"
                + "\"stdin\":{\"type\":\"string\"}},\"required\":[\"code\",\"stdin\"]}", false).build())
                .hasMessageContaining("'stdin'");
        assertThatThrownBy(() -> builderFor(router, "{\"type\":\"object\",\"properties\":{\"code\":{\"type\":\"string\"}}}",
                true).build()).hasMessageContaining("approval");
        assertThatThrownBy(() -> builderFor(router, "{\"type\":\"object\",\"properties\":{\"code\":{\"type\":\"string\"}}}",
                false).language("bash").build()).hasMessageContaining("one language only");
        assertThatThrownBy(() -> engine(fixture.router, "t").language("ruby").build())
                .hasMessageContaining("one language only");
        assertThatThrownBy(() -> SandboxCodeExecutionEngine.builder().scope("s").thread("t").language("ruby")
                .tool(context -> CodeAct.builder(fixture.router, "agent", context)
                        .languages(Language.PYTHON, Language.BASH).build()).build())
                .hasMessageContaining("does not offer ruby");
        assertThatThrownBy(() -> SandboxCodeExecutionEngine.builder().scope("s")
                .tool(context -> Optional.empty()).build()).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("thread");
    }

    private static SandboxCodeExecutionEngine.Builder builderFor(SandboxRouter router, String schema,
            boolean approval) {
        return SandboxCodeExecutionEngine.builder().scope("s").thread("t")
                .tool(context -> SandboxedTool.builder("other", SandboxSpec.builder("other").build())
                        .router(router).context(context).agentDir("agent").description("Not execute_code.")
                        .parametersSchema(schema).requiresApproval(approval)
                        .body((call, arguments) -> ToolResult.ok("ran"))
                        .build());
    }
}
