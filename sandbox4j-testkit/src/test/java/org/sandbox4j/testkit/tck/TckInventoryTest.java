package org.sandbox4j.testkit.tck;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The TCK's inventory: enough probes, stable names, every suite and probe documented in TCK.md. */
class TckInventoryTest {

    private static final int MINIMUM_PROBES = 70;
    private static final Pattern STABLE_NAME = Pattern.compile("[a-z0-9]+(-[a-z0-9]+)*");
    private static final Pattern SUITE_NAME = Pattern.compile("[A-Z]+(_[A-Z]+)*");
    private static final Path DOCS = Path.of("TCK.md");

    @Test
    void thereAreEnoughProbesWithStableNames() {
        int probes = 0;
        Set<String> suites = new HashSet<>();
        for (Suite suite : Suites.all()) {
            assertThat(suite.name()).matches(SUITE_NAME);
            assertThat(suites.add(suite.name())).as("suite names are unique: " + suite.name()).isTrue();
            for (Probe probe : suite.probes()) {
                assertThat(probe.name()).as(suite.name()).matches(STABLE_NAME);
                assertThat(probe.why()).as(suite.name() + "/" + probe.name()).isNotBlank();
            }
            probes += suite.probes().size();
        }
        assertThat(probes).isGreaterThanOrEqualTo(MINIMUM_PROBES);
    }

    @Test
    void theExecSuiteRunsLast() {
        List<Suite> all = Suites.all();
        assertThat(all.get(all.size() - 1).name()).isEqualTo(Suites.exec().name());
    }

    @Test
    void everySuiteAndProbeIsDocumented() throws IOException {
        String docs = Files.readString(DOCS);
        List<String> undocumented = new ArrayList<>();
        for (Suite suite : Suites.all()) {
            if (!docs.contains(suite.name())) {
                undocumented.add(suite.name());
            }
            for (Probe probe : suite.probes()) {
                if (!docs.contains("`" + probe.name() + "`")) {
                    undocumented.add(suite.name() + "/" + probe.name());
                }
            }
        }
        assertThat(undocumented).as("suites and probes missing from TCK.md").isEmpty();
    }
}
