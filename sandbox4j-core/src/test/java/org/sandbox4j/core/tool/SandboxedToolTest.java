package org.sandbox4j.core.tool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;
import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.DeclaredOutput;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.FileListing;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.NoSandboxBackend;
import org.sandbox4j.core.ReclaimFailure;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackendNotPermitted;
import org.sandbox4j.core.SandboxCapabilityNotSupported;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxOutputSinkRequired;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.fakes.RecordedCommand;
import org.sandbox4j.core.fakes.ScriptedBackend;
import org.sandbox4j.core.fakes.ScriptedSandbox;

class SandboxedToolTest {

    private static final SandboxSpec SPEC = SandboxSpec.builder("probe").build();

    private final AtomicReference<String> thread = new AtomicReference<>("thread-1");
    private final CallerContext context = CallerContext.of(() -> "tenant", thread::get, FileListing.ALL);

    private static SandboxRouter router(ScriptedBackend backend) {
        return SandboxRouter.builder().backend(backend).minIsolation(Isolation.NONE).build();
    }

    private SandboxedTool.Builder tool(SandboxRouter router, ToolBody body) {
        return SandboxedTool.builder("probe_tool", SPEC).router(router).context(context).agentDir("agent")
                .description("probes").body(body);
    }

    /** A body that acquires, writes into its call directory and reports the directory. */
    private static ToolResult writeIntoCallDirectory(ToolCall call, Map<String, Object> arguments) {
        Sandbox sandbox = call.acquire(call.key());
        String directory = call.callDirectory(sandbox);
        sandbox.writeFile(directory + "/note.txt", "x", call.spec().workDirIn(sandbox));
        return ToolResult.ok(directory);
    }

    @Test
    void noRouterOrNoBackendBuildsNoTool() {
        ToolBody never = (call, arguments) -> {
            throw new AssertionError("never called");
        };
        assertThat(tool(null, never).build()).isEmpty();
        assertThat(tool(SandboxRouter.builder().build(), never).build()).isEmpty();
    }

    @Test
    void aRouterThatCannotServeTheSpecFailsConstruction() {
        ScriptedBackend noFilesIn = ScriptedBackend.builder().capabilities(Capability.EXEC).build();
        assertThatThrownBy(() -> tool(router(noFilesIn), SandboxedToolTest::writeIntoCallDirectory).build())
                .isInstanceOf(SandboxCapabilityNotSupported.class);
        ScriptedBackend weak = ScriptedBackend.builder().isolation(Isolation.NONE).build();
        assertThatThrownBy(() -> SandboxRouter.builder().backend(weak).build())
                .isInstanceOf(SandboxBackendNotPermitted.class);
    }

    @Test
    void aSpecThatLandsOutputsNeedsASinkAndFilesOut() {
        ScriptedBackend backend = ScriptedBackend.builder().build();
        SandboxSpec lands = SPEC.toBuilder().declaredOutputs(DeclaredOutput.land("a.txt")).build();
        assertThatThrownBy(() -> SandboxedTool.builder("t", lands).router(router(backend)).context(context)
                .agentDir("a").description("d").body(SandboxedToolTest::writeIntoCallDirectory).build())
                .isInstanceOf(SandboxOutputSinkRequired.class).hasMessageContaining("a.txt");
        SandboxSpec consumes = SPEC.toBuilder().declaredOutputs(DeclaredOutput.consume("a.txt")).build();
        assertThatThrownBy(() -> SandboxedTool.builder("t", consumes).router(router(backend)).context(context)
                .agentDir("a").description("d").body(SandboxedToolTest::writeIntoCallDirectory).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("files_out");
    }

    @Test
    void aMalformedSchemaOrTimeoutFailsConstruction() {
        ScriptedBackend backend = ScriptedBackend.builder().build();
        assertThatThrownBy(() -> tool(router(backend), SandboxedToolTest::writeIntoCallDirectory)
                .parametersSchema("[1]").build()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> tool(router(backend), SandboxedToolTest::writeIntoCallDirectory)
                .reclaimTimeout(Duration.ZERO).build()).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theCallDirectoryIsFreshPerCallAndReclaimedAfterIt() {
        ScriptedBackend backend = ScriptedBackend.builder().build();
        SandboxTool tool = tool(router(backend), SandboxedToolTest::writeIntoCallDirectory).build().orElseThrow();
        String first = tool.call(Map.of()).text();
        String second = tool.call(Map.of()).text();
        assertThat(first).isNotEqualTo(second).startsWith(SPEC.workDir() + "/").matches(".*/[0-9a-f]{12}");
        // The scripted sandbox records commands rather than running them: the removal is what was asked.
        ScriptedSandbox sandbox = backend.sandbox();
        assertThat(sandbox.commands()).extracting(RecordedCommand::shellLine)
                .contains("rm -rf '" + first + "'", "rm -rf '" + second + "'");
    }

    @Test
    void theKeyComesFromTheContextAndAMissingThreadIsRefused() {
        ScriptedBackend backend = ScriptedBackend.builder().build();
        SandboxTool tool = tool(router(backend), SandboxedToolTest::writeIntoCallDirectory).build().orElseThrow();
        tool.call(Map.of("threadId", "someone-else"));
        assertThat(backend.keys()).extracting(k -> k.threadId()).containsExactly("thread-1");
        thread.set(null);
        ToolResult refused = tool.call(Map.of());
        assertThat(refused).isEqualTo(ToolResult.error(
                "Error: no active thread context — probe_tool must be called from within a thread"));
    }

    @Test
    void acquireFailuresBecomeFixedSentences() {
        ScriptedBackend backend = ScriptedBackend.builder().build();
        SandboxTool tool = tool(router(backend), SandboxedToolTest::writeIntoCallDirectory).build().orElseThrow();
        backend.setAcquireError(new IllegalStateException("HTTP 500 from https://secret.internal/token=abc"));
        assertThat(tool.call(Map.of()).text()).isEqualTo(ToolCall.UNAVAILABLE).doesNotContain("secret");
        backend.setAcquireError(new NoSandboxBackend("nothing"));
        assertThat(tool.call(Map.of()).text()).isEqualTo(ToolCall.NO_BACKEND);
        backend.setAcquireError(new IllegalArgumentException("image 'x' is not in the catalogue"));
        assertThat(tool.call(Map.of()).text()).isEqualTo("Error: image 'x' is not in the catalogue");
    }

    @Test
    void anUnexpectedBodyFailureIsAFixedSentenceAndTheDirectoryIsStillReclaimed() {
        ScriptedBackend backend = ScriptedBackend.builder().build();
        AtomicReference<String> directory = new AtomicReference<>();
        SandboxTool tool = tool(router(backend), (call, arguments) -> {
            Sandbox sandbox = call.acquire(call.key());
            directory.set(call.callDirectory(sandbox));
            sandbox.writeFile(directory.get() + "/x", "x", call.spec().workDir());
            throw new IllegalStateException("provider detail /var/secret");
        }).build().orElseThrow();
        ToolResult result = tool.call(Map.of());
        assertThat(result).isEqualTo(ToolResult.error(SandboxedTool.FAILED));
        assertThat(backend.sandbox().commands()).extracting(RecordedCommand::shellLine)
                .containsExactly("rm -rf '" + directory.get() + "'");
    }

    @Test
    void aReclaimFailureIsReportedNeverThrownOverTheResult() {
        ScriptedSandbox refusing = ScriptedSandbox.builder()
                .output("rm -rf", ExecResult.of("", "read-only file system", 1, Duration.ZERO)).build();
        ScriptedBackend backend = ScriptedBackend.builder().sandbox(refusing).build();
        List<ReclaimFailure> failures = new ArrayList<>();
        SandboxTool tool = tool(router(backend), SandboxedToolTest::writeIntoCallDirectory)
                .onReclaimFailure(failures::add).build().orElseThrow();
        ToolResult result = tool.call(Map.of());
        assertThat(result.error()).isFalse();
        assertThat(failures).singleElement().satisfies(failure -> {
            assertThat(failure.tool()).isEqualTo("probe_tool");
            assertThat(failure.path()).isEqualTo(result.text());
            assertThat(failure.reason()).contains("rm exited 1").contains("read-only file system");
        });
    }

    @Test
    void aCancelledCallStillReclaimsAndStaysCancelled() {
        ScriptedBackend backend = ScriptedBackend.builder().build();
        AtomicReference<String> directory = new AtomicReference<>();
        SandboxTool tool = tool(router(backend), (call, arguments) -> {
            Sandbox sandbox = call.acquire(call.key());
            directory.set(call.callDirectory(sandbox));
            sandbox.writeFile(directory.get() + "/x", "x", call.spec().workDir());
            throw new SandboxInterrupted("cancelled");
        }).build().orElseThrow();
        try {
            assertThatThrownBy(() -> tool.call(Map.of())).isInstanceOf(SandboxInterrupted.class);
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(backend.sandbox().commands()).singleElement().satisfies(command -> {
            assertThat(command.shellLine()).isEqualTo("rm -rf '" + directory.get() + "'");
            assertThat(command.options().timeout()).isEqualTo(SandboxedTool.CANCELLED_RECLAIM_TIMEOUT);
        });
    }

    @Test
    void argumentsAsJsonTextMustBeAnObject() {
        ScriptedBackend backend = ScriptedBackend.builder().build();
        AtomicReference<Map<String, Object>> seen = new AtomicReference<>();
        SandboxTool tool = tool(router(backend), (call, arguments) -> {
            seen.set(arguments);
            return ToolResult.ok("ok");
        }).build().orElseThrow();
        assertThat(tool.callJson("{\"code\":\"print(1)\",\"n\":null}").text()).isEqualTo("ok");
        assertThat(seen.get()).containsEntry("code", "print(1)").containsKey("n");
        assertThat(tool.callJson("[1]")).isEqualTo(ToolResult.error(SandboxTool.NOT_AN_OBJECT));
        assertThat(tool.callJson("{bad")).isEqualTo(ToolResult.error(SandboxTool.NOT_AN_OBJECT));
        assertThat(backend.keys()).as("nothing acquired for a malformed call").isEmpty();
    }

    @Test
    void theToolDescribesItself() {
        ScriptedBackend backend = ScriptedBackend.builder().build();
        SandboxTool tool = tool(router(backend), SandboxedToolTest::writeIntoCallDirectory)
                .parametersSchema("{\"type\":\"object\"}").requiresApproval(true).build().orElseThrow();
        assertThat(tool.name()).isEqualTo("probe_tool");
        assertThat(tool.description()).isEqualTo("probes");
        assertThat(tool.parametersSchema()).isEqualTo("{\"type\":\"object\"}");
        assertThat(tool.requiresApproval()).isTrue();
    }
}
