package org.sandbox4j.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.SandboxEgressNotEnforced;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.SandboxImageNotUsable;

/** Clear errors for what the backend cannot use, each naming the fix. */
class DockerBackendRefusalsTest {

    @Test
    void anUnreachableEngineIsNamedWithTheFix() {
        assertThatThrownBy(() -> DockerBackend.builder().host("unix:///nonexistent/sandbox4j/docker.sock")
                .image(TestEngines.image()).connectTimeout(Duration.ofSeconds(2)).build())
                .isInstanceOf(SandboxEngineUnreachable.class)
                .hasMessageContaining("cannot reach a container engine at unix:///nonexistent/sandbox4j/docker.sock")
                .hasMessageContaining("DOCKER_HOST");
    }

    @Test
    void aMissingImageSaysHowToBuildOrLoadIt() {
        assertThatThrownBy(() -> DockerBackend.builder().host(TestEngines.dockerHost())
                .image("localhost/sandbox4j-no-such-image:1").build())
                .isInstanceOf(SandboxImageNotUsable.class)
                .hasMessageContaining("'localhost/sandbox4j-no-such-image:1' is not in the engine")
                .hasMessageContaining("docker import")
                .hasMessageContaining("pullPolicy(PullPolicy.IF_MISSING)");
    }

    @Test
    void aMissingRuntimeListsTheEnginesRuntimes() {
        assertThatThrownBy(() -> DockerBackend.builder().host(TestEngines.dockerHost()).image(TestEngines.image())
                .runtime("kata").build())
                .isInstanceOf(SandboxRuntimeMissing.class)
                .hasMessageContaining("no runtime 'kata'")
                .hasMessageContaining("runc")
                .hasMessageContaining("runsc");
    }

    @Test
    void unrestrictedEgressIsRefused() {
        try (DockerBackend backend = DockerBackend.builder().host(TestEngines.dockerHost()).image(TestEngines.image())
                .build()) {
            assertThat(backend.declarations().egressModes()).containsExactlyInAnyOrder(Egress.CLOSED, Egress.ALLOWLIST);
            assertThatThrownBy(() -> backend.acquire(new SandboxKey("s", "t", "a"),
                    SandboxSpec.builder("k").egress(Egress.UNRESTRICTED).build()))
                    .isInstanceOf(SandboxEgressNotEnforced.class);
        }
    }

    @Test
    void aWorkDirOverASystemDirectoryIsRefused() {
        try (DockerBackend backend = DockerBackend.builder().host(TestEngines.dockerHost()).image(TestEngines.image())
                .build()) {
            for (String workDir : List.of("/work", "/etc/work", "/usr/local/work")) {
                assertThatThrownBy(() -> backend.acquire(new SandboxKey("s", "t", "a"),
                        SandboxSpec.builder("k").workDir(workDir).build()))
                        .as(workDir).isInstanceOf(IllegalArgumentException.class);
            }
        }
    }
}
