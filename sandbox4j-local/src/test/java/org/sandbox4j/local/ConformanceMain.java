package org.sandbox4j.local;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.testkit.tck.Conformance;
import org.sandbox4j.testkit.tck.ConformanceReport;
import org.sandbox4j.testkit.tck.ConformanceTarget;
import org.sandbox4j.testkit.tck.ProbeResult;
import org.sandbox4j.testkit.tck.Suite;
import org.sandbox4j.testkit.tck.Suites;

/**
 * Runs every suite {@link BubblewrapBackend} and {@link ProcessBackend} declare in this JVM and
 * prints one line per probe, then {@code RESULT passed=N failed=N skipped=N}; exits 1 when a probe
 * failed or none ran.
 * {@link UnprivilegedConformanceTest} starts it as an unprivileged user.
 *
 * <p>Arguments: the state root to use (it must be writable by this user); optionally one suite's
 * name, to run that suite alone (when following up on one of its failures).
 */
public final class ConformanceMain {

    private ConformanceMain() {
    }

    public static void main(String[] args) {
        int passed = 0;
        int failed = 0;
        int skipped = 0;
        List<String> lines = new ArrayList<>();
        try (BubblewrapTarget bubblewrap = new BubblewrapTarget(Path.of(args[0], "bubblewrap"))) {
            lines.add("LIMITS " + ((BubblewrapBackend) bubblewrap.newBackend()).limitMechanism());
            List<ConformanceTarget> targets = List.of(bubblewrap,
                    new ProcessConformanceTest.ProcessTarget(Path.of(args[0], "process")));
            for (ConformanceTarget target : targets) {
              String backend = target.newBackend().name();
              BackendDeclarations declared = target.newBackend().declarations();
              for (Suite suite : Suites.all()) {
                if (args.length > 1 && !suite.name().equals(args[1])) {
                    continue;
                }
                if (suite.ineligibility(declared, target).isPresent()) {
                    lines.add("NOT-DECLARED " + backend + " " + suite.name());
                    continue;
                }
                ConformanceReport report = Conformance.run(target, suite);
                for (ProbeResult result : report.results()) {
                    String verdict = result.passed() ? "PASS" : result.failed() ? "FAIL" : "SKIP";
                    lines.add(verdict + " " + backend + " " + suite.name() + "/" + result.probe()
                            + (result.passed() ? "" : ": " + result.detail().replace('\n', ' ')));
                    if (result.passed()) {
                        passed++;
                    } else if (result.failed()) {
                        failed++;
                    } else {
                        skipped++;
                    }
                }
              }
            }
        } catch (RuntimeException e) {
            lines.add("ERROR " + e);
            failed++;
        }
        lines.forEach(System.out::println);
        System.out.println("RESULT passed=" + passed + " failed=" + failed + " skipped=" + skipped);
        System.out.flush();
        System.exit(failed == 0 && passed > 0 ? 0 : 1);
    }
}
