package org.sandbox4j.sbx;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxTimeoutException;

/**
 * What the TCK does not reach, through the emulator: an idle stop keeps the disk and every command
 * binds its workspace again in its own namespace; a custom (non-Docker) image, whose root has no
 * mount capability, works the same; a lapsed login and a lost engine; the agent-socket check on a
 * daemon not restarted; the skills store kept out; the guest's network ends at the host's filter.
 */
class SbxEmulatedLifecycleTest {

    private static final String WORK = SandboxSpec.DEFAULT_WORK_DIR;
    private static final SandboxSpec SPEC = SandboxSpec.builder("lifecycle").egress(org.sandbox4j.core.Egress.DENY_ALL)
            .build();
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @TempDir
    Path state;

    private Path home;
    private SbxBackend backend;
    private final SandboxKey key = new SandboxKey("sbx-lifecycle", java.util.UUID.randomUUID().toString(), "agent");

    @BeforeEach
    void emulator() throws IOException {
        Assumptions.assumeTrue(Files.isExecutable(SbxConformanceTest.EMULATOR), "the sbx emulator is not there");
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "the sbx emulator needs host root");
        home = Files.createDirectories(state.resolve("emulator"));
        Files.writeString(home.resolve("settings.json"), "{\"ssh.agentForwardingEnabled\": false}");
        backend = new SbxBackend(SbxConfig.builder().sbxPath(SbxConformanceTest.EMULATOR.toString())
                .workspaceRoot(state.resolve("workspaces")).environment("SBX_EMULATOR_HOME", home.toString())
                .environment("SBX_EMULATOR_IDLE_SECONDS", "30").build());
    }

    @AfterEach
    void dispose() throws IOException {
        if (backend != null) {
            Files.deleteIfExists(home.resolve("logged-out"));
            Files.deleteIfExists(home.resolve("engine-lost"));
            backend.disposeScope(key.scope(), key.threadId());
        }
    }

    private ExecResult sh(Sandbox sandbox, String line) {
        return sandbox.exec(Command.shell(line), ExecOptions.in(WORK, TIMEOUT));
    }

    private void sbx(String... args) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(SbxConformanceTest.EMULATOR.toString());
        builder.command().addAll(List.of(args));
        builder.environment().put("SBX_EMULATOR_HOME", home.toString());
        Process process = builder.inheritIO().start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).isZero();
    }

    @Test
    void anIdleStopKeepsTheFilesAndTheNextCommandBindsInItsOwnNamespaceAgain() throws Exception {
        Sandbox sandbox = backend.acquire(key, SPEC);
        sandbox.writeFile("kept.txt", "host wrote this", WORK);
        assertThat(sh(sandbox, "cat kept.txt").stdoutText()).isEqualTo("host wrote this");
        sbx("stop", backend.sandboxName(key, SPEC.kind()));
        ExecResult again = sh(sandbox, "cat kept.txt; echo more >> kept.txt");
        assertThat(again.stdoutText()).isEqualTo("host wrote this");
        assertThat(again.exitCode()).isZero();
        assertThat(new String(sandbox.readFile("kept.txt", WORK, 100))).isEqualTo("host wrote thismore\n");
        assertThat(backend.acquire(key, SPEC)).extracting(s -> ((SbxSandbox) s).id())
                .isEqualTo(((SbxSandbox) sandbox).id());
    }

    @Test
    void aTimeoutKillsOnlyTheExpiredCommand() throws Exception {
        Sandbox sandbox = backend.acquire(key, SPEC);
        sandbox.writeFile("keep", "", WORK);
        Thread sibling = new Thread(() -> sh(sandbox, "sleep 3; echo sibling > sibling.txt"));
        sibling.start();
        assertThatThrownBy(() -> sandbox.exec(Command.shell("sleep 30; echo late > late.txt"),
                ExecOptions.in(WORK, Duration.ofSeconds(1)))).isInstanceOf(SandboxTimeoutException.class);
        sibling.join(TimeUnit.SECONDS.toMillis(60));
        assertThat(sandbox.stat("sibling.txt", WORK)).isPresent();
        assertThat(sandbox.stat("late.txt", WORK)).isEmpty();
        assertThat(sh(sandbox, "true").exitCode()).isZero();
    }

    /**
     * Through the real emulator: the engine is lost while a command runs, so the timeout's kill
     * cannot run; the sandbox is retired, every handle (this instance's, and another instance's
     * standing in for another process) refuses, and once the engine is back the next acquire, from
     * the other instance, replaces it with a new instance.
     */
    @Test
    void aKillThatCannotRunRetiresTheSandboxForEveryInstance() throws Exception {
        Sandbox sandbox = backend.acquire(key, SPEC);
        sandbox.writeFile("keep", "", WORK);
        String firstId = ((SbxSandbox) sandbox).id();
        SbxBackend other = new SbxBackend(SbxConfig.builder().sbxPath(SbxConformanceTest.EMULATOR.toString())
                .workspaceRoot(state.resolve("workspaces")).environment("SBX_EMULATOR_HOME", home.toString())
                .environment("SBX_EMULATOR_IDLE_SECONDS", "30").build());
        Sandbox otherHandle = other.acquire(key, SPEC);
        assertThat(((SbxSandbox) otherHandle).id()).isEqualTo(firstId);

        Thread loseTheEngine = new Thread(() -> {
            try {
                Thread.sleep(1500);
                Files.createFile(home.resolve("engine-lost"));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        loseTheEngine.start();
        assertThatThrownBy(() -> sandbox.exec(Command.shell("sleep 30"), ExecOptions.in(WORK, Duration.ofSeconds(3))))
                .isInstanceOf(SandboxTimeoutException.class).hasMessageContaining("retired");
        loseTheEngine.join();
        Files.delete(home.resolve("engine-lost"));

        assertThatThrownBy(() -> sh(sandbox, "true")).hasMessageContaining("retired");
        assertThatThrownBy(() -> sh(otherHandle, "true")).as("another instance's handle")
                .hasMessageContaining("retired");
        Sandbox replacement = other.acquire(key, SPEC);
        assertThat(((SbxSandbox) replacement).id()).as("the replacement's instance id").isNotEqualTo(firstId);
        replacement.writeFile("fresh", "", WORK);
        assertThat(sh(replacement, "cat keep 2>/dev/null || echo new-workspace").stdoutText().strip())
                .as("the replacement mounts a fresh workspace").isEqualTo("new-workspace");
    }

    @Test
    void aLapsedLoginAndALostEngineHaveTheirOwnTypesAndDisposalNeverCallsItGone() throws Exception {
        Sandbox sandbox = backend.acquire(key, SPEC);
        Path workspace = ((SbxSandbox) sandbox).workspace();
        Files.createFile(home.resolve("logged-out"));
        assertThatThrownBy(() -> backend.acquire(key, SPEC)).isInstanceOf(SbxLoginRequired.class);
        assertThatThrownBy(() -> sh(sandbox, "true")).isInstanceOf(SbxLoginRequired.class);
        Files.delete(home.resolve("logged-out"));
        Files.createFile(home.resolve("engine-lost"));
        assertThatThrownBy(() -> sh(sandbox, "true")).isInstanceOf(SbxDaemonFault.class);
        assertThat(backend.disposeScope(key.scope(), key.threadId())).isZero();
        assertThat(workspace).isDirectory();
        Files.delete(home.resolve("engine-lost"));
        assertThat(backend.disposeScope(key.scope(), key.threadId())).isEqualTo(1);
        assertThat(workspace).doesNotExist();
    }

    @Test
    void aDaemonNotRestartedAfterTheSettingChangedIsCaughtInTheNewSandbox() throws Exception {
        Files.createFile(home.resolve("forward-ssh-agent"));
        assertThatThrownBy(() -> backend.acquire(key, SPEC)).isInstanceOf(SbxHostNotConfined.class)
                .hasMessageContaining("sbx daemon restart");
        Files.delete(home.resolve("forward-ssh-agent"));
        Files.writeString(home.resolve("mcp.json"), "[{\"name\": \"gw\", \"url\": \"http://127.0.0.1:9\"}]");
        assertThatThrownBy(() -> backend.acquire(key, SPEC)).isInstanceOf(SbxHostNotConfined.class)
                .hasMessageContaining("gw");
    }

    /**
     * The workload starts with no_new_privs: the shell template's passwordless sudo (a setuid
     * binary) works for a bare {@code sbx exec} but not for a command run through the backend,
     * and after an idle stop the next command still binds its workspace (no root step needed).
     */
    @Test
    void theWorkloadRunsWithNoNewPrivsSoSudoFails() throws Exception {
        Sandbox sandbox = backend.acquire(key, SPEC);
        sandbox.writeFile("keep", "", WORK);
        String name = backend.sandboxName(key, SPEC.kind());
        sbx("exec", name, "sudo", "-n", "true");
        ExecResult status = sh(sandbox, "grep NoNewPrivs /proc/self/status");
        assertThat(status.stdoutText()).as(status.stderrText() + " exit " + status.exitCode())
                .matches("NoNewPrivs:\\s+1\\n");
        ExecResult sudo = sh(sandbox, "sudo -n true");
        assertThat(sudo.exitCode()).isNotZero();
        assertThat(sh(sandbox, "sudo -n id -u; id -u").stdoutText()).isEqualTo("1000\n");
        sbx("stop", name);
        assertThat(sh(sandbox, "grep NoNewPrivs /proc/self/status; pwd").stdoutText())
                .matches("NoNewPrivs:\\s+1\\n" + WORK + "\\n");
    }

    /**
     * A custom image: in the emulator (as sbx does outside Docker's own templates) its root has no
     * mount capability, so a bind as root fails; the backend's bind in the command's own user and
     * mount namespace works, and root is used only to make the mount point.
     */
    @Test
    void aCustomImageWhoseRootCannotMountStillGetsItsWorkspace() throws Exception {
        SandboxSpec custom = SandboxSpec.builder("custom").image("root").egress(org.sandbox4j.core.Egress.DENY_ALL)
                .build();
        Sandbox sandbox = backend.acquire(key, custom);
        sandbox.writeFile("in.txt", "host", WORK);
        ExecResult seen = sh(sandbox, "cat in.txt; id -u; echo guest > out.txt");
        assertThat(seen.stdoutText()).as(seen.stderrText()).isEqualTo("host0\n");
        assertThat(seen.exitCode()).as(seen.stderrText()).isZero();
        assertThat(new String(sandbox.readFile("out.txt", WORK, 100))).isEqualTo("guest\n");
        String name = backend.sandboxName(key, custom.kind());
        ExecResult asRoot = run("exec", "-u", "root", name, "sh", "-c", "mkdir -p /probe-mp && mount --bind /tmp "
                + "/probe-mp");
        assertThat(asRoot.exitCode()).as("a bind as the image's root").isNotZero();
    }

    /** Created with --skills off: the shared skills store is not mounted; a bare create would mount it. */
    @Test
    void theSharedSkillsStoreIsKeptOut() throws Exception {
        Sandbox sandbox = backend.acquire(key, SPEC);
        sandbox.writeFile("keep", "", WORK);
        String mounts = sh(sandbox, "cat /proc/self/mounts").stdoutText();
        assertThat(mounts).contains(" " + ((SbxSandbox) sandbox).workspace() + " ").doesNotContain("skills");
    }

    /** Every connection leaving the guest ends at the host's filter: an HTTP request gets its 403, nothing else. */
    @Test
    void theGuestsNetworkEndsAtTheFilter() throws Exception {
        Sandbox sandbox = backend.acquire(key, SPEC);
        sandbox.writeFile("keep", "", WORK);
        ExecResult http = sandbox.exec(Command.argv("python3", "-c", String.join("\n",
                "import socket",
                "s = socket.create_connection(('203.0.113.7', 80), timeout=20)",
                "s.sendall(b'GET / HTTP/1.1\\r\\nHost: example.com\\r\\n\\r\\n')",
                "print(s.recv(200).split(b'\\r\\n')[0].decode())")), ExecOptions.in(WORK, TIMEOUT));
        assertThat(http.stdoutText()).as(http.stderrText()).isEqualTo("HTTP/1.1 403 Forbidden\n");
    }

    private ExecResult run(String... args) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(SbxConformanceTest.EMULATOR.toString());
        builder.command().addAll(List.of(args));
        builder.environment().put("SBX_EMULATOR_HOME", home.toString());
        Process process = builder.start();
        process.getOutputStream().close();
        byte[] out = process.getInputStream().readAllBytes();
        byte[] err = process.getErrorStream().readAllBytes();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new ExecResult(out, err, process.exitValue(), Duration.ZERO);
    }

    /** The policy as sbx lists it for {@code name}, raw. */
    private String policy(String name) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(SbxConformanceTest.EMULATOR.toString(), "policy", "ls", name,
                "--json");
        builder.environment().put("SBX_EMULATOR_HOME", home.toString());
        builder.redirectErrorStream(true);
        Process process = builder.start();
        String out = new String(process.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return out;
    }

    @Test
    void anAllowlistSandboxReachesItsHostWhileADenyAllSandboxBesideItDoesNotAndDriftRetiresIt() throws Exception {
        try (org.sandbox4j.testkit.tck.LoopbackHttpServer server =
                org.sandbox4j.testkit.tck.LoopbackHttpServer.start("lifecycle")) {
            Files.writeString(home.resolve("hosts.json"), "{\"allowed.sbx.test\": \"127.0.0.1:" + server.port()
                    + "\"}");
            SandboxSpec allowlist = SandboxSpec.builder("allowlist").egress(org.sandbox4j.core.Egress.ALLOWLIST)
                    .egressAllow("allowed.sbx.test").build();
            Sandbox allowed = backend.acquire(key, allowlist);
            Sandbox denied = backend.acquire(key, SPEC);
            allowed.writeFile("keep", "", WORK);
            denied.writeFile("keep", "", WORK);
            String curl = "curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://allowed.sbx.test:"
                    + server.port() + "/";
            assertThat(sh(allowed, curl).stdoutText()).isEqualTo("200");
            assertThat(sh(denied, curl).stdoutText()).isEqualTo("403");
            assertThat(server.requests()).isEqualTo(1);
            // A global allow added afterwards: the allowlist sandbox is retired before its next
            // command; the deny-all one is untouched by it.
            sbx("policy", "allow", "network", "other.sbx.test");
            assertThatThrownBy(() -> sh(allowed, "true")).isInstanceOf(SbxHostNotConfined.class)
                    .hasMessageContaining("'other.sbx.test'");
            assertThat(sh(denied, curl).stdoutText()).isEqualTo("403");
            // Its replacement denies the new global allow for itself and still reaches its host.
            Sandbox replaced = backend.acquire(key, allowlist);
            replaced.writeFile("keep", "", WORK);
            assertThat(sh(replaced, curl).stdoutText()).isEqualTo("200");
            String name = backend.sandboxName(key, "allowlist");
            assertThat(policy(name)).contains("other.sbx.test");
            backend.dispose(key);
            // Only the sealing deny-all of the name is left of its rules; the global rule stays.
            String left = policy(name);
            assertThat(left).doesNotContain("allowed.sbx.test").contains("\"sandbox:" + name + "\", \"decision\": \"deny\"")
                    .contains("\"scope\": \"global\", \"decision\": \"allow\"");
            assertThat(left.split("\"scope\": \"sandbox:" + name + "\"", -1)).hasSize(2);
        }
    }
}
