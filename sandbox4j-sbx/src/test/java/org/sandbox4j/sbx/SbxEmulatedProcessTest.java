package org.sandbox4j.sbx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.OptionalInt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.ProcessOutput;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.SandboxProcessKilled;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxTimeoutException;

/**
 * {@link SbxSandbox#start} through the emulator: a live round trip through {@code cat}, stdin's end
 * reaching {@code wc -c}, a signal to the group, a kill and a leader's exit that leave no process, a
 * lifetime, a missing working directory refused by {@code start} itself, and a disposal ending the handle.
 */
class SbxEmulatedProcessTest {

    private static final String WORK = "/sandbox4j/proc";
    private static final SandboxSpec SPEC = SandboxSpec.builder("process").workDir(WORK).egress(Egress.DENY_ALL)
            .build();
    private static final Duration LIFETIME = Duration.ofSeconds(120);
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path state;

    private SbxBackend backend;
    private final SandboxKey key = new SandboxKey("sbx-process", java.util.UUID.randomUUID().toString(), "agent");
    /**
     * A sleep's duration no other process names (299 s and random digits), so a guest scan of
     * command lines finds this test's sleepers; the scan names it split in two, so it never finds
     * itself. (Command lines, not environments: an exec's own user namespace may not read another's.)
     */
    private final String token = "299." + String.format("%012d",
            Math.abs(new java.security.SecureRandom().nextLong() % 1_000_000_000_000L));

    @BeforeEach
    void emulator() throws IOException {
        Assumptions.assumeTrue(Files.isExecutable(SbxConformanceTest.EMULATOR), "the sbx emulator is not there");
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "the sbx emulator needs host root");
        Path home = Files.createDirectories(state.resolve("emulator"));
        Files.writeString(home.resolve("settings.json"), "{\"ssh.agentForwardingEnabled\": false}");
        backend = new SbxBackend(SbxConfig.builder().sbxPath(SbxConformanceTest.EMULATOR.toString())
                .workspaceRoot(state.resolve("workspaces")).environment("SBX_EMULATOR_HOME", home.toString()).build());
    }

    @AfterEach
    void dispose() {
        if (backend != null) {
            backend.disposeScope(key.scope(), key.threadId());
        }
    }

    private Sandbox sandbox() {
        return backend.acquire(key, SPEC);
    }

    private static SandboxProcess start(Sandbox sandbox, String line) {
        return sandbox.start(Command.shell(line), ProcessOptions.in(WORK, LIFETIME));
    }

    /** Reads until stdout holds {@code expected} (or both streams ended, or the wait passed). */
    private static String readUntil(SandboxProcess process, String expected) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline && !out.toString(StandardCharsets.UTF_8).contains(expected)) {
            ProcessOutput got = process.read(Duration.ofMillis(500));
            out.writeBytes(got.stdout());
            if (got.ended()) {
                break;
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /** How many guest processes carry the token in their command line. */
    private int processesWithToken(Sandbox sandbox) {
        String half = token.substring(0, 6);
        String rest = token.substring(6);
        var scan = sandbox.exec(Command.argv("sh", "-c", "n=0; for p in /proc/[0-9]*; do "
                + "case \"$(tr '\\000' ' ' < $p/cmdline 2>/dev/null)\" in *\"$1$2\"*) n=$((n + 1)) ;; esac; done; "
                + "echo $n", "scan", half, rest), ExecOptions.in(WORK, WAIT));
        assertThat(scan.exitCode()).as(scan.stderrText()).isZero();
        return Integer.parseInt(scan.stdoutText().strip());
    }

    @Test
    void catEchoesWhileStdinIsOpenAndEndsAtItsEnd() {
        Sandbox sandbox = sandbox();
        try (SandboxProcess cat = start(sandbox, "cat")) {
            assertThat(cat.write("ping\n".getBytes(StandardCharsets.UTF_8), WAIT)).isEqualTo(5);
            assertThat(readUntil(cat, "ping\n")).isEqualTo("ping\n");
            assertThat(cat.isAlive()).isTrue();
            cat.write("pong\n".getBytes(StandardCharsets.UTF_8), WAIT);
            assertThat(readUntil(cat, "pong\n")).isEqualTo("pong\n");
            cat.closeStdin();
            assertThat(cat.waitFor(WAIT)).isEqualTo(OptionalInt.of(0));
        }
    }

    @Test
    void closingStdinIsEndOfInput() {
        Sandbox sandbox = sandbox();
        byte[] input = new byte[100_000];
        Arrays.fill(input, (byte) 'x');
        try (SandboxProcess wc = start(sandbox, "wc -c")) {
            assertThat(wc.write(input, WAIT)).isEqualTo(input.length);
            wc.closeStdin();
            assertThat(wc.waitFor(WAIT)).isEqualTo(OptionalInt.of(0));
            assertThat(readUntil(wc, "100000").strip()).isEqualTo("100000");
        }
    }

    @Test
    void aSignalReachesTheCommandAndItsExitCodeIsItsOwn() {
        Sandbox sandbox = sandbox();
        try (SandboxProcess trapper = start(sandbox, "trap 'echo got-term; exit 3' TERM; echo ready; "
                + "while :; do sleep 1; done")) {
            assertThat(readUntil(trapper, "ready\n")).isEqualTo("ready\n");
            trapper.signal(ProcessSignal.TERMINATE);
            assertThat(trapper.waitFor(WAIT)).isEqualTo(OptionalInt.of(3));
            assertThat(readUntil(trapper, "got-term")).contains("got-term");
        }
    }

    @Test
    void aKillLeavesNoProcessAndEndsTheHandle() {
        Sandbox sandbox = sandbox();
        SandboxProcess tree = sandbox.start(Command.shell("sleep " + token + " & setsid sh -c 'sleep " + token
                + "' & sh -c 'trap \"\" TERM HUP INT; sleep " + token + "' & echo ready; wait"),
                ProcessOptions.in(WORK, LIFETIME));
        assertThat(readUntil(tree, "ready\n")).isEqualTo("ready\n");
        assertThat(processesWithToken(sandbox)).as("the sleepers and their shells").isGreaterThanOrEqualTo(3);
        long began = System.nanoTime();
        tree.kill();
        assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(Duration.ofSeconds(30));
        assertThat(tree.isAlive()).isFalse();
        assertThatThrownBy(() -> tree.waitFor(WAIT)).isInstanceOf(SandboxProcessKilled.class);
        assertThat(processesWithToken(sandbox)).isZero();
        tree.close();
        tree.close();
    }

    @Test
    void theLeadersExitEndsItsTree() {
        Sandbox sandbox = sandbox();
        try (SandboxProcess leader = sandbox.start(Command.shell("sleep " + token + " & setsid sh -c 'sleep "
                + token + "' & echo started; read -r go; exit 0"), ProcessOptions.in(WORK, LIFETIME))) {
            assertThat(readUntil(leader, "started\n")).isEqualTo("started\n");
            assertThat(processesWithToken(sandbox)).as("the sleepers").isGreaterThanOrEqualTo(2);
            leader.write("go\n".getBytes(StandardCharsets.UTF_8), WAIT);
            assertThat(leader.waitFor(WAIT)).isEqualTo(OptionalInt.of(0));
            // Both streams end, sooner than the kit would end them (GuestProcess.END_GRACE): nothing holds them open.
            long exited = System.nanoTime();
            ProcessOutput last = leader.read(WAIT);
            while (!last.ended() && System.nanoTime() - exited < WAIT.toNanos()) {
                last = leader.read(WAIT);
            }
            assertThat(last.ended()).isTrue();
            assertThat(Duration.ofNanos(System.nanoTime() - exited))
                    .isLessThan(org.sandbox4j.core.spi.GuestProcess.END_GRACE.minusSeconds(1));
            assertThat(processesWithToken(sandbox)).isZero();
        }
    }

    @Test
    void theOutputsTailOutlivesTheLeadersExit() {
        Sandbox sandbox = sandbox();
        int bytes = 150_000; // less than the window and the pipe hold, so the leader exits before anything is read
        try (SandboxProcess writer = start(sandbox, "head -c " + bytes + " /dev/zero | tr '\\000' x")) {
            assertThat(writer.waitFor(WAIT)).isEqualTo(OptionalInt.of(0));
            long read = 0;
            long deadline = System.nanoTime() + WAIT.toNanos();
            ProcessOutput got;
            do {
                got = writer.read(Duration.ofMillis(500));
                read += got.stdout().length;
            } while (!got.ended() && System.nanoTime() < deadline);
            assertThat(read).isEqualTo(bytes);
        }
    }

    @Test
    void theLifetimeKillsItWithATimeout() {
        Sandbox sandbox = sandbox();
        try (SandboxProcess sleeper = sandbox.start(Command.shell("sleep 300"),
                ProcessOptions.in(WORK, Duration.ofSeconds(1)))) {
            assertThatThrownBy(() -> sleeper.waitFor(WAIT)).isInstanceOf(SandboxTimeoutException.class);
        }
    }

    @Test
    void aMissingWorkingDirectoryIsRefusedByStartItself() {
        Sandbox sandbox = sandbox();
        assertThatThrownBy(() -> sandbox.start(Command.shell("echo ran > /tmp/ran"),
                ProcessOptions.in(WORK + "/missing", LIFETIME))).isInstanceOf(SandboxFileNotFound.class);
        assertThat(sandbox.exec(Command.shell("test -e /tmp/ran"), ExecOptions.in(WORK, WAIT)).exitCode()).isOne();
        // No slot stays taken: as many as the limit still start.
        for (int i = 0; i < org.sandbox4j.core.HostCeilings.MAX_PROCESSES_PER_SANDBOX + 1; i++) {
            assertThatThrownBy(() -> sandbox.start(Command.shell("true"), ProcessOptions.in(WORK + "/missing",
                    LIFETIME))).isInstanceOf(SandboxFileNotFound.class);
        }
        try (SandboxProcess ok = start(sandbox, "echo fine")) {
            assertThat(ok.waitFor(WAIT)).isEqualTo(OptionalInt.of(0));
        }
    }

    @Test
    void aDisposalEndsTheHandleWithSandboxDisposed() {
        Sandbox sandbox = sandbox();
        SandboxProcess sleeper = start(sandbox, "echo ready; sleep 300");
        assertThat(readUntil(sleeper, "ready\n")).isEqualTo("ready\n");
        backend.disposeScope(key.scope(), key.threadId());
        assertThatThrownBy(() -> sleeper.waitFor(WAIT)).isInstanceOf(SandboxDisposed.class);
        assertThatThrownBy(() -> sleeper.write(new byte[] {1}, WAIT)).isInstanceOf(SandboxDisposed.class);
        sleeper.close();
    }
}
