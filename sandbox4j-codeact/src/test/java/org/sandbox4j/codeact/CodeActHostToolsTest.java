package org.sandbox4j.codeact;

import static org.assertj.core.api.Assertions.assertThat;
import static org.sandbox4j.codeact.CodeActFixture.args;
import static org.sandbox4j.codeact.CodeActFixture.code;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.hosttools.HostTool;
import org.sandbox4j.core.hosttools.HostToolRegistry;
import org.sandbox4j.core.outputs.FileSystemSink;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.ToolResult;
import org.sandbox4j.testkit.InMemoryFileStore;

/** {@code execute_code} with host tools, end to end on a real bubblewrap sandbox. */
class CodeActHostToolsTest {

    private static CodeActFixture fixture;

    private final AtomicInteger lookups = new AtomicInteger();

    @TempDir
    Path landing;

    @BeforeAll
    static void start() {
        fixture = new CodeActFixture();
    }

    @AfterAll
    static void stop() {
        fixture.close();
    }

    @AfterEach
    void nothingOfTheCallSurvives() {
        SandboxSpec spec = codeAct(registry(1)).spec();
        Sandbox sandbox = fixture.router.acquire(fixture.key(), spec);
        assertThat(sandbox.listDir(".", spec.workDirIn(sandbox))).as("the work dir after the call").isEmpty();
        fixture.thread.set(CodeActFixture.newThread());
    }

    private HostToolRegistry registry(int maxDispatches) {
        HostToolRegistry registry = HostToolRegistry.builder().maxDispatchesPerRun(maxDispatches).build();
        registry.register("lookup", HostTool.builder().required("city").body(arguments -> {
            lookups.incrementAndGet();
            return Map.of("city", arguments.get("city"), "forecast", "sunny", "celsius", 21);
        }).build());
        return registry;
    }

    private static CodeAct.Builder codeAct(HostToolRegistry registry) {
        return CodeAct.builder(fixture.router, CodeActFixture.AGENT, fixture.context).hostTools(registry)
                .languages(Language.PYTHON, Language.JAVASCRIPT);
    }

    @Test
    void aPythonProgramCallsARegisteredJavaToolAndGetsItsJsonAnswer() {
        SandboxTool tool = codeAct(registry(16)).build().orElseThrow();
        ToolResult result = tool.call(code(String.join("\n",
                "import sandbox4j_host_tools as host",
                "answer = host.lookup(city='Oslo')",
                "print(answer['city'], answer['forecast'], answer['celsius'] + 1)")));
        assertThat(result.text()).isEqualTo("stdout:\nOslo sunny 22");
        assertThat(lookups).hasValue(1);
    }

    @Test
    void aJavaScriptProgramCallsTheSameTool() {
        SandboxTool tool = codeAct(registry(16)).build().orElseThrow();
        ToolResult result = tool.call(args("language", "javascript", "code", String.join("\n",
                "const host = require('sandbox4j_host_tools');",
                "const answer = host.call('lookup', {city: 'Bergen'});",
                "console.log(answer.city, answer.forecast);")));
        assertThat(result.text()).isEqualTo("stdout:\nBergen sunny");
        assertThat(lookups).hasValue(1);
    }

    @Test
    void anUnregisteredToolIsRefusedAndNothingRuns() {
        SandboxTool tool = codeAct(registry(16)).build().orElseThrow();
        ToolResult result = tool.call(code(String.join("\n",
                "import sandbox4j_host_tools as host",
                "try:",
                "    host.call('delete_everything', path='/')",
                "except host.HostToolError as refusal:",
                "    print('refused:', refusal)")));
        assertThat(result.text()).isEqualTo("stdout:\nrefused: Error: 'delete_everything' is not a registered host tool.");
        assertThat(lookups).hasValue(0);
    }

    @Test
    void theDispatchCapHoldsUnderAProgramThatLoopsOnDispatch() {
        SandboxTool tool = codeAct(registry(3)).execTimeout(Duration.ofSeconds(20)).build().orElseThrow();
        ToolResult result = tool.call(code(String.join("\n",
                "import sandbox4j_host_tools as host",
                "answered = refused = 0",
                "for i in range(10):",
                "    try:",
                "        host.lookup(city=str(i)); answered += 1",
                "    except host.HostToolError as e:",
                "        refused += 1; last = str(e)",
                "        break",
                "print(answered, refused, last)")));
        assertThat(lookups).as("the tool body ran exactly the cap").hasValue(3);
        assertThat(result.text()).startsWith("stdout:\n3 1 Error: the host-tool dispatch cap (3) is exhausted");
    }

    @Test
    void aProgramThatIgnoresItsTimeoutAndForksIsKilledWithItsChildren() throws Exception {
        SandboxTool tool = codeAct(registry(16)).execTimeout(Duration.ofSeconds(3)).build().orElseThrow();
        ToolResult result = tool.call(code(String.join("\n",
                "import os, time",
                "print('started', flush=True)",
                "if os.fork() == 0:",
                "    os.setsid()",
                "    while True:",
                "        with open('../../heartbeat', 'a') as f: f.write('.')",
                "        time.sleep(0.1)",
                "while True: time.sleep(1)")));
        assertThat(result.error()).isTrue();
        assertThat(result.text()).isEqualTo("Error: the program timed out after 3 s and was stopped.\n"
                + "Output so far:\nstarted\n");
        SandboxSpec spec = codeAct(registry(1)).spec();
        Sandbox sandbox = fixture.router.acquire(fixture.key(), spec);
        String workDir = spec.workDirIn(sandbox);
        long before = Heartbeat.settled(() -> sandbox.readFile("heartbeat", workDir, 1 << 20).length);
        assertThat(before).as("the child really ran").isPositive();
        Thread.sleep(1000);
        assertThat(sandbox.readFile("heartbeat", workDir, 1 << 20).length).as("the child is dead").isEqualTo(before);
        sandbox.remove("heartbeat", workDir, false);
    }

    @Test
    void sharedFilesAndOutputsLiveInTheProgramsWorkingDirectory() throws Exception {
        SandboxTool tool = codeAct(registry(16)).fileStore(InMemoryFileStore.of(Map.of("cities.txt", "Oslo\nRome\n")))
                .outputs(OutputMode.DECLARED).outputSink(FileSystemSink.at(landing)).build().orElseThrow();
        ToolResult result = tool.call(args("files", List.of("cities.txt"), "outputs", List.of("report.txt"), "code",
                String.join("\n",
                        "import sandbox4j_host_tools as host",
                        "lines = [c + ': ' + host.lookup(city=c)['forecast'] for c in open('cities.txt').read().split()]",
                        "open('report.txt', 'w').write('\\n'.join(lines))")));
        assertThat(result.text()).isEqualTo(ProgramReport.NOTHING_PRINTED + "\nSaved:\n- report.txt (23 bytes)");
        assertThat(Files.readString(landing.resolve("report.txt"))).isEqualTo("Oslo: sunny\nRome: sunny");
        assertThat(lookups).hasValue(2);
    }
}
