package org.sandbox4j.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxTimeoutException;

/**
 * The resident guest agent: a container the backend creates gets it and its commands and file
 * calls go through it; a container made without it keeps the engine's path; an agent the guest
 * kills or stops is replaced, and the call it was serving fails clearly, never hangs. Which path
 * served is read from what the guest sees (the command's parent process) and from the backend's
 * diagnostics, never from timings.
 */
class DockerAgentTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    /** Bound on a whole test's calls: a hang fails the test instead of the build. */
    private static final Duration NEVER_HANGS = Duration.ofSeconds(120);
    private static final String WORK = "/sandbox4j/work";
    /** Prints the command line of the process that started the shell, NULs as spaces. */
    private static final List<String> PARENT = List.of("sh", "-c",
            "tr '\\000' ' ' < /proc/$PPID/cmdline 2>/dev/null; echo \" (parent $PPID)\"");

    @ParameterizedTest
    @EnumSource(DockerTarget.Engine.class)
    void aFreshContainerRunsCommandsAndFilesThroughItsAgent(DockerTarget.Engine engine) {
        try (DockerTarget target = engine.target(); DockerBackend backend = target.builder().build()) {
            SandboxKey key = key("fresh");
            try {
                assertThat(String.join("\n", backend.diagnostics())).contains("mounted read-only at "
                        + ContainerAgent.GUEST_PATH);
                Sandbox sandbox = backend.acquire(key, SandboxSpec.builder("probe").build());
                ExecResult parent = sandbox.exec(PARENT, WORK, TIMEOUT);
                assertThat(parent.stdoutText()).as(parent.stderrText()).contains(ContainerAgent.GUEST_PATH + " --stdio");
                assertThat(String.join("\n", backend.diagnostics(sandbox))).contains("guest agent: ")
                        .contains("agent 1 this backend started", "connected");

                byte[] content = "through the agent\n".getBytes(StandardCharsets.UTF_8);
                sandbox.writeFile("a/b/file.txt", content, WORK);
                assertThat(sandbox.readFile("a/b/file.txt", WORK, 1024)).isEqualTo(content);
                assertThat(sandbox.listDir("a/b", WORK)).extracting(entry -> entry.path()).singleElement().asString().endsWith("file.txt");
                // GNU find, not ls: coreutils' stat calls fail under this machine's gVisor.
                ExecResult owner = sandbox.exec(List.of("find", "a/b/file.txt", "-printf", "%U:%G"), WORK, TIMEOUT);
                assertThat(owner.stdoutText()).as(owner.stderrText()).isEqualTo(DockerBackend.DEFAULT_USER);
                sandbox.remove("a", WORK, true);
                assertThat(sandbox.stat("a", WORK)).isEmpty();
            } finally {
                backend.dispose(key);
            }
        }
    }

    /**
     * A container made by a backend without the agent (an older sandbox4j, another replica) is
     * adopted as it is: the engine's record of its mounts has no agent, so its calls keep the
     * engine's path, and they work.
     */
    @Test
    void aContainerWithoutTheAgentMountKeepsTheEnginePath() {
        try (DockerTarget target = DockerTarget.dockerWith("runc");
                DockerBackend without = target.builder().guestAgent(false).build();
                DockerBackend with = target.builder().build()) {
            SandboxKey key = key("adopted");
            try {
                Sandbox made = without.acquire(key, SandboxSpec.builder("probe").build());
                assertThat(String.join("\n", without.diagnostics())).contains("guest agent: none")
                        .contains("guestAgent(false)");
                Sandbox adopted = with.acquire(key, SandboxSpec.builder("probe").build());
                assertThat(with.containerName(adopted)).isEqualTo(without.containerName(made));

                ExecResult parent = adopted.exec(PARENT, WORK, TIMEOUT);
                assertThat(parent.stdoutText()).as(parent.stderrText()).contains("(parent ").doesNotContain("s4j-agent");
                assertThat(String.join("\n", with.diagnostics(adopted)))
                        .contains("engine exec and archive API: its container was created without the guest agent");
                adopted.writeFile("engine.txt", "x".getBytes(StandardCharsets.UTF_8), WORK);
                assertThat(adopted.readFile("engine.txt", WORK, 16)).isEqualTo("x".getBytes(StandardCharsets.UTF_8));
            } finally {
                with.dispose(key);
            }
        }
    }

    /**
     * The guest kills the agent from the command it runs: that command fails with a clear
     * exception (the agent and what it ran are gone), and the next call starts a new agent.
     */
    @Test
    void anAgentTheGuestKillsIsReplacedAndTheCallFailsClearly() {
        try (DockerTarget target = DockerTarget.dockerWith("runc"); DockerBackend backend = target.builder().build()) {
            SandboxKey key = key("killed");
            try {
                Sandbox sandbox = backend.acquire(key, SandboxSpec.builder("probe").build());
                assertTimeoutPreemptively(NEVER_HANGS, () -> {
                    assertThat(sandbox.exec(List.of("true"), WORK, TIMEOUT).exitCode()).isZero();
                    assertThatThrownBy(() -> sandbox.exec(List.of("sh", "-c", "kill -KILL $PPID; sleep 20"), WORK,
                            TIMEOUT))
                            .isInstanceOf(SandboxException.class)
                            .hasMessageContaining("the guest agent in container")
                            .hasMessageContaining("ended while the command ran");
                    ExecResult after = sandbox.exec(List.of("echo", "recovered"), WORK, TIMEOUT);
                    assertThat(after.stdoutText()).isEqualTo("recovered\n");
                    assertThat(String.join("\n", backend.diagnostics(sandbox))).contains("agent 2 this backend started");

                    // Killed between calls: a call that only reads is served by a new agent without a word.
                    sandbox.writeFile("kept.txt", "kept".getBytes(StandardCharsets.UTF_8), WORK);
                    sandbox.exec(List.of("sh", "-c", "(sleep 1; kill -KILL $PPID) >/dev/null 2>&1 &"), WORK, TIMEOUT);
                    Thread.sleep(3000);
                    assertThat(sandbox.readFile("kept.txt", WORK, 16)).isEqualTo("kept".getBytes(StandardCharsets.UTF_8));
                    assertThat(String.join("\n", backend.diagnostics(sandbox))).contains("agent 3 this backend started");
                });
            } finally {
                backend.dispose(key);
            }
        }
    }

    /**
     * The guest stops the agent (SIGSTOP): the call waiting on it ends at its own timeout, the
     * agent that no longer answers is replaced, and the next call works.
     */
    @Test
    void anAgentTheGuestStopsEndsTheCallAtItsTimeoutAndIsReplaced() {
        try (DockerTarget target = DockerTarget.dockerWith("runc"); DockerBackend backend = target.builder().build()) {
            SandboxKey key = key("stopped");
            try {
                Sandbox sandbox = backend.acquire(key, SandboxSpec.builder("probe").build());
                assertTimeoutPreemptively(NEVER_HANGS, () -> {
                    assertThatThrownBy(() -> sandbox.exec(List.of("sh", "-c", "kill -STOP $PPID; sleep 60"), WORK,
                            Duration.ofSeconds(2)))
                            .isInstanceOf(SandboxTimeoutException.class);
                    ExecResult after = sandbox.exec(List.of("echo", "recovered"), WORK, TIMEOUT);
                    assertThat(after.stdoutText()).isEqualTo("recovered\n");
                    assertThat(String.join("\n", backend.diagnostics(sandbox))).contains("agent 2 this backend started");
                });
            } finally {
                backend.dispose(key);
            }
        }
    }

    private static SandboxKey key(String thread) {
        return new SandboxKey("sandbox4j-docker-agent-test", thread + "-" + System.nanoTime(), "agent");
    }
}
