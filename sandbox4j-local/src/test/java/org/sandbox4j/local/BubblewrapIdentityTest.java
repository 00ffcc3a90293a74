package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * Which acquires share a sandbox: the same key and kind do; another kind, or another egress
 * allowlist, never does, so a sandbox made under one allowlist is never reused under another.
 * Nothing here sends traffic; allowlisting sandboxes only start their (loopback, unix-socket) proxy.
 */
@EnabledOnOs(OS.LINUX)
class BubblewrapIdentityTest {

    private static final String WORK = SandboxSpec.DEFAULT_WORK_DIR;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final SandboxKey KEY = new SandboxKey("identity-scope", "identity-thread", "agent");

    private Path stateRoot;
    private BubblewrapBackend backend;

    @BeforeEach
    void backend() throws IOException {
        stateRoot = Files.createTempDirectory("s4j");
        backend = BubblewrapBackend.builder().stateRoot(stateRoot).build();
    }

    @AfterEach
    void cleanUp() {
        backend.dispose(KEY);
        backend.close();
        LocalStore.deleteTree(stateRoot);
    }

    @Test
    void theSameKeyAndKindGetTheSameSandbox() {
        Sandbox one = backend.acquire(KEY, SandboxSpec.builder("code").build());
        one.writeFile("shared.txt", "seen by both", WORK);

        Sandbox again = backend.acquire(KEY, SandboxSpec.builder("code").build());

        assertThat(again.exec(List.of("cat", "shared.txt"), WORK, TIMEOUT).stdoutText()).isEqualTo("seen by both");
        assertThat(sandboxCount()).isEqualTo(1);
    }

    @Test
    void anotherKindGetsAnotherSandbox() {
        backend.acquire(KEY, SandboxSpec.builder("code").build()).writeFile("shared.txt", "kind code", WORK);

        Sandbox other = backend.acquire(KEY, SandboxSpec.builder("browser").build());

        assertThat(other.stat("shared.txt", WORK)).as("the file another kind wrote").isEmpty();
        assertThat(other.exec(List.of("ls", "-A"), WORK, TIMEOUT).stdoutText()).isEmpty();
        assertThat(sandboxCount()).isEqualTo(2);
    }

    @Test
    void anotherEgressPostureOrAllowlistNeverReusesASandbox() {
        SandboxSpec allowA = allowlist("a.example.test:443");
        SandboxSpec allowB = allowlist("b.example.test:443");
        SandboxSpec allowAB = allowlist("a.example.test:443", "b.example.test:443");
        SandboxSpec allowBA = allowlist("b.example.test:443", "a.example.test:443");

        backend.acquire(KEY, allowA).writeFile("secret.txt", "written under allowlist A", WORK);

        assertThat(backend.acquire(KEY, allowA).exec(List.of("cat", "secret.txt"), WORK, TIMEOUT).stdoutText())
                .as("the same allowlist again").isEqualTo("written under allowlist A");
        for (SandboxSpec other : List.of(allowB, allowAB, SandboxSpec.builder("code").build())) {
            Sandbox sandbox = backend.acquire(KEY, other);
            assertThat(sandbox.stat("secret.txt", WORK)).as("the file under %s", other.egressAllow()).isEmpty();
            assertThat(sandbox.exec(List.of("sh", "-c", "test -e secret.txt; echo $?"), WORK, TIMEOUT)
                    .stdoutText()).as("seen from the guest under %s", other.egressAllow()).isEqualTo("1\n");
        }
        assertThat(sandboxCount()).as("A, B, A+B and closed").isEqualTo(4);
        backend.acquire(KEY, allowBA).writeFile("order.txt", "same set", WORK);
        assertThat(backend.acquire(KEY, allowAB).readFile("order.txt", WORK, 100))
                .as("the allowlist is a set: its order does not make another sandbox")
                .asString(StandardCharsets.UTF_8).isEqualTo("same set");
        assertThat(sandboxCount()).isEqualTo(4);
    }

    private static SandboxSpec allowlist(String... hosts) {
        return SandboxSpec.builder("code").egress(Egress.ALLOWLIST).egressAllow(hosts).build();
    }

    private long sandboxCount() {
        try (var children = Files.list(backend.stateDirectory())) {
            return children.filter(path -> path.getFileName().toString().startsWith("sbx-")).count();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
