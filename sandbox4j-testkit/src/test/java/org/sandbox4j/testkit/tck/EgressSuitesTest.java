package org.sandbox4j.testkit.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.testkit.ForwardingBackend;
import org.sandbox4j.testkit.ForwardingSandbox;
import org.sandbox4j.testkit.InMemoryBackend;
import org.sandbox4j.testkit.tck.reference.NamespaceShellBackend.Flaw;
import org.sandbox4j.testkit.tck.reference.NamespaceShellTarget;

/**
 * The egress suites against the reference backend: a correct closed instance passes, and each
 * broken one fails the probes that match its flaw, by name. All traffic goes to servers these
 * tests start on 127.0.0.1; the fixture's names ({@code *.localhost}, {@code localhost}) are ones
 * curl resolves itself, so even a guest on the host's network sends no DNS query anywhere.
 */
class EgressSuitesTest {

    private static final String ALLOWED_HOST = "allowed.localhost";
    private static final String UNLISTED_HOST = "unlisted.localhost";
    /** In the hosts file and resolved by curl itself: a name that resolves to loopback. */
    private static final String LOOPBACK_NAME = "localhost";
    private static final String CURL = "curl";

    private static final List<String> DENY_ALL_PROBES =
            List.of("the-hosts-loopback-is-unreachable", "a-dns-query-never-leaves-the-guest");
    private static final List<String> CLOSED_PROBES = List.of("only-loopback-is-present",
            "no-route-leaves-the-guest", "the-hosts-loopback-is-unreachable", "a-dns-query-never-leaves-the-guest");

    @TempDir
    Path temp;

    private LoopbackHttpServer allowed;
    private LoopbackHttpServer unlisted;
    private LoopbackHttpServer ipLiteral;
    private LoopbackHttpServer internal;

    @BeforeEach
    void startServers() {
        allowed = LoopbackHttpServer.start("allowed");
        unlisted = LoopbackHttpServer.start("unlisted");
        ipLiteral = LoopbackHttpServer.start("ip-literal");
        internal = LoopbackHttpServer.start("internal");
    }

    @AfterEach
    void stopServers() {
        for (LoopbackHttpServer server : List.of(allowed, unlisted, ipLiteral, internal)) {
            server.close();
        }
    }

    @Test
    void aClosedNamespacePassesEveryClosedProbe() {
        ConformanceTarget target = NamespaceShellTarget.create(temp, Isolation.NONE, EnumSet.of(Egress.CLOSED));

        ConformanceReport report = Conformance.run(target, EgressClosedSuite.suite()).assertPassed();

        assertThat(report.results()).extracting(ProbeResult::probe).containsExactlyElementsOf(CLOSED_PROBES);
        assertThat(report.skipped()).as("nothing skipped on a guest with curl, python3 and /proc").isEmpty();
    }

    @Test
    void aBackendSharingTheHostsNetworkFailsEveryClosedProbe() {
        ConformanceTarget target = NamespaceShellTarget.create(temp, Isolation.NONE, EnumSet.of(Egress.CLOSED),
                Flaw.SHARES_HOST_NETWORK);

        ConformanceReport report = Conformance.run(target, EgressClosedSuite.suite());

        for (String probe : CLOSED_PROBES) {
            assertThat(report.result(probe).failed()).as(probe + ": " + report.result(probe).detail()).isTrue();
        }
        assertThat(report.result("a-dns-query-never-leaves-the-guest").detail()).contains("reached the host's");
        assertThatThrownBy(report::assertPassed).isInstanceOf(ConformanceFailure.class);
    }

    @Test
    void aDenyAllNamespacePassesTheDenyAllProbesWithoutTheDeviceAndRouteChecks() {
        ConformanceTarget target = NamespaceShellTarget.create(temp, Isolation.NONE, EnumSet.of(Egress.DENY_ALL));

        ConformanceReport report = Conformance.run(target, EgressDenyAllSuite.suite()).assertPassed();

        assertThat(report.results()).extracting(ProbeResult::probe).containsExactlyElementsOf(DENY_ALL_PROBES);
        assertThat(report.skipped()).isEmpty();
    }

    @Test
    void aBackendSharingTheHostsNetworkFailsEveryDenyAllProbe() {
        ConformanceTarget target = NamespaceShellTarget.create(temp, Isolation.NONE, EnumSet.of(Egress.DENY_ALL),
                Flaw.SHARES_HOST_NETWORK);

        ConformanceReport report = Conformance.run(target, EgressDenyAllSuite.suite());

        assertThat(failed(report)).containsExactlyElementsOf(DENY_ALL_PROBES);
        assertThat(report.result("the-hosts-loopback-is-unreachable").detail()).contains("reached the host's");
    }

    @Test
    void theDenyAllAndClosedSuitesEachRefuseABackendDeclaringOnlyTheOther() {
        ConformanceTarget closedOnly = NamespaceShellTarget.create(temp, Isolation.NONE, EnumSet.of(Egress.CLOSED));
        assertThatThrownBy(() -> Conformance.run(closedOnly, EgressDenyAllSuite.suite()))
                .isInstanceOf(ConformanceRefused.class).hasMessageContaining("does not enforce egress deny-all");
        ConformanceTarget denyAllOnly = NamespaceShellTarget.create(temp, Isolation.NONE, EnumSet.of(Egress.DENY_ALL));
        assertThatThrownBy(() -> Conformance.run(denyAllOnly, EgressClosedSuite.suite()))
                .isInstanceOf(ConformanceRefused.class).hasMessageContaining("does not enforce egress closed");
    }

    @Test
    void aBackendClaimingAnAllowlistOnTheHostsNetworkPassesOnlyThePositiveControl() {
        ConformanceTarget target = withFixture(NamespaceShellTarget.create(temp, Isolation.NONE,
                EnumSet.of(Egress.ALLOWLIST), Flaw.SHARES_HOST_NETWORK), Map.of());

        ConformanceReport report = Conformance.run(target, EgressAllowlistSuite.suite());

        assertThat(report.result("an-allowed-host-is-reachable").passed()).isTrue();
        assertThat(failed(report)).containsExactlyInAnyOrder("an-unlisted-host-is-refused",
                "an-unlisted-ip-literal-is-refused", "internal-addresses-are-refused-even-by-name",
                "a-connect-tunnel-to-an-unlisted-host-is-refused", "ignoring-the-proxy-reaches-nothing-unlisted");
        // With no proxy, a Host header goes to the server the URL names: nothing smuggled, nothing to fail.
        assertThat(report.result("a-smuggled-host-header-is-refused").passed()).isTrue();
        assertThat(unlisted.requests()).as("the lying backend really reached the unlisted server").isPositive();
    }

    @Test
    void aProxyThatChecksTheUriButRoutesByHostAndTunnelsAnythingIsCaught() throws Exception {
        try (NaiveForwardProxy proxy = new NaiveForwardProxy(Set.of(ALLOWED_HOST))) {
            ConformanceTarget target = withFixture(NamespaceShellTarget.create(temp, Isolation.NONE,
                    EnumSet.of(Egress.ALLOWLIST), Flaw.SHARES_HOST_NETWORK), Map.of("http_proxy", proxy.url()));

            ConformanceReport report = Conformance.run(target, EgressAllowlistSuite.suite());

            // The proxy refuses plain requests to unlisted hosts...
            assertThat(report.result("an-unlisted-host-is-refused").passed()).isTrue();
            assertThat(report.result("an-unlisted-ip-literal-is-refused").passed()).isTrue();
            assertThat(report.result("internal-addresses-are-refused-even-by-name").passed()).isTrue();
            // ...but routes by the Host header, tunnels anything, and the guest can go around it.
            assertThat(failed(report)).containsExactlyInAnyOrder("a-smuggled-host-header-is-refused",
                    "a-connect-tunnel-to-an-unlisted-host-is-refused", "ignoring-the-proxy-reaches-nothing-unlisted");
        }
    }

    @Test
    void aClosedNamespaceClaimingAnAllowlistFailsThePositiveControl() {
        ConformanceTarget target = withFixture(NamespaceShellTarget.create(temp, Isolation.NONE,
                EnumSet.of(Egress.ALLOWLIST)), Map.of());

        ConformanceReport report = Conformance.run(target, EgressAllowlistSuite.suite());

        assertThat(report.result("an-allowed-host-is-reachable").failed()).isTrue();
        assertThat(report.passed()).as("every probe starts from the positive control").isEmpty();
        assertThat(allowed.requests() + unlisted.requests() + ipLiteral.requests() + internal.requests()).isZero();
    }

    @Test
    void theAllowlistSuiteRefusesABackendThatDoesNotEnforceItOrATargetWithoutAFixture() {
        ConformanceTarget closedOnly = withFixture(NamespaceShellTarget.create(temp, Isolation.NONE,
                EnumSet.of(Egress.CLOSED)), Map.of());
        assertThatThrownBy(() -> Conformance.run(closedOnly, EgressAllowlistSuite.suite()))
                .isInstanceOf(ConformanceRefused.class).hasMessageContaining("does not enforce egress allowlist");

        ConformanceTarget noFixture = NamespaceShellTarget.create(temp, Isolation.NONE, EnumSet.of(Egress.ALLOWLIST));
        assertThatThrownBy(() -> Conformance.run(noFixture, EgressAllowlistSuite.suite()))
                .isInstanceOf(ConformanceRefused.class).hasMessageContaining("EgressFixture");
    }

    @Test
    void theClosedSuiteRefusesABackendThatDoesNotDeclareClosed() {
        ConformanceTarget unrestricted = NamespaceShellTarget.create(temp, Flaw.SHARES_HOST_NETWORK);
        assertThatThrownBy(() -> Conformance.run(unrestricted, EgressClosedSuite.suite()))
                .isInstanceOf(ConformanceRefused.class).hasMessageContaining("does not enforce egress closed");
    }

    @Test
    void aBackendWhoseExecRunsNothingCannotPassTheClosedSuiteVacuously() {
        // The in-memory backend declares closed egress, but its exec answers every command with nothing.
        ConformanceTarget fake = () -> InMemoryBackend.builder().build();

        ConformanceReport report = Conformance.run(fake, EgressClosedSuite.suite());

        assertThat(report.passed()).as("every closed probe starts from a positive control").isEmpty();
        assertThat(report.result("only-loopback-is-present").detail()).contains("positive control");
    }

    @Test
    void everyEgressSuiteIsRegistered() {
        assertThat(Suites.all()).extracting(Suite::name).contains(EgressClosedSuite.NAME, EgressDenyAllSuite.NAME,
                EgressAllowlistSuite.NAME);
        assertThat(Suites.egressDenyAll().name()).isEqualTo("EGRESS_DENY_ALL");
        assertThat(Suites.egressClosed().name()).isEqualTo("EGRESS_CLOSED");
        assertThat(Suites.egressAllowlist().name()).isEqualTo("EGRESS_ALLOWLIST");
    }

    private EgressFixture fixture() {
        return new EgressFixture(List.of(ALLOWED_HOST), allowed.url(ALLOWED_HOST), unlisted.url(UNLISTED_HOST),
                ipLiteral.url(), List.of(internal.url(LOOPBACK_NAME)), Optional.of(CURL),
                LoopbackHttpServer.witness(List.of(allowed, unlisted, ipLiteral, internal)));
    }

    private static List<String> failed(ConformanceReport report) {
        return report.failures().stream().map(ProbeResult::probe).collect(Collectors.toList());
    }

    /** The target with this test's fixture, its guest given {@code guestEnvironment} on every exec. */
    private ConformanceTarget withFixture(NamespaceShellTarget target, Map<String, String> guestEnvironment) {
        EgressFixture fixture = fixture();
        return new ConformanceTarget() {
            @Override
            public SandboxBackend newBackend() {
                SandboxBackend backend = target.newBackend();
                return guestEnvironment.isEmpty() ? backend : new EnvironmentBackend(backend, guestEnvironment);
            }

            @Override
            public String workBase() {
                return target.workBase();
            }

            @Override
            public Optional<EgressFixture> egressFixture() {
                return Optional.of(fixture);
            }
        };
    }

    /** Gives every exec extra variables, as a backend that points its guest at a proxy does. */
    private static final class EnvironmentBackend extends ForwardingBackend {
        private final Map<String, String> variables;

        EnvironmentBackend(SandboxBackend backend, Map<String, String> variables) {
            super(backend);
            this.variables = variables;
        }

        @Override
        public String name() {
            return super.name() + "+proxy";
        }

        @Override
        public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
            return new ForwardingSandbox(super.acquire(key, spec)) {
                @Override
                public ExecResult exec(Command command, ExecOptions options) {
                    Map<String, String> environment = new LinkedHashMap<>(variables);
                    environment.putAll(options.environment());
                    return super.exec(command, options.withEnvironment(environment));
                }
            };
        }
    }
}
