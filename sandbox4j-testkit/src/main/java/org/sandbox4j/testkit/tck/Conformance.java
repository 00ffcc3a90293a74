package org.sandbox4j.testkit.tck;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.opentest4j.TestAbortedException;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.testkit.tck.ProbeResult.Outcome;

/**
 * Runs suites against a backend. Each suite run takes a fresh backend instance from the target,
 * acquires one sandbox under a fresh key, makes its own working directory under
 * {@link ConformanceTarget#workBase()}, plants the suite's layout, runs every probe (even after
 * failures), and disposes of the sandbox however the run ended.
 *
 * <p>In a JUnit 5 test, return {@link #tests} or {@link #declaredTests} from a
 * {@code @TestFactory}, or extend {@link ConformanceTestSuite}.
 */
public final class Conformance {

    /** The kind of every sandbox the TCK acquires. */
    public static final String KIND = "conformance";

    /** The scope of every key the TCK makes; the thread id is fresh per suite run. */
    public static final String SCOPE = "sandbox4j-tck";

    private Conformance() {
    }

    /**
     * Runs {@code suite} and returns every result, with the verdict left to the caller
     * ({@link ConformanceReport#assertPassed()}).
     *
     * @throws ConformanceRefused the backend lacks the suite's gate, rung or fixture, or no probe ran
     * @throws ConformanceFailure the suite's sandbox could not be acquired or its layout planted
     */
    public static ConformanceReport run(ConformanceTarget target, Suite suite) {
        return execute(target, suite, false);
    }

    /**
     * Runs {@code suite} without its gate and without a verdict: for a backend that implements a
     * method it does not (yet) declare. Probes still skip when their own extra requirements are
     * undeclared.
     */
    public static ConformanceReport measure(ConformanceTarget target, Suite suite) {
        return execute(target, suite, true);
    }

    /**
     * One dynamic container per suite, one dynamic test per probe. A suite the backend cannot be
     * tested by fails with the reason: ask only for suites it declares, or use {@link #declaredTests}.
     */
    public static Stream<DynamicNode> tests(ConformanceTarget target, List<Suite> suites) {
        return suites.stream().map(suite -> DynamicContainer.dynamicContainer(suite.name(),
                Stream.of(suite).flatMap(s -> probeTests(target, s))));
    }

    /**
     * Every suite in {@code suites} the backend can be tested by, each as in {@link #tests}; the
     * others are listed as skipped containers saying why, never hidden.
     */
    public static Stream<DynamicNode> declaredTests(ConformanceTarget target, List<Suite> suites) {
        BackendDeclarations declared = target.newBackend().declarations();
        return suites.stream().map(suite -> {
            Optional<String> ineligible = suite.ineligibility(declared, target);
            if (ineligible.isPresent()) {
                return DynamicContainer.dynamicContainer(suite.name(), Stream.of(DynamicTest.dynamicTest(
                        suite.name() + " not run", () -> Assumptions.abort(ineligible.get()))));
            }
            return DynamicContainer.dynamicContainer(suite.name(), Stream.of(suite).flatMap(s -> probeTests(target, s)));
        });
    }

    private static Stream<DynamicNode> probeTests(ConformanceTarget target, Suite suite) {
        ConformanceReport report;
        try {
            report = run(target, suite);
        } catch (ConformanceRefused refused) {
            return Stream.of(DynamicTest.dynamicTest(suite.name() + " refused", () -> {
                throw refused;
            }));
        }
        return report.results().stream().map(result -> DynamicTest.dynamicTest(result.probe(), () -> {
            if (result.failed()) {
                throw new ConformanceFailure(result.probe() + ": " + result.detail() + "\n(" + result.why() + ")");
            }
            if (result.skipped()) {
                Assumptions.abort(result.detail());
            }
        }));
    }

    private static ConformanceReport execute(ConformanceTarget target, Suite suite, boolean measured) {
        SandboxBackend backend = target.newBackend();
        BackendDeclarations declared = backend.declarations();
        if (!measured) {
            Optional<String> ineligible = suite.ineligibility(declared, target);
            if (ineligible.isPresent()) {
                throw new ConformanceRefused(ineligible.get() + " (backend '" + backend.name()
                        + "'); a suite that skipped everything would pass without testing anything");
            }
        }
        String runId = UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        SandboxKey key = new SandboxKey(SCOPE, "tck-" + runId, KIND);
        String requestedWorkDir = target.workBase() + "/" + suite.name().toLowerCase(Locale.ROOT).replace('_', '-')
                + "-" + runId;
        Set<Capability> requires = EnumSet.copyOf(Capability.DEFAULT_CAPABILITIES);
        requires.addAll(suite.gate());
        SandboxSpec spec = target.spec(suite.shape().shape(
                SandboxSpec.builder(KIND).workDir(requestedWorkDir).requires(requires), target));
        List<ProbeResult> results = new ArrayList<>();
        try {
            Sandbox sandbox = backend.acquire(key, spec);
            // The spec's work dir, unless the backend relocates it (an os_process backend must).
            String workingDirectory = spec.workDirIn(sandbox);
            GuestSide guest = target.guestSide(sandbox);
            guest.plantDirectory(workingDirectory);
            ProbeContext context =
                    new ProbeContext(target, backend, declared, key, spec, sandbox, workingDirectory, guest);
            suite.setup().plant(context);
            for (Probe probe : suite.probes()) {
                results.add(runProbe(suite, probe, context));
            }
        } catch (Exception | AssertionError setupFailure) {
            ConformanceFailure failure = new ConformanceFailure("the " + suite.name() + " suite could not acquire or "
                    + "set up its sandbox on backend '" + backend.name() + "': " + ErrorDetail.of(setupFailure));
            failure.initCause(setupFailure);
            throw failure;
        } finally {
            ProbeSandboxes.disposeQuietly(backend, key, "a conformance sandbox");
        }
        long ran = results.stream().filter(r -> !r.skipped()).count();
        if (ran == 0 && !measured) {
            throw new ConformanceRefused("every probe of " + suite.name() + " was skipped for backend '"
                    + backend.name() + "': " + results.stream().map(ProbeResult::detail).distinct()
                            .collect(Collectors.joining("; ")));
        }
        return new ConformanceReport(suite.name(), backend.name(), measured, results);
    }

    private static ProbeResult runProbe(Suite suite, Probe probe, ProbeContext context) {
        Set<Capability> missing = EnumSet.noneOf(Capability.class);
        missing.addAll(probe.requires());
        missing.removeAll(context.capabilities());
        if (!missing.isEmpty()) {
            return result(suite, probe, Outcome.SKIPPED, "backend does not declare " + missing.stream()
                    .map(Capability::wire).sorted().collect(Collectors.joining(", ")));
        }
        try {
            probe.body().run(context);
            return result(suite, probe, Outcome.PASSED, "");
        } catch (TestAbortedException aborted) {
            return result(suite, probe, Outcome.SKIPPED, String.valueOf(aborted.getMessage()));
        } catch (AssertionError failure) {
            return result(suite, probe, Outcome.FAILED, String.valueOf(failure.getMessage()));
        } catch (Throwable raised) {
            return result(suite, probe, Outcome.FAILED, "raised " + ErrorDetail.of(raised));
        }
    }

    private static ProbeResult result(Suite suite, Probe probe, Outcome outcome, String detail) {
        return new ProbeResult(suite.name(), probe.name(), probe.why(), outcome, detail);
    }
}
