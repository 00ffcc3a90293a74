package org.sandbox4j.codeact;

import static org.assertj.core.api.Assertions.assertThat;
import static org.sandbox4j.codeact.CodeActFixture.args;
import static org.sandbox4j.codeact.CodeActFixture.code;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ExecStream;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.outputs.FileSystemSink;
import org.sandbox4j.core.tool.ToolRefusal;

/** The runner hands a host program the program's own streams and exit code, through the tool's one flow. */
class CodeActRunnerTest {

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

    private static CodeAct.Builder codeAct() {
        return CodeAct.builder(fixture.router, CodeActFixture.AGENT, fixture.context);
    }

    @Test
    void theProgramsOwnStreamsAndExitCodeComeBackBesideTheReport() {
        CodeActRunner runner = codeAct().buildRunner().orElseThrow();
        CodeActRunner.Run run = runner.run(code("import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(7)"));
        ExecResult program = run.outcome().program().orElseThrow();
        assertThat(program.stdoutText()).isEqualTo("out\n");
        assertThat(program.stderrText()).isEqualTo("err\n");
        assertThat(program.exitCode()).isEqualTo(7);
        assertThat(run.outcome().result().text()).isEqualTo("stdout:\nout\nstderr:\nerr\nexit code: 7");
        assertThat(run.failure()).isEmpty();
    }

    @Test
    void landedOutputsAreListed() throws IOException {
        CodeActRunner runner = codeAct().outputs(OutputMode.DECLARED).outputSink(FileSystemSink.at(landing))
                .buildRunner().orElseThrow();
        CodeActRunner.Run run = runner.run(args("code", "open('r.txt', 'w').write('42')", "outputs",
                List.of("r.txt", "missing.txt")));
        assertThat(run.outcome().saved()).extracting(artifact -> artifact.name()).containsExactly("r.txt");
        assertThat(run.outcome().notWritten()).containsExactly("missing.txt");
        assertThat(run.outcome().problem()).isEmpty();
        assertThat(Files.readString(landing.resolve("r.txt"))).isEqualTo("42");
    }

    @Test
    void aRefusalIsHandedOverWithItsCause() {
        CodeActRunner runner = codeAct().execTimeout(Duration.ofSeconds(2)).buildRunner().orElseThrow();
        CodeActRunner.Run run = runner.run(code("import time\ntime.sleep(30)"));
        assertThat(run.outcome().program()).isEmpty();
        assertThat(run.outcome().result().error()).isTrue();
        assertThat(run.failure()).get().isInstanceOf(ToolRefusal.class);
        assertThat(run.failure().get().getCause()).isInstanceOf(SandboxTimeoutException.class);
    }

    @Test
    void theProgramGetsStandardInputAndArgumentsAndItsOutputIsStreamedAsItArrives() {
        CodeActRunner runner = codeAct().buildRunner().orElseThrow();
        List<String> heard = new CopyOnWriteArrayList<>();
        CodeActRunner.Program program = CodeActRunner.Program.AS_IS.withStdin("alice\n".getBytes(StandardCharsets.UTF_8))
                .withArguments(List.of("one", "two words", "$(id)"))
                .withOutput((stream, chunk) -> heard.add(stream + ":" + new String(chunk, StandardCharsets.UTF_8)));
        CodeActRunner.Run run = runner.run(code("import sys\nprint('hello', input(), sys.argv[1:])\n"
                + "print('e', file=sys.stderr)"), program);
        ExecResult result = run.outcome().program().orElseThrow();
        assertThat(result.stdoutText()).isEqualTo("hello alice ['one', 'two words', '$(id)']\n");
        assertThat(String.join("", heard.stream().filter(line -> line.startsWith(ExecStream.STDOUT + ":"))
                .map(line -> line.substring(ExecStream.STDOUT.toString().length() + 1)).toList()))
                .isEqualTo(result.stdoutText());
        assertThat(heard).anySatisfy(line -> assertThat(line).isEqualTo(ExecStream.STDERR + ":e\n"));
    }

    @Test
    void aModelsCallOfTheSameToolIsNotStreamedUnlessAsked() {
        CodeActRunner runner = codeAct().buildRunner().orElseThrow();
        List<byte[]> heard = new CopyOnWriteArrayList<>();
        assertThat(runner.tool().call(code("print('x')"), (stream, chunk) -> heard.add(chunk)).text())
                .contains("x");
        assertThat(heard).isNotEmpty();
        assertThat(runner.run(code("import sys\nprint(len(sys.argv), sys.stdin.read() == '')")).outcome().program()
                .orElseThrow().stdoutText()).isEqualTo("1 True\n");
    }
}
