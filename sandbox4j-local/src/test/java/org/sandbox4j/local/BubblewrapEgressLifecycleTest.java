package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.egress.EgressProxy;
import org.sandbox4j.testkit.tck.LoopbackEgressServers;
import org.sandbox4j.testkit.tck.LoopbackHttpServer;

/**
 * An allowlisting sandbox keeps a working way out across the lifecycle other processes drive: a
 * replica disposes of it and this process re-acquires it; a replica adopts it (replacing the
 * socket) and then stops. Each time the guest's next request must reach the allowed server again.
 */
class BubblewrapEgressLifecycleTest {

    private static final Duration BOUND = Duration.ofSeconds(30);
    private static final SandboxKey KEY = new SandboxKey("egress-life", "t", "a");

    private Path state;
    private LoopbackHttpServer allowed;
    private SandboxSpec spec;

    @BeforeEach
    void start() throws Exception {
        state = Files.createTempDirectory("s4je");
        allowed = LoopbackHttpServer.start("allowed");
        spec = SandboxSpec.builder("egress-life").egress(Egress.ALLOWLIST)
                .egressAllow(List.of(LoopbackEgressServers.ALLOWED_HOST + ":" + allowed.port() + "=127.0.0.1")).build();
    }

    @AfterEach
    void stop() {
        // Whatever a failed assertion left: its sandbox and control group go with the test.
        try (BubblewrapBackend cleaner = backend()) {
            cleaner.disposeScope(KEY.scope(), KEY.threadId());
        }
        allowed.close();
        LocalStore.deleteTree(state);
    }

    private BubblewrapBackend backend() {
        return BubblewrapBackend.builder().stateRoot(state)
                .egressSettings(EgressProxy.Settings.defaults().withResolver(BubblewrapTarget.resolver())).build();
    }

    private String status(Sandbox sandbox) {
        return sandbox.exec(List.of("curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "20",
                allowed.url(LoopbackEgressServers.ALLOWED_HOST).toString()), spec.workDir(), BOUND).stdoutText().strip();
    }

    @Test
    void theHostReadsEachDecisionInTheSandboxsAuditLog() throws Exception {
        try (BubblewrapBackend backend = backend()) {
            Sandbox sandbox = backend.acquire(KEY, spec);
            assertThat(status(sandbox)).isEqualTo("200");
            ExecResult refused = sandbox.exec(List.of("curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}",
                    "http://" + LoopbackEgressServers.UNLISTED_HOST + "/"), spec.workDir(), BOUND);
            assertThat(refused.stdoutText().strip()).isEqualTo("403");
            Path log = backend.egressAuditLog(sandbox).orElseThrow();
            List<String> lines = awaitLines(log, 2);
            assertThat(lines).anySatisfy(line -> assertThat(line).contains("\"" + LoopbackEgressServers.ALLOWED_HOST + "\"")
                    .contains("ALLOWED"));
            assertThat(lines).anySatisfy(line -> assertThat(line).contains("\"" + LoopbackEgressServers.UNLISTED_HOST
                    + "\"").contains("REFUSED"));
            assertThat(log.startsWith(backend.stateDirectory())).isTrue();
            backend.disposeScope(KEY.scope(), KEY.threadId());
        }
    }

    /** Decisions are appended when each connection ends, a moment after the guest has its answer. */
    private static List<String> awaitLines(Path log, int count) throws Exception {
        long deadline = System.nanoTime() + BOUND.toNanos();
        List<String> lines = List.of();
        while (System.nanoTime() < deadline) {
            lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
            if (lines.size() >= count) {
                return lines;
            }
            Thread.sleep(50);
        }
        return lines;
    }

    @Test
    void aSandboxDisposedByAReplicaGetsAFreshProxyWhenReacquired() {
        try (BubblewrapBackend here = backend(); BubblewrapBackend replica = backend()) {
            assertThat(status(here.acquire(KEY, spec))).isEqualTo("200");
            assertThat(replica.disposeScope(KEY.scope(), KEY.threadId())).isEqualTo(1);
            assertThat(status(here.acquire(KEY, spec))).as("after a replica disposed of it").isEqualTo("200");
            here.disposeScope(KEY.scope(), KEY.threadId());
        }
    }

    @Test
    void aSocketAReplicaReplacedAndAbandonedIsServedAgainOnTheNextAcquire() {
        try (BubblewrapBackend here = backend()) {
            Sandbox mine = here.acquire(KEY, spec);
            assertThat(status(mine)).isEqualTo("200");
            try (BubblewrapBackend replica = backend()) {
                assertThat(status(replica.acquire(KEY, spec))).as("through the replica's own proxy").isEqualTo("200");
                assertThat(status(mine)).as("this handle, through the replica's proxy").isEqualTo("200");
            }
            assertThat(status(here.acquire(KEY, spec))).as("after the replica stopped its proxy").isEqualTo("200");
            here.disposeScope(KEY.scope(), KEY.threadId());
        }
        assertThat(allowed.requests()).isEqualTo(4);
    }
}
