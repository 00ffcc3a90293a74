package org.sandbox4j.testkit.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.testkit.tck.reference.NamespaceShellBackend.Flaw;
import org.sandbox4j.testkit.tck.reference.NamespaceShellTarget;

/**
 * LIFECYCLE, RECLAIM and ISOLATION against the namespace reference backend: an honest instance
 * passes the first two, and each deliberately broken or lying instance fails exactly the probes
 * that should catch it, which proves those probes can fail.
 */
class LifecycleReclaimIsolationSuitesTest {

    private static final Set<Egress> CLOSED = EnumSet.of(Egress.CLOSED);

    @Test
    void anHonestBackendPassesEveryLifecycleProbe(@TempDir Path temp) {
        ConformanceReport report = Conformance.run(NamespaceShellTarget.create(temp), Suites.lifecycle());

        report.assertPassed();
        assertThat(report.skipped()).isEmpty();
        assertThat(report.passed()).hasSize(Suites.lifecycle().probes().size());
    }

    @Test
    void anHonestBackendPassesReclaimAndListsTheRefusalItCannotProvoke(@TempDir Path temp) {
        ConformanceReport report = Conformance.run(NamespaceShellTarget.create(temp), Suites.reclaim());

        report.assertPassed();
        // The reference guest is uid 0 (on the host, or mapped in a user namespace): nothing refuses a removal.
        ProbeResult refusal = report.result("a-guest-refusal-is-a-reason");
        assertThat(refusal.skipped()).as(refusal.detail()).isTrue();
        assertThat(refusal.detail()).contains("nothing in this guest can refuse a removal", "uid 0");
        assertThat(report.skipped()).containsExactly(refusal);
    }

    @Test
    void aBackendThatDisposesFromMemoryFailsTheSecondInstanceProbe(@TempDir Path temp) {
        ConformanceReport report = Conformance.run(
                NamespaceShellTarget.create(temp, Flaw.REMEMBERS_IN_MEMORY_ONLY), Suites.lifecycle());

        assertThat(report.result("dispose-scope-from-another-instance").failed()).isTrue();
        assertThat(report.result("dispose-scope-from-another-instance").detail())
                .contains("does not answer from the provider's own record");
        assertThat(names(report.failures())).containsExactly("dispose-scope-from-another-instance");
        assertThatThrownBy(report::assertPassed).isInstanceOf(ConformanceFailure.class)
                .hasMessageContaining("dispose-scope-from-another-instance");
    }

    @Test
    void aBackendServingTwoKindsFromOneSandboxFailsTheKindProbe(@TempDir Path temp) {
        ConformanceReport report = Conformance.run(BrokenTargets.ignoringKind(NamespaceShellTarget.create(temp)),
                Suites.lifecycle());

        assertThat(report.result("another-kind-gets-another-sandbox").detail()).contains("they are one sandbox");
        assertThat(names(report.failures())).contains("another-kind-gets-another-sandbox");
    }

    @Test
    void aBackendSharingOneSandboxAcrossConversationsFailsTheConversationProbe(@TempDir Path temp) {
        ConformanceReport report = Conformance.run(
                BrokenTargets.ignoringConversation(NamespaceShellTarget.create(temp)), Suites.lifecycle());

        assertThat(report.result("another-conversation-gets-another-sandbox").detail())
                .contains("they are one sandbox");
        assertThat(names(report.failures())).contains("another-conversation-gets-another-sandbox");
    }

    @Test
    void aBackendWhoseDisposeDoesNothingFailsTheDisposeProbe(@TempDir Path temp) {
        ConformanceReport report = Conformance.run(BrokenTargets.ignoringDispose(NamespaceShellTarget.create(temp)),
                Suites.lifecycle());

        assertThat(names(report.failures())).containsExactly("dispose-removes-the-sandbox");
        assertThat(report.result("dispose-removes-the-sandbox").detail()).contains("the sandbox was not removed");
    }

    @Test
    void anHonestBackendBelowTheContainerRungIsRefusedTheIsolationSuite(@TempDir Path temp) {
        assertThatThrownBy(() -> Conformance.run(NamespaceShellTarget.create(temp), Suites.isolation()))
                .isInstanceOf(ConformanceRefused.class)
                .hasMessageContaining("ISOLATION").hasMessageContaining("below 'container'");
    }

    /**
     * Declares CONTAINER while its guest sees the host's file system, runs with the host user's
     * capabilities and has no process limit. Its PID namespace is real, so the process probe passes:
     * the suite catches the lie without inventing one. The fork bomb is safe here: at most 4096
     * sleeps, killed with the PID namespace when the bomb's shell exits.
     */
    @Test
    void aBackendLyingAboutTheContainerRungFailsTheIsolationProbes(@TempDir Path temp) {
        ConformanceReport report = Conformance.run(
                NamespaceShellTarget.create(temp, Isolation.CONTAINER, CLOSED), Suites.isolation());

        assertThat(names(report.failures())).containsExactlyInAnyOrder(
                "a-host-file-is-unreadable",
                "the-guest-holds-no-capabilities",
                "the-guest-cannot-gain-privileges",
                "writes-outside-the-workspace-do-not-persist",
                "a-fork-bomb-is-contained");
        assertThat(report.result("a-host-file-is-unreadable").detail()).contains("the guest read the host file");
        assertThat(report.result("writes-outside-the-workspace-do-not-persist").detail())
                .contains("persisted into the next exec");
        assertThat(report.result("a-fork-bomb-is-contained").detail()).contains("no process limit");
        assertThat(report.result("a-host-process-is-invisible").passed())
                .as(report.result("a-host-process-is-invisible").detail()).isTrue();
    }

    @Test
    void everySuiteHereIsRegisteredWithStableUniqueNames() {
        assertThat(Suites.all()).extracting(Suite::name).contains("LIFECYCLE", "RECLAIM", "ISOLATION");
        for (Suite suite : List.of(Suites.lifecycle(), Suites.reclaim(), Suites.isolation())) {
            assertThat(suite.probes()).allSatisfy(probe -> {
                assertThat(probe.name()).matches("[a-z0-9]+(-[a-z0-9]+)*");
                assertThat(probe.why()).isNotBlank();
            });
        }
        assertThat(Suites.lifecycle().probes()).hasSize(6);
        assertThat(Suites.reclaim().probes()).hasSize(15);
        assertThat(Suites.isolation().probes()).hasSize(6);
    }

    private static List<String> names(List<ProbeResult> results) {
        return results.stream().map(ProbeResult::probe).toList();
    }
}
