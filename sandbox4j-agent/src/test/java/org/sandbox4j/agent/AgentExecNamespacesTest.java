package org.sandbox4j.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.ProcessOutput;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.SandboxTimeoutException;
import org.sandbox4j.core.spi.GuestEnvironment;
import org.sandbox4j.core.spi.TreeRemoval;

/**
 * {@code --exec-namespaces --exec-user 65534:65534}: the agent resident in a bubblewrap sandbox,
 * as uid 0 of bubblewrap's user namespace with the capabilities it needs there; each command under
 * an init of its own, in its own PID, mount and user namespaces.
 */
class AgentExecNamespacesTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static Path work;
    private static ResidentAgent agent;

    @BeforeAll
    static void startAgent() throws IOException {
        work = ResidentLaunchers.workRoot("agent-ns-");
        agent = ResidentAgent.start(ResidentLaunchers.bubblewrap(work), AgentBinary.path(),
                ResidentLaunchers.EXEC_NAMESPACES_OPTIONS, "agent-ns");
    }

    @AfterAll
    static void stopAgent() throws IOException {
        if (agent != null) {
            agent.close();
        }
        TreeRemoval.remove(work, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
    }

    private static ExecOptions options() {
        return ExecOptions.in(work.toString(), TIMEOUT);
    }

    private static ExecResult run(String line) {
        return GuestCommands.run(agent.connection(), Command.shell(line), options());
    }

    @Test
    void theHandshakeSaysPerExecNamespacesAndUsers() {
        AgentHello hello = agent.connection().hello();
        assertThat(hello.execNamespaces()).isTrue();
        assertThat(hello.execUser()).isTrue();
        assertThat(hello.treeReport()).isTrue();
        assertThat(hello.markerKill()).isFalse();
    }

    @Test
    void theCommandRunsAsNobodyWithoutAnyCapability() {
        ExecResult result = run("id -u; id -g; grep -E '^Cap(Prm|Eff|Bnd|Amb):' /proc/self/status; "
                + "grep NoNewPrivs /proc/self/status");
        assertThat(result.stdoutText().lines()).containsExactly("65534", "65534", "CapPrm:\t0000000000000000",
                "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000", "CapAmb:\t0000000000000000",
                "NoNewPrivs:\t1");
    }

    @Test
    void theCommandSeesOnlyItsOwnProcesses() {
        // PID 1 is the exec's init; 2 the command. A parallel exec's processes are not there.
        CompletableFuture<ExecResult> neighbour = CompletableFuture.supplyAsync(() -> run("sleep 2"));
        ExecResult result = run("sleep 0.5; for p in /proc/[0-9]*; do echo ${p#/proc/}; done");
        assertThat(result.stdoutText().lines()).containsExactlyInAnyOrder("1", "2");
        assertThat(neighbour.join().exitCode()).isZero();
    }

    @Test
    void eachExecGetsEmptyTemporaryDirectories() {
        ExecResult first = run("touch /tmp/a /var/tmp/b /dev/shm/c && ls -A /tmp /var/tmp /dev/shm | tr '\\n' ' '");
        assertThat(first.stdoutText()).contains("a").contains("b").contains("c");
        ExecResult second = run("ls -A /tmp /var/tmp /dev/shm | grep -v ':$' | grep -v '^$'; echo end");
        assertThat(second.stdoutText()).isEqualTo("end\n");
    }

    @Test
    void noUserNamespaceMountOrUnmountFromInside() {
        ExecResult result = run("unshare -U true; echo userns=$?; unshare -m true; echo mountns=$?; "
                + "umount /tmp 2>/dev/null; echo umount=$?");
        assertThat(result.stdoutText().lines()).containsExactly("userns=1", "mountns=1", "umount=32");
    }

    @Test
    void theInitShrugsOffSignalsFromInside() {
        ExecResult result = run("kill -TERM 1; kill -KILL 1; kill -INT 1; sleep 0.3; echo alive");
        assertThat(result.stdoutText()).isEqualTo("alive\n");
    }

    @Test
    void aTimeoutKillsTheEscapedTreeAndOnlyThatExecs() throws Exception {
        Path marker = work.resolve("escaped-child-ran");
        CompletableFuture<ExecResult> neighbour = CompletableFuture.supplyAsync(() -> run("sleep 3; echo survived"));
        assertThatThrownBy(() -> GuestCommands.run(agent.connection(), Command.argv("sh", "-c",
                "(setsid sh -c 'sleep 2; touch \"$1\"' escapee \"$1\" &); (sleep 1000 &); exec sleep 1001", "probe",
                marker.toString()), options().withTimeout(Duration.ofSeconds(1))))
                .isInstanceOf(SandboxTimeoutException.class);
        assertThat(neighbour.get(20, TimeUnit.SECONDS).stdoutText()).isEqualTo("survived\n");
        TimeUnit.SECONDS.sleep(2);
        assertThat(marker).doesNotExist();
        assertThat(agent.process().descendants().map(process -> process.info().commandLine().orElse("")))
                .noneMatch(line -> line.contains("sleep 100"));
    }

    @Test
    void theLeadersExitEndsItsTree() throws Exception {
        Path marker = work.resolve("leftover-ran");
        ExecResult result = GuestCommands.run(agent.connection(), Command.argv("sh", "-c",
                "(setsid sh -c 'sleep 1; touch \"$1\"' leftover \"$1\" &); echo left", "probe", marker.toString()),
                options());
        assertThat(result.stdoutText()).isEqualTo("left\n");
        TimeUnit.SECONDS.sleep(2);
        assertThat(marker).doesNotExist();
    }

    @Test
    void aStartedProcessGetsTheHostsInterruptOnly() throws Exception {
        try (SandboxProcess process = agent.connection().start(List.of("sh", "-c",
                "trap 'echo interrupted; exit 3' INT; echo ready; while :; do sleep 0.1; done"), work.toString(),
                GuestEnvironment.WITH_SYSTEM_PATH, ProcessOptions.in(work.toString(), TIMEOUT), "trap", "ns-test",
                () -> false)) {
            assertThat(readUntil(process, "ready\n")).isEqualTo("ready\n");
            process.signal(ProcessSignal.INTERRUPT);
            assertThat(process.waitFor(Duration.ofSeconds(10))).hasValue(3);
            assertThat(readUntil(process, "interrupted\n")).isEqualTo("interrupted\n");
        }
    }

    private static String readUntil(SandboxProcess process, String wanted) {
        StringBuilder seen = new StringBuilder();
        long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (!seen.toString().contains(wanted) && System.nanoTime() < until) {
            ProcessOutput output = process.read(Duration.ofMillis(200));
            seen.append(new String(output.stdout(), StandardCharsets.UTF_8));
            if (output.stdoutEnded() && output.stdout().length == 0) {
                break;
            }
        }
        return seen.toString();
    }
}
