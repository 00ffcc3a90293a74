package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Capability;
import org.sandbox4j.testkit.FlawedInMemoryTarget.Flaw;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceFailure;
import org.sandbox4j.testkit.tck.ConformanceRefused;
import org.sandbox4j.testkit.tck.ConformanceReport;
import org.sandbox4j.testkit.tck.ProbeResult;
import org.sandbox4j.testkit.tck.Suite;
import org.sandbox4j.testkit.tck.Suites;

/**
 * The file probes fail a sandbox with the matching shape flaw (and only the matching probes), and
 * measure-only mode runs FILES_DELETE for a backend that implements {@code remove} without
 * declaring it.
 */
class FileSuitesCanFailTest {

    private static final Set<Capability> WITHOUT_FILES_DELETE =
            Set.of(Capability.EXEC, Capability.FILES_IN, Capability.FILES_OUT, Capability.FILES_LIST);
    private static final String NEEDS_A_REAL_LINK = "planted-links-lead-outside";

    @Test
    void aReadTruncatedToItsCapFailsTheCapProbe() {
        assertFailsExactly(Flaw.TRUNCATES_OVER_THE_CAP, Suites.filesOut(),
                "a-read-over-the-cap-is-refused-not-truncated");
    }

    @Test
    void anAppendingWriteFailsTheReplaceProbe() {
        assertFailsExactly(Flaw.APPENDS, Suites.filesIn(), "a-second-write-replaces");
    }

    @Test
    void anUnsortedListingFailsTheOrderProbesAndTheControlsThatCompareWholeListings() {
        ConformanceReport report = Conformance.run(new FlawedInMemoryTarget(Flaw.LISTS_UNSORTED), Suites.filesList());

        assertThat(report.result("a-listing-is-sorted-by-name").failed()).isTrue();
        assertThat(report.result("a-listing-lists-each-child-once").passed()).isTrue();
        assertThat(report.result("a-listing-agrees-with-stat").passed()).isTrue();
    }

    @Test
    void aListingThatHidesLinksFailsTheLinkProbes() {
        ConformanceReport report = Conformance.run(new FlawedInMemoryTarget(Flaw.HIDES_LINKS_FROM_LISTINGS),
                Suites.filesList());

        assertThat(report.result("a-listing-names-its-links").failed()).isTrue();
        assertThat(report.result("a-listing-lists-each-child-once").failed()).isTrue();
        assertThat(report.result("an-empty-directory-lists-nothing").failed()).isTrue();
        assertThatThrownBy(report::assertPassed).isInstanceOf(ConformanceFailure.class)
                .hasMessageContaining("a-listing-names-its-links")
                .hasMessageContaining("links are listed as links");
    }

    @Test
    void removingADirectoryWithoutRecursiveFailsTheRecursiveProbes() {
        assertFailsExactly(Flaw.REMOVES_DIRECTORIES_WITHOUT_RECURSIVE, Suites.filesDelete(),
                "a-directory-needs-recursive", "an-empty-directory-needs-recursive");
    }

    @Test
    void measureOnlyRunsFilesDeleteForABackendThatImplementsRemoveWithoutDeclaringIt() {
        InMemoryConformanceTarget undeclared = InMemoryConformanceTarget.declaring(WITHOUT_FILES_DELETE);

        assertThatThrownBy(() -> Conformance.run(undeclared, Suites.filesDelete()))
                .isInstanceOf(ConformanceRefused.class).hasMessageContaining("files_delete");

        ConformanceReport measured = Conformance.measure(undeclared, Suites.filesDelete());
        assertThat(measured.measured()).isTrue();
        assertThat(measured.results()).extracting(ProbeResult::probe)
                .containsExactlyElementsOf(Suites.filesDelete().probes().stream().map(p -> p.name()).toList());
        assertThat(measured.failures()).isEmpty();
        assertThat(measured.skipped()).extracting(ProbeResult::probe).containsExactly(NEEDS_A_REAL_LINK);
    }

    @Test
    void measureOnlyReportsEachFailureWithoutAVerdictWhenRemoveIsMissing() {
        ConformanceReport measured = Conformance.measure(
                new FlawedInMemoryTarget(Flaw.NO_REMOVE, WITHOUT_FILES_DELETE), Suites.filesDelete());

        assertThat(measured.measured()).isTrue();
        assertThat(measured.failures()).hasSize(Suites.filesDelete().probes().size() - 1);
        assertThat(measured.result("a-removal-removes").detail()).contains("SandboxOperationNotSupported");
        assertThat(measured.result(NEEDS_A_REAL_LINK).skipped()).isTrue();
    }

    /** The flaw fails exactly the named probes; every other probe still passes or is skipped as on a sound sandbox. */
    private static void assertFailsExactly(Flaw flaw, Suite suite, String... probes) {
        ConformanceReport report = Conformance.run(new FlawedInMemoryTarget(flaw), suite);
        assertThat(report.failures()).extracting(ProbeResult::probe).containsExactlyInAnyOrder(probes);
        assertThat(report.skipped()).extracting(ProbeResult::probe).isEqualTo(List.of(NEEDS_A_REAL_LINK));
    }
}
