package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.ProcessOutput;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.SandboxSpec;

/**
 * Started processes on both local backends, beyond the TCK: how the launch is confirmed and what
 * reaches the command's group.
 */
@EnabledOnOs(OS.LINUX)
class LocalProcessesTest {

    private static final String WORK = SandboxSpec.DEFAULT_WORK_DIR;
    private static final Duration LIFETIME = Duration.ofSeconds(60);
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static final SandboxKey KEY = new SandboxKey("processes-scope", "processes-thread", "agent");

    private static Path stateRoot;
    private static BubblewrapBackend bubblewrap;
    private static ProcessBackend process;

    @BeforeAll
    static void backends() throws IOException {
        stateRoot = Files.createTempDirectory("s4j");
        bubblewrap = BubblewrapBackend.builder().stateRoot(stateRoot.resolve("bwrap")).build();
        process = ProcessBackend.builder().stateRoot(stateRoot.resolve("process")).build();
    }

    @AfterAll
    static void cleanUp() {
        Stream.of(bubblewrap, process).forEach(backend -> {
            backend.dispose(KEY);
            backend.close();
        });
        LocalStore.deleteTree(stateRoot);
    }

    static Stream<Arguments> backendsUnderTest() {
        return Stream.of(Arguments.of("bubblewrap"), Arguments.of("process"));
    }

    private static Sandbox sandbox(String name) {
        SandboxBackend backend = name.equals("bubblewrap") ? bubblewrap : process;
        SandboxSpec.Builder spec = SandboxSpec.builder("exec");
        // The process backend shares the host's network: unrestricted is the only egress it declares.
        return backend.acquire(KEY, (backend == process ? spec.egress(Egress.UNRESTRICTED) : spec).build());
    }

    private static String workDir(Sandbox sandbox) {
        return sandbox.relocatedWorkDir().orElse(WORK);
    }

    @ParameterizedTest
    @MethodSource("backendsUnderTest")
    void aCatEchoesWhileItsStdinIsOpenAndEndsWithIt(String backend) {
        Sandbox sandbox = sandbox(backend);
        try (SandboxProcess cat = sandbox.start(Command.argv("cat"), ProcessOptions.in(workDir(sandbox), LIFETIME))) {
            assertThat(cat.write("ping\n".getBytes(StandardCharsets.UTF_8), WAIT)).isEqualTo(5);
            assertThat(readUntil(cat, "ping\n")).isEqualTo("ping\n");
            assertThat(cat.isAlive()).isTrue();
            cat.closeStdin();
            assertThat(cat.waitFor(WAIT)).hasValue(0);
            assertThat(cat.read(WAIT).ended()).isTrue();
        }
    }

    @ParameterizedTest
    @MethodSource("backendsUnderTest")
    void anInterruptReachesTheCommandsTrap(String backend) {
        Sandbox sandbox = sandbox(backend);
        try (SandboxProcess trapping = sandbox.start(Command.shell("trap 'echo got-int; exit 3' INT; echo ready; "
                + "while :; do sleep 0.1; done"), ProcessOptions.in(workDir(sandbox), LIFETIME))) {
            assertThat(readUntil(trapping, "ready\n")).isEqualTo("ready\n");
            trapping.signal(ProcessSignal.INTERRUPT);
            assertThat(trapping.waitFor(WAIT)).hasValue(3);
            assertThat(readUntil(trapping, "got-int\n")).isEqualTo("got-int\n");
        }
    }

    @ParameterizedTest
    @MethodSource("backendsUnderTest")
    void aMissingWorkingDirectoryIsRefusedByStart(String backend) {
        Sandbox sandbox = sandbox(backend);
        assertThatThrownBy(() -> sandbox.start(Command.argv("true"),
                ProcessOptions.in(workDir(sandbox) + "/no-such-directory", LIFETIME)))
                .isInstanceOf(SandboxFileNotFound.class);
        try (SandboxProcess after = sandbox.start(Command.argv("true"), ProcessOptions.in(workDir(sandbox), LIFETIME))) {
            assertThat(after.waitFor(WAIT)).hasValue(0);
        }
    }

    @ParameterizedTest
    @MethodSource("backendsUnderTest")
    void killingLeavesNothingOfTheTree(String backend) {
        Sandbox sandbox = sandbox(backend);
        String marker = "left-" + backend;
        SandboxProcess tree = sandbox.start(Command.shell("(sleep 2; touch " + marker + ") & setsid sh -c 'sleep 2; "
                + "touch " + marker + "-2' & echo ready; sleep 60"), ProcessOptions.in(workDir(sandbox), LIFETIME));
        assertThat(readUntil(tree, "ready\n")).isEqualTo("ready\n");
        tree.kill();
        assertThat(tree.isAlive()).isFalse();
        sleep(Duration.ofSeconds(3));
        assertThat(sandbox.exec(Command.shell("ls " + marker + "* 2>/dev/null | wc -l"),
                ExecOptions.in(workDir(sandbox), WAIT)).stdoutText().strip()).isEqualTo("0");
        tree.close();
    }

    /**
     * A disposal while the guest keeps starting escaped processes through chains of execve (a process mid-exec
     * shows an empty environment for a moment, which a marker scan must not take for "not ours").
     */
    @ParameterizedTest
    @MethodSource("backendsUnderTest")
    void disposalTakesWhatIsInTheMiddleOfExecve(String backend) throws IOException, InterruptedException {
        Sandbox sandbox = sandbox(backend);
        String leftover = "sleep 1011";
        try {
            SandboxProcess churn = sandbox.start(Command.shell("echo ready; i=0; while [ $i -lt 300 ]; do "
                    + "(setsid env env env " + leftover + " &); i=$((i + 1)); done; sleep 60"),
                    ProcessOptions.in(workDir(sandbox), LIFETIME));
            assertThat(readUntil(churn, "ready\n")).isEqualTo("ready\n");
            sleep(Duration.ofMillis(300));
            (backend.equals("bubblewrap") ? bubblewrap : process).dispose(KEY);
            sleep(Duration.ofMillis(500));
            assertThat(commandLinesOnTheHost()).noneMatch(line -> line.contains(leftover));
        } finally {
            // Only what escaped (a whole command line of exactly the leftover), and done before the next test starts.
            new ProcessBuilder("pkill", "-KILL", "-f", "^" + leftover + "$").start().waitFor();
        }
    }

    /** Every process's command line on this host, arguments joined by spaces. */
    private static List<String> commandLinesOnTheHost() throws IOException {
        List<String> lines = new java.util.ArrayList<>();
        try (Stream<Path> entries = Files.list(Path.of("/proc"))) {
            for (Path entry : (Iterable<Path>) entries::iterator) {
                try {
                    lines.add(new String(Files.readAllBytes(entry.resolve("cmdline")), java.nio.charset.StandardCharsets.UTF_8)
                            .replace('\0', ' '));
                } catch (IOException | RuntimeException notAProcess) {
                    // not a process directory, or one that ended
                }
            }
        }
        return lines;
    }

    @ParameterizedTest
    @MethodSource("backendsUnderTest")
    void theOutputsTailSurvivesTheLeadersExit(String backend) {
        Sandbox sandbox = sandbox(backend);
        int bytes = 300_000;
        try (SandboxProcess writer = sandbox.start(Command.shell("head -c " + bytes + " /dev/zero; exit 0"),
                ProcessOptions.in(workDir(sandbox), LIFETIME))) {
            // More than the window and a pipe hold: it waits for the reader, and exits with its last pipeful still
            // on the way, when the kit kills what it left behind.
            assertThat(writer.waitFor(Duration.ofMillis(500))).isEmpty();
            long read = 0;
            long deadline = System.nanoTime() + WAIT.toNanos();
            ProcessOutput output;
            do {
                output = writer.read(Duration.ofMillis(500));
                read += output.stdout().length;
            } while (!output.stdoutEnded() && System.nanoTime() < deadline);
            assertThat(read).isEqualTo(bytes);
            assertThat(writer.waitFor(WAIT)).hasValue(0);
        }
        for (int run = 0; run < 20; run++) {
            // Written and ended before the handle's readers start: all of it is still to be read.
            try (SandboxProcess quick = sandbox.start(Command.shell("echo tail-" + run),
                    ProcessOptions.in(workDir(sandbox), LIFETIME))) {
                assertThat(quick.waitFor(WAIT)).hasValue(0);
                assertThat(readUntil(quick, "tail-" + run + "\n")).as("run " + run).isEqualTo("tail-" + run + "\n");
            }
        }
    }

    private static String readUntil(SandboxProcess process, String expected) {
        ByteArrayOutputStream seen = new ByteArrayOutputStream();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline && !seen.toString(StandardCharsets.UTF_8).contains(expected)) {
            ProcessOutput output = process.read(Duration.ofMillis(500));
            seen.writeBytes(output.stdout());
            if (output.ended()) {
                break;
            }
        }
        return seen.toString(StandardCharsets.UTF_8);
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
