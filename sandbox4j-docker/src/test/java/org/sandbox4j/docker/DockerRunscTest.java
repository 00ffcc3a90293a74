package org.sandbox4j.docker;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * What only gVisor's runsc gives, beyond the TCK ({@link DockerConformanceTest} runs that on every
 * engine): its rung, and its own hold on the guest's process count.
 */
class DockerRunscTest {

    @Test
    void theRungIsHardenedContainer() {
        try (DockerBackend backend = DockerTarget.dockerWith("runsc").builder().build()) {
            assertThat(backend.declarations().isolation()).isEqualTo(Isolation.HARDENED_CONTAINER);
        }
    }

    /**
     * gVisor's kernel holds the guest to the configured process count itself (RLIMIT_NPROC), so a
     * fork bomb stops there, long before the engine's host-task backstop would make gVisor panic.
     */
    @Test
    void gVisorHoldsTheGuestToItsProcessLimit() throws InterruptedException {
        DockerLimits limits = DockerLimits.DEFAULT.withProcesses(40);
        try (DockerBackend backend = DockerTarget.dockerWith("runsc").builder().limits(limits).build()) {
            SandboxKey key = new SandboxKey("sandbox4j-docker-test", "nproc-" + System.nanoTime(), "agent");
            try {
                Sandbox sandbox = backend.acquire(key, SandboxSpec.builder("probe").build());
                ExecResult limit = sandbox.exec(List.of("python3", "-c",
                        "import resource; print(resource.getrlimit(resource.RLIMIT_NPROC))"), "/", Duration.ofSeconds(30));
                assertThat(limit.stdoutText().strip()).as(limit.stderrText()).isEqualTo("(40, 40)");
                ExecResult bomb = sandbox.exec(List.of("sh", "-c", "i=0; while [ $i -lt 200 ]; do sleep 5 & "
                        + "i=$((i+1)); echo $i >&2; done"), "/", Duration.ofSeconds(60));
                String[] counted = bomb.stderrText().strip().split("\n");
                assertThat(bomb.stderrText()).contains("Cannot fork");
                assertThat(Integer.parseInt(counted[counted.length - 2].strip())).isBetween(1, 39);
                // Once the bomb's sleeps end, the same container forks again: gVisor did not go down.
                String after = "";
                for (long deadline = System.nanoTime() + Duration.ofSeconds(40).toNanos();
                        !after.equals("alive") && System.nanoTime() < deadline; Thread.sleep(500)) {
                    after = sandbox.exec(List.of("sh", "-c", "sleep 0 && echo alive"), "/",
                            Duration.ofSeconds(30)).stdoutText().strip();
                }
                assertThat(after).isEqualTo("alive");
            } finally {
                backend.dispose(key);
            }
        }
    }
}
