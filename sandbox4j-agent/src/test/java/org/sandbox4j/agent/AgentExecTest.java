package org.sandbox4j.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxExecOutputLimitExceeded;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.spi.ExecRefusals;

/** Exec through the real agent, resident on this host ({@code --stdio}). */
class AgentExecTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static ResidentAgent agent;

    @TempDir
    Path work;

    @BeforeAll
    static void startAgent() {
        agent = ResidentAgent.start(AgentBinary.path(), "agent-test");
    }

    @AfterAll
    static void stopAgent() {
        agent.close();
    }

    private ExecOptions options() {
        return ExecOptions.in(work.toString(), TIMEOUT);
    }

    private static ExecResult run(Command command, ExecOptions options) {
        return GuestCommands.run(agent.connection(), command, options);
    }

    @Test
    void theHandshakeDescribesTheAgent() {
        AgentHello hello = agent.connection().hello();
        assertThat(hello.version()).isEqualTo(1);
        assertThat(hello.agent()).startsWith("s4j-agent");
        assertThat(hello.pid1()).isFalse();
        assertThat(hello.cgroupKill()).isFalse();
        assertThat(hello.lease()).isTrue();
        assertThat(hello.treeReport()).isTrue();
        assertThat(hello.markerKill()).isFalse();
        assertThat(hello.execNamespaces()).isFalse();
        assertThat(hello.execUser()).isFalse();
        assertThat(agent.connection().ping(TIMEOUT)).isPositive();
        assertThat(agent.connection().reseed(new byte[64])).isGreaterThanOrEqualTo(0);
    }

    @Test
    void exitCodeAndSeparateStreams() {
        ExecResult result = run(Command.shell("printf out; printf err >&2; exit 3"), options());
        assertThat(result.exitCode()).isEqualTo(3);
        assertThat(result.stdoutText()).isEqualTo("out");
        assertThat(result.stderrText()).isEqualTo("err");
    }

    @Test
    void stdinReachesTheCommandThroughTheWindow() {
        byte[] input = new byte[3 * 1024 * 1024 + 17];
        for (int i = 0; i < input.length; i++) {
            input[i] = (byte) (i * 31);
        }
        ExecResult result = run(Command.argv("cat"), options().withStdin(input));
        assertThat(result.exitCode()).isZero();
        assertThat(result.stdout()).isEqualTo(input);
    }

    @Test
    void withoutStdinTheCommandReadsNothing() {
        assertThat(run(Command.argv("cat"), options()).stdoutText()).isEmpty();
    }

    @Test
    void theEnvironmentIsExactlyTheOneGiven() {
        ExecOptions options = options().withEnvironment(Map.of("SANDBOX4J_PROBE", "a b"));
        ExecResult result = agent.connection().exec(List.of("/usr/bin/env"), work.toString(),
                Map.of("SANDBOX4J_PROBE", "a b", "PATH", "/usr/bin:/bin"), options, "env");
        assertThat(result.stdoutText().lines()).containsExactlyInAnyOrder("SANDBOX4J_PROBE=a b", "PATH=/usr/bin:/bin");
    }

    @Test
    void theCommandRunsInItsWorkingDirectory() throws Exception {
        Path inner = Files.createDirectory(work.resolve("inner"));
        ExecResult result = run(Command.argv("pwd"), options().withWorkingDirectory(inner.toString()));
        assertThat(result.stdoutText()).isEqualTo(inner + "\n");
    }

    @Test
    void aMissingProgramExits127NamingIt() {
        ExecResult result = run(Command.argv("sandbox4j-no-such-program"), options());
        assertThat(result.exitCode()).isEqualTo(127);
        assertThat(result.stdoutText()).isEmpty();
        assertThat(result.stderrText()).contains("sandbox4j-no-such-program").doesNotContain("execvp");
        assertThat(run(Command.shell("sandbox4j-no-such-program"), options()).exitCode()).isEqualTo(127);
    }

    @Test
    void aNonExecutableFileExits126() throws Exception {
        Path file = Files.writeString(work.resolve("plain"), "");
        ExecResult result = run(Command.argv(file.toString()), options());
        assertThat(result.exitCode()).isEqualTo(126);
        assertThat(result.stderrText()).contains("plain");
    }

    @Test
    void aMissingWorkingDirectoryIsTheKitsTypedRefusal() throws Exception {
        String missing = work.resolve("missing").toString();
        assertThatThrownBy(() -> run(Command.argv("true"), options().withWorkingDirectory(missing)))
                .isInstanceOf(SandboxFileNotFound.class)
                .hasMessage(ExecRefusals.workingDirectoryMissing(missing).getMessage());
        String file = Files.writeString(work.resolve("file"), "").toString();
        assertThatThrownBy(() -> run(Command.shell("true"), options().withWorkingDirectory(file)))
                .isInstanceOf(SandboxNotADirectory.class)
                .hasMessage(ExecRefusals.workingDirectoryNotADirectory(file).getMessage());
    }

    @Test
    void aSignalEndsTheCommandWith128PlusTheSignal() {
        assertThat(run(Command.shell("kill -9 $$"), options()).exitCode()).isEqualTo(128 + 9);
    }

    @Test
    void aFloodPastTheCapIsKilledAndRefusedInTheKitsWording() {
        AtomicLong heard = new AtomicLong();
        ExecOptions capped = options().withOutputCap(100_000).withListener((stream, chunk) -> heard.addAndGet(
                chunk.length));
        Command flood = Command.argv("yes");
        assertThatThrownBy(() -> run(flood, capped))
                .isInstanceOf(SandboxExecOutputLimitExceeded.class)
                .hasMessage(ExecRefusals.outputCapExceeded(flood.toShellLine(), 100_000,
                        ExecRefusals.KILLED_WITH_EVERY_PROCESS)
                        .getMessage());
        assertThat(heard.get()).isEqualTo(100_000);
        assertThat(agent.connection().isOpen()).isTrue();
        assertNoChildrenLeft();
    }

    @Test
    void aTimeoutKillsTheTreeAndIsRefusedInTheKitsWording() {
        ExecOptions brief = options().withTimeout(Duration.ofSeconds(1));
        long start = System.nanoTime();
        assertThatThrownBy(() -> run(Command.shell("sleep 100 & sleep 100"), brief))
                .isInstanceOf(SandboxTimeoutException.class)
                .hasMessage(ExecRefusals.timedOut("sleep 100 & sleep 100", Duration.ofSeconds(1),
                        ExecRefusals.KILLED_WITH_EVERY_PROCESS).getMessage());
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
        assertNoChildrenLeft();
    }

    @Test
    void anInterruptKillsTheCommand() throws Exception {
        Thread caller = Thread.currentThread();
        Thread interrupter = new Thread(() -> {
            try {
                Thread.sleep(300);
            } catch (InterruptedException ignored) {
                return;
            }
            caller.interrupt();
        });
        interrupter.start();
        try {
            assertThatThrownBy(() -> run(Command.argv("sleep", "100"), options()))
                    .isInstanceOf(SandboxInterrupted.class);
            assertThat(Thread.interrupted()).isTrue();
        } finally {
            interrupter.join();
        }
        assertNoChildrenLeft();
    }

    @Test
    void severalExecsRunAtOnceOnOneConnection() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<ExecResult>> results = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                String word = "run" + i;
                results.add(pool.submit(() -> run(Command.shell("sleep 0.2; head -c 300000 /dev/zero | tr '\\0' x; "
                        + "echo " + word + " >&2"), options())));
            }
            for (int i = 0; i < results.size(); i++) {
                ExecResult result = results.get(i).get();
                assertThat(result.exitCode()).isZero();
                assertThat(result.stdout()).hasSize(300_000);
                assertThat(result.stderrText()).isEqualTo("run" + i + "\n");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aLaunchFailureIsNeverAnExitCode() {
        List<String> tooMany = new ArrayList<>();
        for (int i = 0; i < 5000; i++) {
            tooMany.add("x");
        }
        assertThatThrownBy(() -> agent.connection().exec(tooMany, work.toString(), Map.of(), options(), "x"))
                .isInstanceOf(SandboxException.class).hasMessageContaining("agent-test");
        assertThat(agent.connection().isOpen()).isTrue();
        assertThat(run(Command.argv("true"), options()).exitCode()).isZero();
    }

    /** Every command the agent started is gone (killed, and reaped), within a generous bound. */
    private static void assertNoChildrenLeft() {
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (agent.process().children().findAny().isPresent() && System.nanoTime() < until) {
            sleepBriefly();
        }
        assertThat(agent.process().descendants().map(p -> p.info().commandLine().orElse(p.toString())))
                .isEmpty();
    }

    private static void sleepBriefly() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
