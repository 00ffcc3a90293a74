package org.sandbox4j.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.OptionalInt;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.ProcessOutput;
import org.sandbox4j.core.ProcessSignal;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.SandboxSpec;

/**
 * Started processes on each engine, through the real engine: stdin reaches the command and its
 * close is the command's end of input (through the feeder exec and the FIFO), a signal reaches the
 * group, a kill and the leader's own exit leave no process behind, a missing working directory is
 * refused at start (as is an image, here a PATH, without the pipe's tools), a disposal ends the
 * handle as one, the guest-side backstop ends a process nobody ends, and output nobody reads
 * stalls the guest as stdin nobody reads stalls the writer (each slack is printed).
 */
@ParameterizedClass(name = "{0}")
@EnumSource(DockerTarget.Engine.class)
class DockerProcessTest {

    private static final String WORK_DIR = "/workspace/processes";
    private static final Duration LIFETIME = Duration.ofMinutes(2);
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Parameter
    DockerTarget.Engine engine;

    private DockerTarget target;
    private DockerBackend backend;
    private SandboxKey key;

    @AfterEach
    void cleanUp() {
        if (backend != null && key != null) {
            backend.dispose(key);
        }
        if (target != null) {
            target.close();
        }
    }

    private Sandbox acquire() {
        target = engine.target();
        backend = target.builder().build();
        key = new SandboxKey("sandbox4j-docker-process", "t-" + UUID.randomUUID(), "agent");
        return backend.acquire(key, SandboxSpec.builder("process").workDir(WORK_DIR).build());
    }

    private static SandboxProcess start(Sandbox sandbox, String line) {
        return sandbox.start(Command.shell(line), ProcessOptions.in(WORK_DIR, LIFETIME));
    }

    /** Reads stdout until it holds {@code expected} or ends; what it read. */
    private static String readUntil(SandboxProcess process, String expected) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            ProcessOutput read = process.read(Duration.ofMillis(500));
            out.writeBytes(read.stdout());
            if (out.toString(StandardCharsets.UTF_8).contains(expected) || read.stdoutEnded()) {
                break;
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    /** Every process's command line in the container, one a line. */
    private static String processes(Sandbox sandbox) {
        return sandbox.exec(Command.shell("for d in /proc/[0-9]*; do tr '\\000' ' ' <\"$d/cmdline\" 2>/dev/null; "
                + "echo; done"), ExecOptions.in(WORK_DIR, WAIT)).stdoutText();
    }

    @Test
    void whatIsWrittenComesBackThroughCat() {
        Sandbox sandbox = acquire();
        try (SandboxProcess cat = start(sandbox, "cat")) {
            assertThat(cat.write("hello\n".getBytes(StandardCharsets.UTF_8), WAIT)).isEqualTo(6);
            assertThat(readUntil(cat, "hello\n")).isEqualTo("hello\n");
            assertThat(cat.write("again\n".getBytes(StandardCharsets.UTF_8), WAIT)).isEqualTo(6);
            assertThat(readUntil(cat, "again\n")).isEqualTo("again\n");
            cat.closeStdin();
            assertThat(cat.waitFor(WAIT)).hasValue(0);
        }
    }

    @Test
    void closingStdinIsTheCommandsEndOfInput() {
        Sandbox sandbox = acquire();
        byte[] input = new byte[300_000];
        try (SandboxProcess count = start(sandbox, "wc -c")) {
            assertThat(count.write(input, WAIT)).isEqualTo(input.length);
            count.closeStdin();
            assertThat(readUntil(count, "\n").strip()).isEqualTo(Integer.toString(input.length));
            assertThat(count.waitFor(WAIT)).hasValue(0);
        }
    }

    @Test
    void aSignalReachesTheGroupAndItsTrap() {
        Sandbox sandbox = acquire();
        try (SandboxProcess trapping = start(sandbox, "trap 'echo got-term; exit 7' TERM; echo armed; "
                + "while :; do sleep 1; done")) {
            assertThat(readUntil(trapping, "armed\n")).isEqualTo("armed\n");
            trapping.signal(ProcessSignal.TERMINATE);
            assertThat(trapping.waitFor(WAIT)).hasValue(7);
            assertThat(readUntil(trapping, "got-term")).contains("got-term");
        }
        try (SandboxProcess sleeping = sandbox.start(Command.argv(java.util.List.of("sleep", "100")),
                ProcessOptions.in(WORK_DIR, LIFETIME))) {
            sleeping.signal(ProcessSignal.INTERRUPT);
            assertThat(sleeping.waitFor(WAIT)).hasValue(128 + ProcessSignal.INTERRUPT.number());
        }
    }

    @Test
    void aKillLeavesNoProcessEvenOneThatLeftTheGroup() {
        Sandbox sandbox = acquire();
        SandboxProcess tree = start(sandbox, "sleep 311 & setsid sleep 312 & echo up; wait");
        assertThat(readUntil(tree, "up\n")).isEqualTo("up\n");
        assertThat(processes(sandbox)).contains("sleep 311", "sleep 312");
        long started = System.nanoTime();
        tree.kill();
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(tree.isAlive()).isFalse();
        assertThat(processes(sandbox)).doesNotContain("sleep 311", "sleep 312", "sleep 151");
        assertThat(took).isLessThan(DockerSandbox.KILL_TIMEOUT.multipliedBy(2));
        tree.close();
    }

    @Test
    void theLeadersExitEndsWhatItLeftBehind() {
        Sandbox sandbox = acquire();
        try (SandboxProcess leaving = start(sandbox, "sleep 313 & echo bye; exit 3")) {
            assertThat(leaving.waitFor(WAIT)).hasValue(3);
            assertThat(readUntil(leaving, "bye\n")).isEqualTo("bye\n");
            assertThat(processes(sandbox)).doesNotContain("sleep 313", "sleep 151");
            ProcessOutput rest = leaving.read(WAIT);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!rest.ended() && System.nanoTime() < deadline) {
                rest = leaving.read(Duration.ofSeconds(1));
            }
            assertThat(rest.ended()).isTrue();
        }
    }

    @Test
    void aMissingWorkingDirectoryIsRefusedAtStart() {
        Sandbox sandbox = acquire();
        assertThatThrownBy(() -> sandbox.start(Command.shell("true"), ProcessOptions.in(WORK_DIR + "/absent", LIFETIME)))
                .isInstanceOf(SandboxFileNotFound.class);
    }

    @Test
    void withoutTheToolsOfItsPipeNothingStarts() {
        Sandbox sandbox = acquire();
        // A PATH that holds only sh: the engine finds the wrapper's shell, the wrapper finds none of its tools.
        String onlyShell = WORK_DIR + "/only-sh";
        sandbox.exec(Command.shell("mkdir -p " + onlyShell + " && ln -s /bin/sh " + onlyShell + "/sh"),
                ExecOptions.in(WORK_DIR, WAIT));
        assertThatThrownBy(() -> sandbox.start(Command.shell("true"), ProcessOptions.in(WORK_DIR, LIFETIME)
                .withEnvironment(java.util.Map.of("PATH", onlyShell))))
                .isInstanceOf(org.sandbox4j.core.SandboxImageNotUsable.class).hasMessageContaining("mkfifo");
        try (SandboxProcess after = start(sandbox, "echo still-usable")) {
            assertThat(readUntil(after, "still-usable")).contains("still-usable");
        }
    }

    /** The wrapper as an exec's leader that nobody feeds or ends, as after the JVM holding its handle died. */
    @Test
    void theBackstopKillsTheGroupOnceItsBoundPassed() {
        DockerSandbox sandbox = (DockerSandbox) acquire();
        long bound = 2;
        long started = System.nanoTime();
        DockerSandbox.Internal ended = sandbox.internal(GuestScripts.process(org.sandbox4j.core.spi.GuestPaths.parent(WORK_DIR),
                "backstop" + UUID.randomUUID().toString().replace("-", ""), WORK_DIR, bound,
                java.util.List.of("sleep", "316")), WAIT);
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(ended.stdout()).startsWith(GuestScripts.PREAMBLE).endsWith(" ready\n");
        assertThat(ended.exitCode()).isEqualTo(128 + 9);
        assertThat(took).isGreaterThanOrEqualTo(Duration.ofSeconds(bound));
        assertThat(processes(sandbox)).doesNotContain("sleep " + bound, "sleep 316");
    }

    @Test
    void aDisposalEndsTheHandleAsOne() {
        Sandbox sandbox = acquire();
        SandboxProcess sleeping = start(sandbox, "sleep 314");
        backend.dispose(key);
        key = null;
        assertThatThrownBy(() -> sleeping.waitFor(WAIT)).isInstanceOf(SandboxDisposed.class);
        sleeping.close();
    }

    @Test
    void unreadOutputStallsTheGuestWhileAnotherHandleGoesOn() {
        Sandbox sandbox = acquire();
        int chunk = 16 * 1024;
        int window = ProcessOptions.MIN_WINDOW_BYTES;
        try (SandboxProcess flooding = sandbox.start(Command.shell("i=0; while [ $i -lt 1000 ]; do head -c " + chunk
                + " /dev/zero; i=$((i+1)); echo $i > " + WORK_DIR + "/progress; done"),
                ProcessOptions.in(WORK_DIR, LIFETIME).withWindow(window))) {
            try (SandboxProcess cat = start(sandbox, "cat")) {
                cat.write("other\n".getBytes(StandardCharsets.UTF_8), WAIT);
                assertThat(readUntil(cat, "other\n")).isEqualTo("other\n");
            }
            sleepQuietly(Duration.ofSeconds(3));
            String first = sandbox.exec(Command.shell("cat progress"), ExecOptions.in(WORK_DIR, WAIT)).stdoutText().strip();
            sleepQuietly(Duration.ofSeconds(2));
            String second = sandbox.exec(Command.shell("cat progress"), ExecOptions.in(WORK_DIR, WAIT)).stdoutText().strip();
            long written = Long.parseLong(second) * chunk;
            System.out.println(engine + ": stall slack: the guest wrote " + written + " bytes with a window of "
                    + window + " unread (" + (written - window) + " beyond it)");
            assertThat(second).isEqualTo(first);
            assertThat(Long.parseLong(second)).isLessThan(1000);
            assertThat(flooding.isAlive()).isTrue();
            OptionalInt none = flooding.waitFor(Duration.ofMillis(100));
            assertThat(none).isEmpty();
        }
    }

    @Test
    void aGuestThatNeverReadsStdinMakesTheWriterWait() {
        Sandbox sandbox = acquire();
        try (SandboxProcess deaf = start(sandbox, "sleep 317")) {
            byte[] chunk = new byte[64 * 1024];
            long accepted = 0;
            long limit = 64L * 1024 * 1024;
            while (accepted < limit) {
                int took = deaf.write(chunk, Duration.ofMillis(500));
                accepted += took;
                if (took < chunk.length) {
                    break;
                }
            }
            System.out.println(engine + ": stdin slack: a guest that never reads took " + accepted + " bytes ("
                    + (accepted - org.sandbox4j.core.spi.GuestProcess.STDIN_WINDOW_BYTES - FeedPipe.CAPACITY)
                    + " beyond the handle's window and the feeder's pipe)");
            assertThat(accepted).isLessThan(limit);
            assertThat(deaf.isAlive()).isTrue();
        }
    }

    private static void sleepQuietly(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
