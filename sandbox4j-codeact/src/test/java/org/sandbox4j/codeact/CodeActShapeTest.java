package org.sandbox4j.codeact;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.codeact.CodeActFixture.args;
import static org.sandbox4j.codeact.CodeActFixture.code;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;
import org.sandbox4j.core.CallerContext;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.FileListing;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.SandboxCapabilityNotSupported;
import org.sandbox4j.core.SandboxOutputSinkRequired;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.hosttools.HostTool;
import org.sandbox4j.core.hosttools.HostToolRegistry;
import org.sandbox4j.core.outputs.FileSystemSink;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.ToolResult;
import org.sandbox4j.testkit.InMemoryBackend;
import org.sandbox4j.testkit.InMemoryFileStore;
import org.sandbox4j.testkit.InMemorySandbox;
import org.sandbox4j.testkit.RecordedCommand;

/** The kind's shape on the in-memory backend: spec, schema, construction refusals, what runs where. */
class CodeActShapeTest {

    private final CallerContext context = CallerContext.of(() -> "s", () -> "t", FileListing.ALL);

    private static SandboxRouter router(InMemoryBackend backend) {
        return SandboxRouter.builder().backend(backend).minIsolation(Isolation.NONE).build();
    }

    private CodeAct.Builder codeAct(InMemoryBackend backend) {
        return CodeAct.builder(router(backend), "agent", context);
    }

    private static InMemoryBackend everything() {
        return InMemoryBackend.builder().capabilities(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT,
                Capability.HOST_TOOLS).egressModes(Egress.CLOSED, Egress.ALLOWLIST).build();
    }

    private static HostToolRegistry oneHostTool() {
        HostToolRegistry registry = HostToolRegistry.builder().build();
        registry.register("lookup", HostTool.builder().required("city").body(arguments -> "sunny").build());
        return registry;
    }

    @Test
    void theSpecIsDerivedNeverGuessed() {
        SandboxSpec plain = codeAct(everything()).spec();
        assertThat(plain.kind()).isEqualTo(CodeAct.KIND);
        assertThat(plain.requires()).containsExactlyInAnyOrder(Capability.EXEC, Capability.FILES_IN);
        assertThat(plain.egress()).isEqualTo(Egress.CLOSED);
        assertThat(plain.outputsNamedAtCallTime()).isFalse();
        assertThat(plain.filesOut().maxFiles()).isEqualTo(CodeAct.DEFAULT_MAX_OUTPUT_FILES);

        SandboxSpec declared = codeAct(everything()).outputs(OutputMode.DECLARED).spec();
        assertThat(declared.requires()).contains(Capability.FILES_OUT);
        assertThat(declared.outputsNamedAtCallTime()).isTrue();

        SandboxSpec allow = codeAct(everything()).egressAllow(List.of(" pypi.org ", "pypi.org", "*.pythonhosted.org")).spec();
        assertThat(allow.egress()).isEqualTo(Egress.ALLOWLIST);
        assertThat(allow.egressAllow()).containsExactly("pypi.org", "*.pythonhosted.org");

        SandboxSpec denyAll = codeAct(InMemoryBackend.builder().egressModes(Egress.DENY_ALL).build())
                .egressWithoutHosts(Egress.DENY_ALL).spec();
        assertThat(denyAll.egress()).isEqualTo(Egress.DENY_ALL);
        SandboxSpec allowBeatsIt = codeAct(everything()).egressWithoutHosts(Egress.DENY_ALL)
                .egressAllow(List.of("pypi.org")).spec();
        assertThat(allowBeatsIt.egress()).isEqualTo(Egress.ALLOWLIST);

        SandboxSpec tools = codeAct(everything()).hostTools(oneHostTool()).spec();
        assertThat(tools.requires()).containsExactlyInAnyOrder(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT);
        assertThat(tools.identities()).isNotEmpty();
    }

    @Test
    void impossibleConfigurationsFailConstruction() {
        InMemoryBackend backend = everything();
        assertThatThrownBy(() -> codeAct(backend).egressAllow(List.of(" ")).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("blank");
        assertThatThrownBy(() -> codeAct(backend).egressAllow(List.of("a.com,b.com")).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("comma");
        assertThatThrownBy(() -> codeAct(backend).outputSink(FileSystemSink.at(java.nio.file.Path.of("/tmp"))).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("NONE");
        assertThatThrownBy(() -> codeAct(backend).outputs(OutputMode.DECLARED).build())
                .isInstanceOf(SandboxOutputSinkRequired.class);
        assertThatThrownBy(() -> codeAct(backend).outputs(OutputMode.MANIFEST)
                .outputSink(FileSystemSink.at(java.nio.file.Path.of("/tmp"))).filesOut(new TransferLimits(10, 10, 1)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("MANIFEST");
        assertThatThrownBy(() -> codeAct(backend).hostTools(oneHostTool()).filesIn(new TransferLimits(10, 10, 1)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("shim");
        assertThatThrownBy(() -> codeAct(backend).hostTools(oneHostTool()).languages(Language.PYTHON, Language.BASH)
                .build()).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bash");
        assertThatThrownBy(() -> codeAct(backend).egressWithoutHosts(Egress.UNRESTRICTED))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("egressAllow");
        assertThatThrownBy(() -> codeAct(backend).execTimeout(Duration.ZERO).build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void noBackendMeansNoToolAndABackendThatCannotServeFailsConstruction() {
        assertThat(CodeAct.builder(null, "agent", context).build()).isEmpty();
        assertThat(CodeAct.builder(SandboxRouter.builder().build(), "agent", context).build()).isEmpty();
        InMemoryBackend noFilesOut = InMemoryBackend.builder().build();
        assertThatThrownBy(() -> codeAct(noFilesOut).outputs(OutputMode.DECLARED)
                .outputSink(FileSystemSink.at(java.nio.file.Path.of("/tmp"))).build())
                .isInstanceOf(SandboxCapabilityNotSupported.class);
        InMemoryBackend closedOnly = InMemoryBackend.builder().egressModes(Egress.CLOSED).build();
        assertThatThrownBy(() -> codeAct(closedOnly).egressAllow(List.of("pypi.org")).build())
                .isInstanceOf(org.sandbox4j.core.SandboxEgressNotEnforced.class);
        // A managed service's deny-all is not closed: a default tool is refused at construction.
        InMemoryBackend denyAllOnly = InMemoryBackend.builder().egressModes(Egress.DENY_ALL).build();
        assertThatThrownBy(() -> codeAct(denyAllOnly).build())
                .isInstanceOf(org.sandbox4j.core.SandboxEgressNotEnforced.class).hasMessageContaining("deny-all");
    }

    @Test
    void theSchemaOffersOnlyWhatTheDeploymentHas() {
        SandboxTool plain = codeAct(everything()).build().orElseThrow();
        Map<String, Object> schema = Json.parseObject(plain.parametersSchema());
        assertThat(List.copyOf(((Map<?, ?>) schema.get("properties")).keySet())).isEqualTo(List.of("code"));
        assertThat(schema.get("required")).isEqualTo(List.of("code"));
        assertThat(plain.name()).isEqualTo("execute_code");
        assertThat(plain.description()).contains("no network access").contains("120 seconds");

        SandboxTool full = codeAct(everything()).fileStore(InMemoryFileStore.of(Map.of()))
                .outputs(OutputMode.DECLARED).outputSink(FileSystemSink.at(java.nio.file.Path.of("/tmp")))
                .languages(Language.PYTHON, Language.JAVASCRIPT).build().orElseThrow();
        Map<?, ?> properties = (Map<?, ?>) Json.parseObject(full.parametersSchema()).get("properties");
        assertThat(List.copyOf(properties.keySet())).isEqualTo(List.of("code", "language", "files", "outputs"));
        assertThat(((Map<?, ?>) properties.get("language")).get("enum")).isEqualTo(List.of("python", "javascript"));
    }

    @Test
    void theProgramIsWrittenIntoTheCallDirectoryAndRunThere() {
        InMemorySandbox sandbox = InMemorySandbox.builder().output("program.py", "42\n").build();
        InMemoryBackend backend = InMemoryBackend.builder().sandbox(sandbox).build();
        SandboxTool tool = codeAct(backend).execTimeout(Duration.ofSeconds(7)).build().orElseThrow();
        assertThat(tool.call(code("print(42)")).text()).isEqualTo("stdout:\n42");

        List<RecordedCommand> commands = sandbox.commands();
        assertThat(commands).hasSize(3); // runtime check, program, reclaim
        RecordedCommand run = commands.get(1);
        Command.Argv argv = (Command.Argv) run.command();
        String callDirectory = run.options().workingDirectory();
        assertThat(callDirectory).matches(SandboxSpec.DEFAULT_WORK_DIR + "/[0-9a-f]{12}");
        assertThat(argv.words()).containsExactly("python3", callDirectory + "/program.py");
        assertThat(run.options().timeout()).isEqualTo(Duration.ofSeconds(7));
        assertThat(run.options().outputCapBytes()).isEqualTo(CodeAct.DEFAULT_MAX_OUTPUT_BYTES);
        assertThat(commands.get(2).shellLine()).isEqualTo("rm -rf '" + callDirectory + "'");
        assertThat(sandbox.contentOf(callDirectory + "/program.py")).hasValueSatisfying(
                bytes -> assertThat(new String(bytes, StandardCharsets.UTF_8)).isEqualTo("print(42)"));
    }

    @Test
    void theRuntimeIsCheckedOncePerSandbox() {
        InMemorySandbox sandbox = InMemorySandbox.builder().build();
        InMemoryBackend backend = InMemoryBackend.builder().sandbox(sandbox).build();
        SandboxTool tool = codeAct(backend).build().orElseThrow();
        tool.call(code("print(1)"));
        tool.call(code("print(2)"));
        assertThat(sandbox.commands()).filteredOn(c -> c.shellLine().contains("command -v")).hasSize(1);
    }

    @Test
    void aLanguageTheGuestLacksGetsAClearAnswer() {
        InMemorySandbox sandbox = InMemorySandbox.builder()
                .output("command -v", ExecResult.of("", "", 1, Duration.ZERO)).build();
        InMemoryBackend backend = InMemoryBackend.builder().sandbox(sandbox).build();
        SandboxTool tool = codeAct(backend).languages(Language.JAVASCRIPT, Language.PYTHON).build().orElseThrow();
        ToolResult result = tool.call(code("console.log(1)"));
        assertThat(result).isEqualTo(ToolResult.error(
                "Error: this sandbox cannot run javascript programs (it has no 'node'); use python instead."));
        assertThat(sandbox.commands()).noneMatch(c -> c.shellLine().contains("program.js"));
    }

    @Test
    void malformedArgumentsAreRefusedBeforeAnythingIsAcquired() {
        InMemoryBackend backend = everything();
        SandboxTool tool = codeAct(backend).build().orElseThrow();
        assertThat(tool.call(Map.of("code", 42)).text()).startsWith("Error: `code` must be");
        assertThat(tool.call(Map.of("code", " ")).text()).startsWith("Error: `code` is empty");
        assertThat(tool.call(args("code", "print(1)", "files", List.of("a"))).text())
                .startsWith("Error: 'files' is not a parameter");
        assertThat(tool.call(args("code", "print(1)", "language", "python")).text())
                .startsWith("Error: 'language' is not a parameter");
        SandboxTool two = codeAct(backend).languages(Language.PYTHON, Language.BASH).build().orElseThrow();
        assertThat(two.call(args("code", "x", "language", "cobol")).text())
                .isEqualTo("Error: 'cobol' is not a language this tool runs; use one of python, bash. Nothing was run.");
        assertThat(backend.keys()).isEmpty();
    }

    @Test
    void capsAreCountedBeforeAnyFileIsRead() {
        InMemoryBackend backend = everything();
        InMemoryFileStore store = InMemoryFileStore.of(Map.of("a", "aaaa", "b", "bbbb", "c", "c".repeat(30), "big", "x".repeat(50)));
        SandboxTool tool = codeAct(backend).fileStore(store).filesIn(new TransferLimits(40, 60, 3)).build().orElseThrow();
        assertThat(tool.call(args("code", "1", "files", List.of("a", "b", "big"))).text())
                .contains("4 files").contains("the 3 allowed");
        assertThat(tool.call(args("code", "1", "files", List.of("big"))).text())
                .contains("'big' is 50 bytes, more than the 40 allowed per file");
        assertThat(tool.call(args("code", "x".repeat(39), "files", List.of("c"))).text())
                .contains("more than the 60 allowed");
        assertThat(tool.call(args("code", "1", "files", List.of("a", "A"))).text()).contains("appears twice");
        assertThat(backend.keys()).isEmpty();
    }

    @Test
    void anUnlistedNameIsRefusedWithAHintEvenWhenTheStoreHoldsIt() {
        InMemoryBackend backend = everything();
        InMemoryFileStore store = InMemoryFileStore.of(Map.of("public.txt", "p", "secret.txt", "s"));
        CallerContext pinned = CallerContext.of(() -> "s", () -> "t", s -> List.of("public.txt"));
        SandboxTool tool = CodeAct.builder(router(backend), "agent", pinned).fileStore(store).build().orElseThrow();
        assertThat(tool.call(args("code", "1", "files", List.of("secret.txt"))).text()).isEqualTo(
                "Error: 'secret.txt' is not in the user's file store; files you can share: 'public.txt'. Nothing was run.");
        assertThat(backend.keys()).isEmpty();
    }

    @Test
    void aProviderFailureIsAFixedSentence() {
        InMemorySandbox failing = InMemorySandbox.builder()
                .output("program.py", ExecResult.of("", "", 0, Duration.ZERO)).build();
        InMemoryBackend backend = InMemoryBackend.builder().sandbox(failing).build();
        SandboxTool tool = codeAct(backend).build().orElseThrow();
        tool.call(code("print(1)"));
        InMemorySandbox raising = InMemorySandbox.builder()
                .raises(new IllegalStateException("connection reset by 10.0.0.7")).build();
        InMemoryBackend broken = InMemoryBackend.builder().sandbox(raising).build();
        ToolResult result = codeAct(broken).build().orElseThrow().call(code("print(1)"));
        assertThat(result).isEqualTo(ToolResult.error(CodeActBody.COULD_NOT_RUN));
        assertThat(Set.of(result.text())).noneMatch(text -> text.contains("10.0.0.7"));
    }
}
