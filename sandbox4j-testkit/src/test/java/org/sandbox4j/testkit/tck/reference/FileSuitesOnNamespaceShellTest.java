package org.sandbox4j.testkit.tck.reference;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceReport;
import org.sandbox4j.testkit.tck.ProbeResult;
import org.sandbox4j.testkit.tck.Suite;
import org.sandbox4j.testkit.tck.Suites;
import org.sandbox4j.testkit.tck.reference.NamespaceShellBackend.Flaw;

/**
 * The FILES suites against the namespace reference backend, whose links really lead outside: a
 * correct instance passes every probe with none skipped, and one that follows links fails exactly
 * the linked-parent, linked-leaf, linked-working-directory and linked-ancestor probes.
 */
class FileSuitesOnNamespaceShellTest {

    /** What following links breaks, suite by suite: every other probe must still pass. */
    private static final Map<String, List<String>> FAILED_BY_FOLLOWING_LINKS = Map.of(
            "FILES_IN", List.of(
                    "a-path-through-a-linked-parent-is-refused",
                    "a-linked-destination-is-refused-not-followed",
                    "a-linked-working-directory",
                    "a-linked-ancestor-of-the-working-directory",
                    "mkdir-through-a-linked-parent-is-refused",
                    "mkdir-onto-a-link-is-refused"),
            "FILES_OUT", List.of(
                    "a-link-is-never-read",
                    "stat-through-a-linked-parent",
                    "read-through-a-linked-parent",
                    "a-linked-working-directory",
                    "a-linked-ancestor-of-the-working-directory"),
            // Skipping the walk also loses "not a directory" for a path below a plain file.
            "FILES_LIST", List.of(
                    "listing-a-linked-directory",
                    "listing-through-a-linked-parent",
                    "listing-under-a-linked-ancestor",
                    "listing-a-file-is-not-a-directory"),
            "FILES_DELETE", List.of(
                    "a-path-through-a-linked-parent-is-refused",
                    "a-linked-working-directory",
                    "a-linked-ancestor-of-the-working-directory"));

    /**
     * Without the walk, whether a path below a plain file reads as "not a directory" or as "nothing
     * there" is up to the JDK's error mapping (JDK 17 and 25 differ); either way the flaw is the cause.
     */
    private static final List<String> MAY_ALSO_FAIL_WITHOUT_THE_WALK = List.of("a-plain-parent-is-not-an-escape");

    @TempDir
    Path tempDir;

    @Test
    void aCorrectInstancePassesEveryFileProbeWithNoneSkipped() {
        NamespaceShellTarget target = NamespaceShellTarget.create(tempDir);
        for (Suite suite : Suites.files()) {
            ConformanceReport report = Conformance.run(target, suite).assertPassed();

            assertThat(report.skipped()).as(suite.name()).isEmpty();
            assertThat(report.passed()).as(suite.name()).hasSize(suite.probes().size());
        }
    }

    @Test
    void anInstanceThatFollowsLinksFailsTheLinkedPathProbesAndNothingElse() {
        NamespaceShellTarget target = NamespaceShellTarget.create(tempDir, Flaw.FOLLOWS_SYMLINKS);
        for (Suite suite : Suites.files()) {
            ConformanceReport report = Conformance.run(target, suite);

            List<String> expected = FAILED_BY_FOLLOWING_LINKS.get(suite.name());
            for (String probe : expected) {
                assertThat(report.result(probe).failed()).as(suite.name() + " " + probe).isTrue();
            }
            List<String> allowed = new ArrayList<>(expected);
            allowed.addAll(MAY_ALSO_FAIL_WITHOUT_THE_WALK);
            assertThat(report.failures()).as(suite.name()).extracting(ProbeResult::probe)
                    .containsAll(expected)
                    .allMatch(allowed::contains, "a probe this flaw attacks");
            assertThat(report.skipped()).as(suite.name()).isEmpty();
        }
    }

    /** The planted links still reach outside on the flawed instance: the failures are the backend's, not the fixtures'. */
    @Test
    void theFailuresComeFromTheBackendNotFromTheFixtures() {
        NamespaceShellTarget target = NamespaceShellTarget.create(tempDir, Flaw.FOLLOWS_SYMLINKS);
        ConformanceReport out = Conformance.run(target, Suites.filesOut());

        assertThat(out.result("read-through-a-linked-parent").detail()).contains("returned normally");
        assertThat(out.result("planted-links-lead-outside").passed()).isTrue();
    }
}
