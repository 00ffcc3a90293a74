package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The whole TCK against {@link BubblewrapBackend} and {@link ProcessBackend} as an unprivileged
 * user: a child JVM run as a uid no other process on the machine uses ({@link UnprivilegedJvm}).
 * Unprivileged, the backend has no writable cgroup here, so this also proves the rlimit fallback
 * contains a fork bomb. Runs when the build runs as root (CI does); a build that is not root
 * already ran {@link BubblewrapConformanceTest} unprivileged.
 */
class UnprivilegedConformanceTest {

    private static final Duration CHILD_BOUND = Duration.ofMinutes(15);

    private UnprivilegedJvm jvm;

    @AfterEach
    void cleanUp() {
        if (jvm != null) {
            jvm.close();
        }
    }

    @Test
    void everyDeclaredSuitePassesForAnUnprivilegedUser() throws Exception {
        assumeTrue(HostUser.current().isRoot(), "the build is not root: BubblewrapConformanceTest already ran the "
                + "TCK unprivileged");
        jvm = UnprivilegedJvm.forFreshUser();

        UnprivilegedJvm.Outcome run = jvm.run(ConformanceMain.class, List.of(jvm.home().resolve("r").toString()),
                CHILD_BOUND);

        String printed = run.printed();
        assertThat(printed).as("the unprivileged run").containsPattern("(?m)^LIMITS RLIMIT$");
        assertThat(run.exitCode()).as("exit of the unprivileged TCK run:%n%s", printed).isZero();
        assertThat(printed).contains("PASS bubblewrap ISOLATION/a-fork-bomb-is-contained",
                "PASS bubblewrap EGRESS_ALLOWLIST/", "PASS bubblewrap EXEC/", "PASS bubblewrap LIFECYCLE/",
                "PASS process EXEC/a-timeout-kills-the-whole-tree", "PASS process LIFECYCLE/",
                "PASS process RECLAIM/a-guest-refusal-is-a-reason", "PASS bubblewrap HOSTILE/a-fifo-swapped-in-never-"
                        + "blocks-the-host", "PASS bubblewrap HOSTILE/a-disk-bomb-is-stopped-at-the-bound",
                "PASS bubblewrap HOSTILE/a-disposal-during-an-exec-stops-it-and-follows-no-link")
                .doesNotContain("FAIL ");
        // Only what cannot apply is skipped: to an os_process guest (the host's own user, on its file system), and
        // to bubblewrap the hypervisor rungs' own-kernel probe (a container shares the host's kernel).
        assertThat(printed.lines().filter(line -> line.startsWith("SKIP ")).map(line -> line.substring(0,
                line.indexOf(':'))).toList()).containsExactlyInAnyOrder(
                        "SKIP bubblewrap ISOLATION/a-hypervisor-guest-runs-its-own-kernel",
                        "SKIP process HOSTILE/a-fifo-swapped-in-never-blocks-the-host",
                        "SKIP process HOSTILE/a-disk-bomb-is-stopped-at-the-bound");
    }
}
