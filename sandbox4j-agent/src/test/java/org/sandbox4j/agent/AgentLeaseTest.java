package org.sandbox4j.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sandbox4j.core.SandboxException;

/** The guest's lease ({@code SET_LEASE}) on the real agent, resident on this host: unrenewed, it ends the agent. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AgentLeaseTest {

    /** Far beyond any lease here: only a sanity bound. */
    private static final long EXIT_BOUND_SECONDS = 30;

    @Test
    void anUnrenewedLeaseEndsTheAgent() throws Exception {
        try (ResidentAgent agent = ResidentAgent.start(AgentBinary.path(), "lease-test")) {
            assertThat(agent.connection().setLease(Duration.ofSeconds(1))).as("no lease was armed before")
                    .isZero();

            assertThat(agent.process().onExit().get(EXIT_BOUND_SECONDS, TimeUnit.SECONDS).isAlive()).isFalse();
        }
    }

    @Test
    void aRenewedLeaseKeepsTheAgentAndZeroDisarmsIt() throws Exception {
        try (ResidentAgent agent = ResidentAgent.start(AgentBinary.path(), "lease-test")) {
            AgentConnection connection = agent.connection();
            connection.setLease(Duration.ofSeconds(2));
            // Three leases' time, renewed every half second: each renewal finds some of the last lease left.
            for (int renewal = 0; renewal < 12; renewal++) {
                Thread.sleep(500);
                assertThat(connection.setLease(Duration.ofSeconds(2))).isPositive();
            }
            assertThat(connection.setLease(Duration.ZERO)).isPositive();
            Thread.sleep(3000);

            assertThat(agent.process().isAlive()).isTrue();
            assertThat(connection.ping(Duration.ofSeconds(10))).isPositive();
        }
    }

    @Test
    void aLeaseOutOfBoundsIsRefusedOnBothSides() {
        try (ResidentAgent agent = ResidentAgent.start(AgentBinary.path(), "lease-test")) {
            AgentConnection connection = agent.connection();
            assertThatThrownBy(() -> connection.setLease(Duration.ofSeconds(-1)))
                    .isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> connection.setLease(Duration.ofSeconds(AgentProtocol.LEASE_MAX_SECONDS + 1)))
                    .isInstanceOf(IllegalArgumentException.class);

            Frame answer = connection.request(AgentProtocol.SET_LEASE,
                    Payload.create().u32(AgentProtocol.LEASE_MAX_SECONDS + 1).build(), Duration.ofSeconds(10), "lease");

            assertThat(connection.error(answer).code()).isEqualTo(AgentProtocol.ErrorCode.BAD_REQUEST);
            assertThat(agent.process().isAlive()).isTrue();
        }
    }

    @Test
    void anAgentThatPredatesLeasesIsToldApartWithTheFix() throws Exception {
        try (FakeAgent fake = new FakeAgent()) {
            AgentConnection connection = fake.openAnswering();
            assertThat(connection.hello().lease()).isFalse();

            assertThatThrownBy(() -> connection.setLease(Duration.ofSeconds(5))).isInstanceOf(SandboxException.class)
                    .hasMessageContaining("predates leases").hasMessageContaining("build-guest.sh");
            connection.close();
        }
    }
}
