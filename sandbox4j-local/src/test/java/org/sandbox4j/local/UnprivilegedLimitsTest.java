package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/**
 * The rlimit fallback bounds processes per exec, whatever else the user runs
 * ({@link LimitScenariosMain}, in a child JVM as a uid of its own): a user who already runs
 * several hundred tasks still starts sandboxes, and two sandboxes of one user do not starve each
 * other. Under the old mechanism (RLIMIT_NPROC set on the launcher, so the kernel counted every
 * task of the user against one sandbox's bound) both fail. Needs root to change the uid.
 */
@EnabledOnOs(OS.LINUX)
class UnprivilegedLimitsTest {

    private static final Duration CHILD_BOUND = Duration.ofMinutes(5);

    private UnprivilegedJvm jvm;

    @BeforeEach
    void freshUser() throws Exception {
        assumeTrue(HostUser.current().isRoot(), "only root can run a child JVM as a user of its own");
        jvm = UnprivilegedJvm.forFreshUser();
    }

    @AfterEach
    void cleanUp() {
        if (jvm != null) {
            jvm.close();
        }
    }

    @Test
    void aUserWithSeveralHundredTasksStillStartsSandboxesThatFork() throws Exception {
        UnprivilegedJvm.Outcome run = scenario("crowded-user");

        assertThat(run.printed()).containsPattern("(?m)^PASS bubblewrap crowded-user: the user ran \\d+ tasks")
                .containsPattern("(?m)^PASS process crowded-user: ");
        assertThat(run.exitCode()).as(run.printed()).isZero();
        assertThat(jvm.processes()).as("nothing of the user outlives the run").isEmpty();
    }

    @Test
    void twoSandboxesOfOneUserDoNotStarveEachOther() throws Exception {
        UnprivilegedJvm.Outcome run = scenario("two-sandboxes");

        assertThat(run.printed()).containsPattern("(?m)^PASS bubblewrap two-sandboxes: the first sandbox held \\d+ of "
                + "its " + LimitScenariosMain.SMALL_BOUND + "; the second started 40$")
                .containsPattern("(?m)^PASS process two-sandboxes: ");
        assertThat(run.exitCode()).as(run.printed()).isZero();
    }

    @Test
    void afterAKilledOwnerOfFiveRunningSandboxesTheNextBackendLeavesNothingWithinFiveSeconds() throws Exception {
        UnprivilegedJvm.Outcome run = scenario("crashed-owner");

        assertThat(run.printed()).containsPattern("(?m)^PASS bubblewrap crashed-owner: ");
        assertThat(run.exitCode()).as(run.printed()).isZero();
    }

    private UnprivilegedJvm.Outcome scenario(String name) throws Exception {
        UnprivilegedJvm.Outcome run = jvm.run(LimitScenariosMain.class, List.of(name,
                jvm.home().resolve(name).toString()), CHILD_BOUND);
        assertThat(run.printed()).as("a user of its own has no writable cgroup here, and a user namespace")
                .containsPattern("(?m)^LIMITS RLIMIT$");
        return run;
    }
}
