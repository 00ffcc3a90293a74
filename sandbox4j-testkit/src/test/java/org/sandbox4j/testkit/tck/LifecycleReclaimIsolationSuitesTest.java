package org.sandbox4j.testkit.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.Capability;
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
    /** The ISOLATION probes a guest passes by holding no capabilities, boundary or not. */
    private static final List<String> CAPABILITY_PROBES = List.of(
            "the-guest-holds-no-capabilities",
            "the-guest-cannot-gain-privileges");
    private static final String OWN_KERNEL_PROBE = "a-hypervisor-guest-runs-its-own-kernel";

    @Test
    void anHonestBackendPassesEveryLifecycleProbe(@TempDir Path temp) {
        ConformanceReport report = Conformance.run(NamespaceShellTarget.create(temp), Suites.lifecycle());

        report.assertPassed();
        assertThat(report.skipped()).isEmpty();
        assertThat(report.passed()).hasSize(Suites.lifecycle().probes().size());
    }

    /**
     * A root JVM's guest is uid 65534, which cannot delete from a mode-500 directory: the refusal
     * probe runs and passes. Otherwise the guest is root in a user namespace, deletes it anyway,
     * and the probe is skipped and listed with its reason.
     */
    @Test
    void anHonestBackendPassesReclaimIncludingTheGuestRefusalWhereItCanBeProvoked(@TempDir Path temp) {
        NamespaceShellTarget target = NamespaceShellTarget.create(temp);
        ConformanceReport report = Conformance.run(target, Suites.reclaim());

        report.assertPassed();
        ProbeResult refusal = report.result("a-guest-refusal-is-a-reason");
        if (target.guestDropsToUnprivilegedUser()) {
            assertThat(refusal.passed()).as(refusal.detail()).isTrue();
            assertThat(report.skipped()).isEmpty();
            assertThat(report.passed()).hasSize(Suites.reclaim().probes().size());
        } else {
            assertThat(refusal.skipped()).as(refusal.detail()).isTrue();
            assertThat(refusal.detail()).contains("nothing in this guest can refuse a removal", "uid 0");
            assertThat(report.skipped()).containsExactly(refusal);
        }
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
     * Declares CONTAINER while its guest sees the host's file system. What it really has passes:
     * its PID namespace hides host processes; a root JVM's guest runs as uid 65534 with no
     * capabilities and no_new_privs (a user-namespace guest holds namespaced capabilities and fails
     * those two); and where the host gives it a pids group, that contains the fork bomb. The
     * file-system boundary it lacks fails, however unprivileged its guest: the sentinel is
     * world-readable and {@code /tmp} world-writable, so no file permission hides the lie. The fork
     * bomb is safe here: at most 4096 sleeps, killed with the PID namespace when the bomb's shell
     * exits.
     */
    @Test
    void aBackendLyingAboutTheContainerRungFailsTheFileSystemProbes(@TempDir Path temp) {
        NamespaceShellTarget lying = NamespaceShellTarget.create(temp, Isolation.CONTAINER, CLOSED);
        ConformanceReport report = Conformance.run(lying, Suites.isolation());

        List<String> expected = new ArrayList<>(List.of(
                "a-host-file-is-unreadable",
                "writes-outside-the-workspace-do-not-persist"));
        if (!lying.guestDropsToUnprivilegedUser()) {
            expected.addAll(CAPABILITY_PROBES);
        }
        if (!NamespaceShellTarget.processLimited()) {
            expected.add("a-fork-bomb-is-contained");
        }
        assertThat(names(report.failures())).containsExactlyInAnyOrderElementsOf(expected);
        // Below the hypervisor rungs the kernel probe has nothing to hold the backend to: listed, not run.
        assertThat(names(report.skipped())).containsExactly(OWN_KERNEL_PROBE);
        assertThat(report.result("a-host-file-is-unreadable").detail()).contains("the guest read the host file");
        assertThat(report.result("writes-outside-the-workspace-do-not-persist").detail())
                .contains("persisted into the next exec");
        assertThat(report.result("a-host-process-is-invisible").passed())
                .as(report.result("a-host-process-is-invisible").detail()).isTrue();
    }

    /**
     * The capability probes can fail: the same lie with a guest that keeps root, every capability
     * and no no_new_privs fails both. Only those two probes run against it, so this root guest
     * runs nothing but the suite's set-up in its own storage and reads of its own /proc/self.
     */
    @Test
    void aLyingBackendWhoseGuestRunsAsHostRootFailsTheCapabilityProbes(@TempDir Path temp) {
        NamespaceShellTarget root = NamespaceShellTarget.create(temp, Isolation.CONTAINER, CLOSED,
                Flaw.RUNS_AS_HOST_ROOT);
        Suite capabilityProbes = Suite.builder(IsolationSuite.NAME).gate(Capability.EXEC)
                .minimumRung(Isolation.CONTAINER)
                .probes(Suites.isolation().probes().stream().filter(probe -> CAPABILITY_PROBES.contains(probe.name()))
                        .toList())
                .build();

        ConformanceReport report = Conformance.run(root, capabilityProbes);

        assertThat(root.guestDropsToUnprivilegedUser()).isFalse();
        assertThat(names(report.failures())).containsExactlyInAnyOrderElementsOf(CAPABILITY_PROBES);
        assertThat(report.result("the-guest-holds-no-capabilities").detail()).contains("the guest holds capabilities");
        assertThat(report.result("the-guest-cannot-gain-privileges").detail()).contains("NoNewPrivs");
    }

    /** The kernel probe can fail: the same host-kernel guest, declared a microVM, fails it (and only it, of its own). */
    @Test
    void aBackendLyingAboutAHypervisorRungFailsTheOwnKernelProbe(@TempDir Path temp) {
        NamespaceShellTarget lying = NamespaceShellTarget.create(temp, Isolation.MICROVM, CLOSED);
        Suite kernelProbe = Suite.builder(IsolationSuite.NAME).gate(Capability.EXEC).minimumRung(Isolation.CONTAINER)
                .probes(Suites.isolation().probes().stream().filter(probe -> probe.name().equals(OWN_KERNEL_PROBE))
                        .toList())
                .build();

        ConformanceReport report = Conformance.run(lying, kernelProbe);

        assertThat(names(report.failures())).containsExactly(OWN_KERNEL_PROBE);
        assertThat(report.result(OWN_KERNEL_PROBE).detail()).contains("runs on the host's own kernel");
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
        assertThat(Suites.isolation().probes()).hasSize(7);
    }

    private static List<String> names(List<ProbeResult> results) {
        return results.stream().map(ProbeResult::probe).toList();
    }
}
