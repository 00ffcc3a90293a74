package org.sandbox4j.codeact;

import static org.assertj.core.api.Assertions.assertThat;
import static org.sandbox4j.codeact.CodeActFixture.args;
import static org.sandbox4j.codeact.CodeActFixture.code;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.TransferLimits;
import org.sandbox4j.core.outputs.FileSystemSink;
import org.sandbox4j.core.tool.SandboxTool;
import org.sandbox4j.core.tool.ToolResult;
import org.sandbox4j.testkit.InMemoryFileStore;

/** {@code execute_code} end to end on a real bubblewrap sandbox. */
class CodeActBubblewrapTest {

    private static final Pattern CALL_DIRECTORY = Pattern.compile("[0-9a-f]{12}");

    private static CodeActFixture fixture;

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
        // Every test's calls ran under this thread; its work dir must hold no call directory.
        SandboxSpec spec = CodeAct.builder(fixture.router, CodeActFixture.AGENT, fixture.context).spec();
        Sandbox sandbox = fixture.router.acquire(fixture.key(), spec);
        String workDir = spec.workDirIn(sandbox);
        List<String> left = sandbox.listDir(".", workDir).stream().map(entry -> entry.path().substring(entry.path().lastIndexOf('/') + 1))
                .filter(name -> CALL_DIRECTORY.matcher(name).matches()).toList();
        assertThat(left).as("call directories left in " + workDir).isEmpty();
        fixture.thread.set(CodeActFixture.newThread());
    }

    private static SandboxTool tool(CodeAct.Builder builder) {
        return builder.build().orElseThrow();
    }

    private static CodeAct.Builder codeAct() {
        return CodeAct.builder(fixture.router, CodeActFixture.AGENT, fixture.context);
    }

    @Test
    void aPythonProgramPrintsAndExitsZero() {
        ToolResult result = tool(codeAct()).call(code("print(sum(range(10)))"));
        assertThat(result.error()).isFalse();
        assertThat(result.text()).isEqualTo("stdout:\n45");
    }

    @Test
    void aNonZeroExitAndStderrAreReported() {
        ToolResult result = tool(codeAct()).call(code(
                "import sys\nprint('partial')\nprint('it broke', file=sys.stderr)\nsys.exit(3)"));
        assertThat(result.text()).isEqualTo("stdout:\npartial\nstderr:\nit broke\nexit code: 3");
    }

    @Test
    void aProgramThatPrintsNothingIsToldToPrint() {
        assertThat(tool(codeAct()).call(code("x = 1")).text()).isEqualTo(ProgramReport.NOTHING_PRINTED);
    }

    @Test
    void aTimeoutKillsTheProgramAndItsChildrenAndSaysSo() throws Exception {
        // The program forks a detached child in a new session that keeps writing a heartbeat into the work
        // dir (outside the call directory, so it outlives the call), then ignores its own timeout.
        String program = String.join("\n",
                "import os, time",
                "if os.fork() == 0:",
                "    os.setsid()",
                "    if os.fork() == 0:",
                "        while True:",
                "            with open('../heartbeat', 'a') as f: f.write('.')",
                "            time.sleep(0.1)",
                "    os._exit(0)",
                "while True: time.sleep(1)");
        SandboxTool tool = tool(codeAct().execTimeout(Duration.ofSeconds(3)));
        ToolResult result = tool.call(code(program));
        assertThat(result.error()).isTrue();
        assertThat(result.text()).isEqualTo(CodeActBody.timedOut(Duration.ofSeconds(3)));

        SandboxSpec spec = codeAct().spec();
        Sandbox sandbox = fixture.router.acquire(fixture.key(), spec);
        String workDir = spec.workDirIn(sandbox);
        long before = Heartbeat.settled(() -> sandbox.readFile("heartbeat", workDir, 1 << 20).length);
        assertThat(before).as("the child really ran").isPositive();
        Thread.sleep(1000);
        assertThat(sandbox.readFile("heartbeat", workDir, 1 << 20).length).as("the child is dead").isEqualTo(before);
        sandbox.remove("heartbeat", workDir, false);
    }

    @Test
    void aSharedFileFromTheStoreIsReadByTheProgram() {
        InMemoryFileStore store = InMemoryFileStore.of(Map.of("data/numbers.txt", "1 2 3 4\n", "other.txt", "x"));
        SandboxTool tool = tool(codeAct().fileStore(store));
        ToolResult result = tool.call(args("code", "print(sum(map(int, open('data/numbers.txt').read().split())))",
                "files", List.of("data/numbers.txt")));
        assertThat(result.text()).isEqualTo("stdout:\n10");
    }

    @ParameterizedTest
    @ValueSource(strings = {"../x", "/etc/passwd", "a\nb", "not-listed.txt", "a/../../b", "program.py", ""})
    void anUnlistedOrTraversalNameIsRefusedBeforeAnythingRuns(String name) throws IOException {
        Path marker = landing.resolve("ran");
        InMemoryFileStore store = InMemoryFileStore.of(Map.of("data.txt", "x"));
        SandboxTool tool = tool(codeAct().fileStore(store));
        List<Path> sandboxesBefore = sandboxDirectories();
        ToolResult result = tool.call(args("code", "open('" + marker + "', 'w').write('ran')", "files", List.of(name)));
        assertThat(result.error()).isTrue();
        assertThat(result.text()).startsWith("Error: ").endsWith("Nothing was run.");
        assertThat(marker).doesNotExist();
        assertThat(sandboxDirectories()).as("no sandbox was even acquired").isEqualTo(sandboxesBefore);
    }

    /** The backend's own records: one directory per sandbox under the state root. */
    private static List<Path> sandboxDirectories() throws IOException {
        try (var walk = Files.walk(fixture.stateRoot, 2)) {
            return walk.filter(Files::isDirectory).sorted().toList();
        }
    }

    @Test
    void aDeclaredOutputLandsInTheSink() throws IOException {
        SandboxTool tool = tool(codeAct().outputs(OutputMode.DECLARED).outputSink(FileSystemSink.at(landing)));
        ToolResult result = tool.call(args("code", String.join("\n",
                "import os",
                "os.makedirs('out', exist_ok=True)",
                "open('out/result.txt', 'w').write('forty-two')",
                "print('done')"), "outputs", List.of("out/result.txt", "never-written.txt")));
        assertThat(result.error()).isFalse();
        assertThat(result.text()).startsWith("stdout:\ndone\nSaved:\n- out/result.txt (9 bytes)")
                .endsWith("Not written by the program, so not saved: never-written.txt");
        assertThat(Files.readString(landing.resolve("out/result.txt"))).isEqualTo("forty-two");
    }

    @Test
    void anOutputOverTheCapIsRefusedWhole() {
        SandboxTool tool = tool(codeAct().outputs(OutputMode.DECLARED).outputSink(FileSystemSink.at(landing))
                .filesOut(new TransferLimits(16, 1024, 8)));
        ToolResult result = tool.call(args("code",
                "open('small.txt', 'w').write('ok')\nopen('big.txt', 'w').write('x' * 100)",
                "outputs", List.of("small.txt", "big.txt")));
        assertThat(result.error()).isTrue();
        assertThat(result.text()).contains("Nothing was saved:").contains("big.txt");
        assertThat(CodeActFixture.filesUnder(landing)).as("not even the small one landed").isEmpty();
    }

    @Test
    void outputsAreSavedOnlyWhenTheProgramSucceeds() {
        SandboxTool tool = tool(codeAct().outputs(OutputMode.DECLARED).outputSink(FileSystemSink.at(landing)));
        ToolResult result = tool.call(args("code", "open('r.txt', 'w').write('x')\nraise SystemExit(1)",
                "outputs", List.of("r.txt")));
        assertThat(result.text()).isEqualTo("exit code: 1");
        assertThat(CodeActFixture.filesUnder(landing)).isEmpty();
    }

    @Test
    void aManifestNamesTheOutputs() throws IOException {
        SandboxTool tool = tool(codeAct().outputs(OutputMode.MANIFEST).outputSink(FileSystemSink.at(landing)));
        ToolResult result = tool.call(code(String.join("\n",
                "import json",
                "open('chart.svg', 'w').write('<svg/>')",
                "json.dump({'outputs': [{'path': 'chart.svg'}]}, open('outputs.json', 'w'))")));
        assertThat(result.text()).isEqualTo(ProgramReport.NOTHING_PRINTED + "\nSaved:\n- chart.svg (6 bytes)");
        assertThat(Files.readString(landing.resolve("chart.svg"))).isEqualTo("<svg/>");
    }

    @ParameterizedTest
    @EnumSource(Language.class)
    void everyLanguageRunsHelloWorld(Language language) {
        String program = switch (language) {
            case PYTHON -> "print('hello from python')";
            case JAVASCRIPT -> "console.log('hello from javascript')";
            case JAVA -> "class Hello { public static void main(String[] a) { System.out.println(\"hello from java\"); } }";
            case BASH -> "echo \"hello from $(basename \"$BASH\")\"";
        };
        SandboxTool tool = tool(codeAct().languages(Language.PYTHON, Language.values()));
        ToolResult result = tool.call(args("code", program, "language", language.wire()));
        assertThat(result.text()).isEqualTo("stdout:\nhello from " + language.wire());
    }

    @Test
    void theProgramSeesNoNetwork() {
        ToolResult result = tool(codeAct()).call(code(String.join("\n",
                "import socket",
                "try:",
                "    socket.create_connection(('1.1.1.1', 53), timeout=2)",
                "    print('connected')",
                "except OSError as e:",
                "    print('refused')")));
        assertThat(result.text()).isEqualTo("stdout:\nrefused");
    }

    @Test
    void aCallWithoutAThreadIsRefused() {
        SandboxTool tool = tool(codeAct());
        String previous = fixture.thread.getAndSet(null);
        try {
            ToolResult result = tool.call(code("print(1)"));
            assertThat(result.text()).isEqualTo("Error: no active thread context — execute_code must be called "
                    + "from within a thread");
        } finally {
            fixture.thread.set(previous);
        }
    }

    @Test
    void outputBeyondTheCapStopsTheProgram() {
        ToolResult result = tool(codeAct().maxOutputBytes(1000)).call(code("print('x' * 5000)"));
        assertThat(result.error()).isTrue();
        assertThat(result.text()).contains("printed more than 1000 bytes");
    }

    @Test
    void unicodeOutputSurvives() {
        assertThat(tool(codeAct()).call(code("print('héllo 世界 😀')")).text()).isEqualTo("stdout:\nhéllo 世界 😀");
    }
}
