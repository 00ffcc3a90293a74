package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.sandbox4j.agent.AgentBinaries;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxTimeoutException;

/**
 * The resident agent's machinery on a real bubblewrap: one agent serves a sandbox's commands, a
 * dead agent is replaced, the guest cannot end it, a timeout ends that call's tree alone, and a
 * disposal ends the agent. On a host with a writable cgroup (CI runs as root) the default backend
 * must take this path: a silent fallback would leave every test here skipped.
 */
@EnabledOnOs(OS.LINUX)
class BubblewrapResidentAgentTest {

    private static final String WORK = SandboxSpec.DEFAULT_WORK_DIR;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    /** Every wait here is bounded: a hang fails the test instead of stalling the build. */
    private static final Duration HANG_BOUND = Duration.ofSeconds(60);

    private static Path stateRoot;
    private static BubblewrapBackend backend;

    @BeforeAll
    static void backend() throws IOException {
        assumeTrue(AgentBinaries.packaged().isPresent(), AgentBinaries.missingReason());
        stateRoot = Files.createTempDirectory("s4jr");
        backend = BubblewrapBackend.builder().stateRoot(stateRoot).build();
        boolean cgroups = backend.limitMechanism() == LimitMechanism.CGROUP_V1
                || backend.limitMechanism() == LimitMechanism.CGROUP_V2;
        if (cgroups) {
            assertThat(commandsLine(backend)).as("a host with a writable cgroup and a packaged agent")
                    .startsWith("commands: resident agent").contains("bytes each");
        }
        assumeTrue(cgroups, "no writable cgroup here: " + commandsLine(backend));
    }

    @AfterAll
    static void cleanUp() {
        if (backend != null) {
            backend.close();
        }
        if (stateRoot != null) {
            LocalStore.deleteTree(stateRoot);
        }
    }

    @Test
    void oneAgentServesEveryCommandOfASandbox() {
        SandboxKey key = key();
        Sandbox sandbox = backend.acquire(key, SandboxSpec.builder("resident").build());
        try {
            List<Long> agents = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                assertThat(sandbox.exec(Command.argv("true"), ExecOptions.in(WORK, TIMEOUT)).exitCode()).isZero();
                agents.add(agentOf(sandbox));
            }
            assertThat(agents).as("the same agent each time").containsOnly(agents.get(0));
            assertThat(launchRecords(sandbox)).as("the agent is recorded among the sandbox's launches")
                    .contains(Long.toString(agents.get(0)));
        } finally {
            backend.dispose(key);
        }
    }

    @Test
    void commandsSeeWhatTheirOwnBwrapGaveThem() {
        SandboxKey key = key();
        Sandbox sandbox = backend.acquire(key, SandboxSpec.builder("resident").build());
        try {
            ExecOptions options = ExecOptions.in(WORK, TIMEOUT).withEnvironment(Map.of("CALLER_VARIABLE", "given"));
            ExecResult env = sandbox.exec(Command.argv("env"), options);
            assertThat(env.stdoutText().lines().sorted().toList()).containsExactly("CALLER_VARIABLE=given",
                    "HOME=/tmp", "LANG=C.UTF-8", "LOGNAME=sandbox",
                    "PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin", "PWD=" + WORK,
                    "SHELL=/bin/sh", "TMPDIR=/tmp", "USER=sandbox");
            ExecResult who = sandbox.exec(Command.shell("id -u; id -g; grep -E '^(CapEff|CapBnd|NoNewPrivs)' "
                    + "/proc/self/status; touch /tmp/x /var/tmp/x /dev/shm/x"), ExecOptions.in(WORK, TIMEOUT));
            assertThat(who.stdoutText()).startsWith("65534\n65534\n").contains("CapEff:\t0000000000000000",
                    "CapBnd:\t0000000000000000", "NoNewPrivs:\t1");
            assertThat(Integer.parseInt(sandbox.exec(Command.shell("ls /proc | grep -cE '^[0-9]+$'"),
                    ExecOptions.in(WORK, TIMEOUT)).stdoutText().strip())).as("the command sees its own processes")
                    .isLessThan(8);
            assertThat(sandbox.exec(Command.shell("ls -A /tmp /var/tmp /dev/shm"), ExecOptions.in(WORK, TIMEOUT))
                    .stdoutText()).as("each command's temporary directories are fresh")
                    .isEqualTo("/dev/shm:\n\n/tmp:\n\n/var/tmp:\n");
            assertThat(sandbox.exec(Command.argv("unshare", "--user", "true"), ExecOptions.in(WORK, TIMEOUT))
                    .exitCode()).as("no nested user namespace").isNotZero();
            assertThat(sandbox.exec(Command.argv("no-such-program-here"), ExecOptions.in(WORK, TIMEOUT)).exitCode())
                    .isEqualTo(127);
            assertThat(sandbox.exec(Command.argv("/etc/hosts"), ExecOptions.in(WORK, TIMEOUT)).exitCode())
                    .isEqualTo(126);
            assertThatThrownBy(() -> sandbox.exec(Command.argv("true"), ExecOptions.in(WORK + "/missing", TIMEOUT)))
                    .isInstanceOf(SandboxFileNotFound.class);
            assertThat(sandbox.exec(Command.argv("cat"), ExecOptions.in(WORK, TIMEOUT)
                    .withStdin("fed".getBytes(StandardCharsets.UTF_8))).stdoutText()).isEqualTo("fed");
        } finally {
            backend.dispose(key);
        }
    }

    @Test
    void theGuestCannotEndItsAgentAndCommandsGoOn() {
        SandboxKey key = key();
        Sandbox sandbox = backend.acquire(key, SandboxSpec.builder("resident").build());
        try {
            sandbox.exec(Command.argv("true"), ExecOptions.in(WORK, TIMEOUT));
            long agent = agentOf(sandbox);
            ExecResult attack = sandbox.exec(Command.shell("kill -9 1; kill -9 -1; kill -STOP 1; echo survived"),
                    ExecOptions.in(WORK, HANG_BOUND));
            assertThat(attack.stdoutText()).isEqualTo("survived\n");
            assertThat(sandbox.exec(Command.argv("echo", "after"), ExecOptions.in(WORK, TIMEOUT)).stdoutText())
                    .isEqualTo("after\n");
            assertThat(agentOf(sandbox)).as("the same agent").isEqualTo(agent);
            ExecResult tamper = sandbox.exec(Command.shell("echo x > /run/sandbox4j-agent/s4j-agent || echo refused; "
                    + "touch /run/sandbox4j-agent/other || echo refused"), ExecOptions.in(WORK, TIMEOUT));
            assertThat(tamper.stdoutText()).as("the agent's binary is read-only").isEqualTo("refused\nrefused\n");
            sandbox.exec(Command.shell("for f in /x /etc/x /run/x /dev/x /tmp/x /var/tmp/x /dev/shm/x; do "
                    + "touch $f 2>/dev/null; done"), ExecOptions.in(WORK, TIMEOUT));
            assertThat(sandbox.exec(Command.shell("ls /x /etc/x /run/x /dev/x /tmp/x /var/tmp/x /dev/shm/x "
                    + "2>/dev/null; true"), ExecOptions.in(WORK, TIMEOUT)).stdoutText())
                    .as("nothing written outside the workspace persists into the next command").isEmpty();
        } finally {
            backend.dispose(key);
        }
    }

    @Test
    void anAgentKilledOnTheHostFailsTheCallInFlightClearlyAndTheNextCallGetsAFreshOne() throws Exception {
        SandboxKey key = key();
        Sandbox sandbox = backend.acquire(key, SandboxSpec.builder("resident").build());
        try {
            sandbox.exec(Command.argv("true"), ExecOptions.in(WORK, TIMEOUT));
            long launch = agentOf(sandbox);
            CompletableFuture<ExecResult> inFlight = CompletableFuture.supplyAsync(
                    () -> sandbox.exec(Command.argv("sleep", "1000"), ExecOptions.in(WORK, HANG_BOUND)));
            Thread.sleep(500);
            killTheAgentItself(launch);

            assertThatThrownBy(() -> inFlight.get(HANG_BOUND.toSeconds(), TimeUnit.SECONDS))
                    .hasCauseInstanceOf(SandboxException.class).cause().hasMessageContaining("resident agent")
                    .hasMessageContaining("next call starts a fresh agent");
            assertThat(sandbox.exec(Command.argv("echo", "again"), ExecOptions.in(WORK, TIMEOUT)).stdoutText())
                    .isEqualTo("again\n");
            assertThat(agentOf(sandbox)).as("a fresh agent").isNotEqualTo(launch);
            assertThat(ProcessHandle.of(launch).filter(ProcessHandle::isAlive)).as("the old launch is gone").isEmpty();
        } finally {
            backend.dispose(key);
        }
    }

    @Test
    void aTimeoutEndsTheWholeTreeOfThatCallAndOnlyThatCall() throws Exception {
        SandboxKey key = key();
        Sandbox sandbox = backend.acquire(key, SandboxSpec.builder("resident").build());
        String sleep = uniqueSleep();
        try {
            CompletableFuture<ExecResult> neighbour = CompletableFuture.supplyAsync(() -> sandbox.exec(
                    Command.shell("sleep 4; echo neighbour done"), ExecOptions.in(WORK, HANG_BOUND)));
            assertThatThrownBy(() -> sandbox.exec(Command.shell("setsid " + sleep + " & (" + sleep + " &) ; "
                    + sleep), ExecOptions.in(WORK, Duration.ofSeconds(2)))).isInstanceOf(SandboxTimeoutException.class);
            assertThat(processesRunning(sleep)).as("every process of the timed-out call is gone").isEmpty();
            assertThat(neighbour.get(HANG_BOUND.toSeconds(), TimeUnit.SECONDS).stdoutText())
                    .as("a parallel call of the same sandbox ran on").isEqualTo("neighbour done\n");
        } finally {
            backend.dispose(key);
        }
    }

    @Test
    void disposalEndsTheAgentAndEverythingItRan() throws Exception {
        SandboxKey key = key();
        Sandbox sandbox = backend.acquire(key, SandboxSpec.builder("resident").build());
        String sleep = uniqueSleep();
        CompletableFuture<Void> running = CompletableFuture.runAsync(() -> {
            try {
                sandbox.exec(Command.shell("setsid " + sleep + " & " + sleep), ExecOptions.in(WORK, HANG_BOUND));
            } catch (SandboxException expected) {
                // disposed of while it ran
            }
        });
        Thread.sleep(1000);
        long launch = agentOf(sandbox);
        List<Long> below = ProcessHandle.of(launch).orElseThrow().descendants().map(ProcessHandle::pid).toList();

        backend.dispose(key);

        running.get(HANG_BOUND.toSeconds(), TimeUnit.SECONDS);
        List<Long> tree = new ArrayList<>(below);
        tree.add(launch);
        assertThat(stillRunning(tree)).as("the agent's tree").isEmpty();
        assertThat(processesRunning(sleep)).isEmpty();
        assertThatThrownBy(() -> sandbox.exec(Command.argv("true"), ExecOptions.in(WORK, TIMEOUT)))
                .isInstanceOf(SandboxDisposed.class);
    }

    @Test
    void aBackendBuiltWithoutItRunsOneBwrapPerCommand() {
        BubblewrapBackend perCommand = BubblewrapBackend.builder().stateRoot(stateRoot).residentAgent(false).build();
        try {
            assertThat(commandsLine(perCommand)).isEqualTo("commands: one bwrap per command (residentAgent(false))");
            SandboxKey key = key();
            Sandbox sandbox = perCommand.acquire(key, SandboxSpec.builder("resident").build());
            assertThat(sandbox.exec(Command.argv("echo", "ok"), ExecOptions.in(WORK, TIMEOUT)).stdoutText())
                    .isEqualTo("ok\n");
            assertThat(perCommand.agents().launcherPid(((BubblewrapSandbox) sandbox).id())).isEmpty();
            perCommand.dispose(key);
        } finally {
            perCommand.close();
        }
    }

    private static String commandsLine(BubblewrapBackend backend) {
        return backend.diagnostics().stream().filter(line -> line.startsWith("commands: ")).findFirst().orElseThrow();
    }

    private static SandboxKey key() {
        return new SandboxKey("resident", UUID.randomUUID().toString(), "agent");
    }

    private static long agentOf(Sandbox sandbox) {
        return backend.agents().launcherPid(((BubblewrapSandbox) sandbox).id()).orElseThrow();
    }

    private static List<String> launchRecords(Sandbox sandbox) {
        try (Stream<Path> files = Files.list(((BubblewrapSandbox) sandbox).directory().resolve(Launches.DIRECTORY))) {
            return files.map(file -> file.getFileName().toString()).toList();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** SIGKILL to the s4j-agent process below the launch (not the launchers). */
    private static void killTheAgentItself(long launch) {
        ProcessHandle agent = ProcessHandle.of(launch).orElseThrow().descendants()
                .filter(process -> process.info().command().map(command -> command.endsWith("s4j-agent")).orElse(false)
                        || commandLine(process.pid()).contains("--exec-namespaces"))
                .findFirst().orElseThrow(() -> new AssertionError("no agent below launch " + launch));
        assertThat(agent.destroyForcibly()).isTrue();
    }

    /** A sleep no other process runs: its duration has random decimals. */
    private static String uniqueSleep() {
        return "sleep 1000." + (100_000_000 + new java.security.SecureRandom().nextInt(800_000_000));
    }

    /** Host processes whose command line is {@code line}, once they had a moment to go. */
    private static List<Long> processesRunning(String line) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        List<Long> found;
        do {
            found = ProcessHandle.allProcesses().filter(ProcessHandle::isAlive)
                    .filter(process -> commandLine(process.pid()).strip().equals(line)).map(ProcessHandle::pid).toList();
            if (found.isEmpty()) {
                return found;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        return found;
    }

    /**
     * Which of {@code pids} still run after a moment: a zombie has ended (a launcher's killed child is
     * reaped by the host's init in its own time).
     */
    private static List<Long> stillRunning(List<Long> pids) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        List<Long> running;
        do {
            running = pids.stream().filter(BubblewrapResidentAgentTest::runs).toList();
            if (running.isEmpty()) {
                return running;
            }
            Thread.sleep(50);
        } while (System.nanoTime() < deadline);
        return running;
    }

    private static boolean runs(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            char state = stat.charAt(stat.lastIndexOf(')') + 2);
            return state != 'Z' && state != 'X';
        } catch (IOException | RuntimeException gone) {
            return false;
        }
    }

    private static String commandLine(long pid) {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            return new String(raw, StandardCharsets.UTF_8).replace('\0', ' ');
        } catch (IOException | RuntimeException gone) {
            return "";
        }
    }
}
