package org.sandbox4j.testkit.tck.reference;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceReport;
import org.sandbox4j.testkit.tck.InteractiveSuite;
import org.sandbox4j.testkit.tck.ProbeResult;
import org.sandbox4j.testkit.tck.Suite;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.ForwardingBackend;
import org.sandbox4j.testkit.ForwardingSandbox;
import org.sandbox4j.testkit.tck.reference.NamespaceShellBackend.Flaw;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.ProcessOptions;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxOperationNotSupported;
import org.sandbox4j.core.SandboxProcess;
import org.sandbox4j.core.SandboxSpec;

/**
 * The INTERACTIVE_EXEC suites against the reference backend: the correct instance passes every probe,
 * each start flaw fails the probe that attacks it, and a start that runs without its declaration is reported.
 */
class InteractiveSuiteTest {

    private static final String ECHO_PROBE = "a-started-process-echoes-while-it-runs";
    private static final String BOUND_PROBE = "unread-output-is-bounded-and-stalls-the-guest";
    private static final String DECLARATION_PROBE = "an-undeclared-start-is-refused";

    @TempDir
    Path base;

    /** The suite with only {@code names}: the flaw tests stay short. */
    private static Suite only(String... names) {
        Set<String> kept = Set.of(names);
        return Suite.builder(InteractiveSuite.NAME).gate(Capability.EXEC, Capability.INTERACTIVE_EXEC)
                .probes(InteractiveSuite.suite().probes().stream().filter(probe -> kept.contains(probe.name()))
                        .toList())
                .build();
    }

    /** The target's backend without the interactive_exec declaration; its start refused too when {@code refuses}. */
    private static ConformanceTarget undeclaring(NamespaceShellTarget real, boolean refuses) {
        return new ConformanceTarget() {
            @Override
            public SandboxBackend newBackend() {
                SandboxBackend backend = real.newBackend();
                BackendDeclarations declared = backend.declarations();
                Set<Capability> kept = EnumSet.copyOf(declared.capabilities());
                kept.remove(Capability.INTERACTIVE_EXEC);
                BackendDeclarations fewer = BackendDeclarations.builder(declared.isolation()).capabilities(kept)
                        .egressModes(declared.egressModes()).osFamilies(declared.osFamilies()).limits(declared.limits())
                        .build();
                return new ForwardingBackend(backend) {
                    @Override
                    public BackendDeclarations declarations() {
                        return fewer;
                    }

                    @Override
                    public Sandbox acquire(SandboxKey key, SandboxSpec spec) {
                        Sandbox sandbox = backend.acquire(key, spec);
                        return !refuses ? sandbox : new ForwardingSandbox(sandbox) {
                            @Override
                            public SandboxProcess start(Command command, ProcessOptions options) {
                                throw new SandboxOperationNotSupported("this backend does not declare "
                                        + Capability.INTERACTIVE_EXEC.wire());
                            }
                        };
                    }
                };
            }

            @Override
            public String workBase() {
                return real.workBase();
            }
        };
    }

    @AfterEach
    void killEscapedChildren() throws IOException {
        // Every guest command line of a run names its working directory, which lies under base.
        ProcessCleanup.killProcessesMentioning(base.toRealPath().toString());
    }

    @Test
    void theCorrectBackendPassesEveryProbe() {
        ConformanceReport report = Conformance.run(NamespaceShellTarget.create(base), InteractiveSuite.suite());

        report.assertPassed();
        assertThat(report.skipped()).isEmpty();
        assertThat(report.passed()).hasSameSizeAs(InteractiveSuite.suite().probes());
    }

    @Test
    void replayingAnExecFailsTheEchoProbe() {
        ConformanceReport report = Conformance.run(NamespaceShellTarget.create(base, Flaw.REPLAYS_EXEC),
                only(ECHO_PROBE, "closing-stdin-is-end-of-input"));

        assertThat(report.failures()).extracting(ProbeResult::probe).containsExactly(ECHO_PROBE);
        assertThat(report.result(ECHO_PROBE).detail()).contains("while its stdin was open");
    }

    @Test
    void bufferingWithoutBoundFailsTheBoundProbe() {
        ConformanceReport report = Conformance.run(NamespaceShellTarget.create(base, Flaw.BUFFERS_WITHOUT_BOUND),
                only(BOUND_PROBE, ECHO_PROBE));

        assertThat(report.failures()).extracting(ProbeResult::probe).containsExactly(BOUND_PROBE);
        assertThat(report.result(BOUND_PROBE).detail()).contains("buffered without bound");
    }

    @Test
    void killingOnlyTheDirectChildFailsTheSurvivalProbes() {
        List<String> survival = List.of("a-killed-handle-leaves-no-process", "the-lifetime-kills-the-whole-tree");
        ConformanceReport report = Conformance.run(NamespaceShellTarget.create(base, Flaw.KILLS_ONLY_DIRECT_CHILD),
                only(survival.toArray(String[]::new)));

        assertThat(report.failures()).extracting(ProbeResult::probe).containsExactlyInAnyOrderElementsOf(survival);
        assertThat(report.result(survival.get(0)).detail()).contains("after kill");
        assertThat(report.result(survival.get(1)).detail()).contains("lived on and wrote their markers");
    }

    @Test
    void aStartThatRunsWithoutTheDeclarationFailsTheDeclarationProbe() {
        ConformanceReport report = Conformance.run(undeclaring(NamespaceShellTarget.create(base), false),
                InteractiveSuite.declarationSuite());

        assertThat(report.failures()).extracting(ProbeResult::probe).containsExactly(DECLARATION_PROBE);
        assertThat(report.result(DECLARATION_PROBE).detail()).contains("SandboxOperationNotSupported");
    }

    @Test
    void aStartRefusedWithoutTheDeclarationPassesTheDeclarationProbe() {
        ConformanceReport report = Conformance.run(undeclaring(NamespaceShellTarget.create(base), true),
                InteractiveSuite.declarationSuite());

        report.assertPassed();
        assertThat(report.passed()).extracting(ProbeResult::probe).containsExactly(DECLARATION_PROBE);
    }

    @Test
    void theCorrectBackendStartsWhatItDeclares() {
        ConformanceReport report = Conformance.run(NamespaceShellTarget.create(base),
                InteractiveSuite.declarationSuite());

        report.assertPassed();
        assertThat(report.passed()).hasSameSizeAs(InteractiveSuite.declarationSuite().probes());
    }
}
