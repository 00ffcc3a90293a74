package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceReport;
import org.sandbox4j.testkit.tck.FilesListSuite;
import org.sandbox4j.testkit.tck.ProbeResult;
import org.sandbox4j.testkit.tck.Suite;
import org.sandbox4j.testkit.tck.Suites;

/**
 * The conformance suites the in-memory backend can honestly pass, run against it. This proves
 * <b>shape only</b>: the in-memory sandbox has no boundary, runs no commands and its links lead
 * nowhere, so it is run against the file suites alone, and the probes that need a link that
 * really reaches outside are skipped with that reason rather than faked. Its target says it models
 * shape only, so every other suite is listed as not run, with that reason. Escapes are proved
 * against a real backend (the TCK's own tests use the namespace reference backend).
 */
class InMemoryConformanceTest {

    /** The one probe per file suite that needs a link with a real target. */
    private static final String NEEDS_A_REAL_LINK = "planted-links-lead-outside";
    private static final String NEEDS_A_MODE_AND_TIME = "entries-carry-the-mode-and-time-the-guest-set";

    private static List<Suite> honestlyPassable() {
        return Suites.files();
    }

    @TestFactory
    Stream<DynamicNode> everySuiteItIsEligibleFor() {
        return Conformance.declaredTests(InMemoryConformanceTarget.create(), Suites.all());
    }

    @Test
    void itIsEligibleForTheFileSuitesAloneAndSaysWhyNotForTheRest() {
        InMemoryConformanceTarget target = InMemoryConformanceTarget.create();
        BackendDeclarations declared = target.newBackend().declarations();
        for (Suite suite : Suites.all()) {
            if (honestlyPassable().stream().anyMatch(files -> files.name().equals(suite.name()))) {
                assertThat(suite.ineligibility(declared, target)).as(suite.name()).isEmpty();
            } else {
                assertThat(suite.ineligibility(declared, target)).as(suite.name())
                        .hasValueSatisfying(reason -> assertThat(reason).contains("models shape only"));
            }
        }
    }

    @Test
    void everyProbeThatNeedsNoRealLinkPassesAndTheOthersAreSkippedWithTheReason() {
        for (Suite suite : honestlyPassable()) {
            ConformanceReport report = Conformance.run(InMemoryConformanceTarget.create(), suite).assertPassed();

            // It keeps no mode or time to stamp: the listing's mode-and-time probe is skipped, saying so.
            List<String> skipped = suite.name().equals(FilesListSuite.NAME)
                    ? List.of(NEEDS_A_MODE_AND_TIME, NEEDS_A_REAL_LINK) : List.of(NEEDS_A_REAL_LINK);
            assertThat(report.results()).as(suite.name()).hasSize(suite.probes().size());
            assertThat(report.skipped()).as(suite.name()).extracting(ProbeResult::probe)
                    .containsExactlyElementsOf(skipped);
            assertThat(report.result(NEEDS_A_REAL_LINK).detail()).as(suite.name())
                    .contains("links lead nowhere");
            if (skipped.contains(NEEDS_A_MODE_AND_TIME)) {
                assertThat(report.result(NEEDS_A_MODE_AND_TIME).detail()).contains("cannot set a mode and a time");
            }
            assertThat(report.passed()).as(suite.name()).hasSize(suite.probes().size() - skipped.size());
        }
    }
}
