package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackendNotPermitted;
import org.sandbox4j.core.SandboxEgressNotEnforced;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxNoBackendCanServe;
import org.sandbox4j.core.SandboxRouter;
import org.sandbox4j.core.SandboxSpec;

/** The router's policy over the two local backends: floors, egress, and serving each spec from the right one. */
class LocalBackendsThroughTheRouterTest {

    private static final Duration BOUND = Duration.ofSeconds(30);

    @TempDir
    Path state;

    @Test
    void theDefaultFloorRefusesBothAtConstruction() {
        BubblewrapBackend bubblewrap = BubblewrapBackend.builder().stateRoot(state).build();
        ProcessBackend process = ProcessBackend.builder().stateRoot(state).build();
        assertThatThrownBy(() -> SandboxRouter.builder().backend(bubblewrap).build())
                .isInstanceOf(SandboxBackendNotPermitted.class).hasMessageContaining("container");
        assertThatThrownBy(() -> SandboxRouter.builder().backend(process).minIsolation(Isolation.CONTAINER).build())
                .isInstanceOf(SandboxBackendNotPermitted.class).hasMessageContaining("os_process");
    }

    @Test
    void eachSpecGoesToTheBackendThatCanEnforceItsEgress() {
        BubblewrapBackend bubblewrap = BubblewrapBackend.builder().stateRoot(state).build();
        ProcessBackend process = ProcessBackend.builder().stateRoot(state).build();
        SandboxRouter router = SandboxRouter.builder().backend(bubblewrap).backend(process)
                .minIsolation(Isolation.OS_PROCESS).build();
        SandboxKey key = new SandboxKey("router", "t", "a");

        SandboxSpec closed = SandboxSpec.builder("closed").build();
        Sandbox confined = router.acquire(key, closed);
        ExecResult inside = confined.exec(List.of("hostname"), closed.workDirIn(confined), BOUND);
        assertThat(inside.stdoutText().strip()).isEqualTo(BwrapLayout.GUEST_HOSTNAME);
        assertThat(confined.relocatedWorkDir()).isEmpty();

        SandboxSpec open = SandboxSpec.builder("open").egress(Egress.UNRESTRICTED).build();
        Sandbox host = router.acquire(key, open);
        assertThat(host.relocatedWorkDir()).hasValueSatisfying(dir -> assertThat(dir).startsWith(state.toString()));
        ExecResult outside = host.exec(List.of("pwd"), open.workDirIn(host), BOUND);
        assertThat(outside.stdoutText().strip()).isEqualTo(open.workDirIn(host));

        router.disposeScope("router", "t");
    }

    @Test
    void aFloorAboveProcessLeavesNoBackendForAnUnrestrictedSpec() {
        BubblewrapBackend bubblewrap = BubblewrapBackend.builder().stateRoot(state).build();
        SandboxRouter router = SandboxRouter.builder().backend(bubblewrap).minIsolation(Isolation.CONTAINER).build();
        SandboxSpec open = SandboxSpec.builder("open").egress(Egress.UNRESTRICTED).build();
        assertThatThrownBy(() -> router.acquire(new SandboxKey("router", "t", "a"), open))
                .isInstanceOfAny(SandboxEgressNotEnforced.class, SandboxNoBackendCanServe.class)
                .hasMessageContaining("unrestricted");
    }
}
