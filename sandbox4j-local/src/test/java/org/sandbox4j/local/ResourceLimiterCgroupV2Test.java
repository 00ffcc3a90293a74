package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.spi.PassedHostChecks;

/**
 * {@link ResourceLimiter} against a cgroup v2 tree laid out in a temporary directory (this host
 * mounts v1 controllers, so no real v2 controller is available): what it detects, which files it
 * writes with which values, that the join script really writes the launching process's pid into
 * each {@code cgroup.procs}, and that releasing a group writes {@code cgroup.kill}.
 */
@EnabledOnOs(OS.LINUX)
class ResourceLimiterCgroupV2Test {

    private static final LocalLimits LIMITS = new LocalLimits(48L << 20, 24, 0.25, 8L << 20, 8L << 20);
    private static final String GROUP = "s4j-0000abcd-sbx-test";

    @TempDir
    Path root;

    @BeforeEach
    void fakeHierarchy() throws IOException {
        Files.writeString(root.resolve("cgroup.controllers"), "cpuset cpu io memory hugetlb pids rdma misc\n");
        Files.writeString(root.resolve("cgroup.subtree_control"), "");
        Files.writeString(root.resolve("cgroup.procs"), "");
        // The kernel gives every group its cgroup.procs; here the parent gets one by hand.
        Files.createDirectories(root.resolve("sandbox4j"));
        Files.writeString(root.resolve("sandbox4j/cgroup.procs"), "");
    }

    @Test
    void aHierarchyWithMemoryPidsAndCpuIsDetectedAsCgroupV2AndHandsTheControllersDown() throws IOException {
        ResourceLimiter limiter = ResourceLimiter.detect(root, LIMITS, ResourceLimiter.Programs.fromPath(), ResourceLimiter.Launches.ALONE,
                PassedHostChecks.none());

        assertThat(limiter.mechanism()).isEqualTo(LimitMechanism.CGROUP_V2);
        assertThat(Files.readString(root.resolve("cgroup.subtree_control"))).isEqualTo("+memory +pids +cpu");
        assertThat(Files.readString(root.resolve("sandbox4j/cgroup.subtree_control"))).isEqualTo("+memory +pids +cpu");
        assertThat(limiter.describe()).startsWith(LimitMechanism.CGROUP_V2.description())
                .contains(root.resolve("sandbox4j").toString());
    }

    @Test
    void aHierarchyWithoutTheMemoryControllerIsNotCgroupV2() throws IOException {
        Files.writeString(root.resolve("cgroup.controllers"), "cpu pids hugetlb\n");

        ResourceLimiter limiter = ResourceLimiter.detect(root, LIMITS, ResourceLimiter.Programs.fromPath(), ResourceLimiter.Launches.ALONE,
                PassedHostChecks.none());

        assertThat(limiter.mechanism()).as("no v2 memory controller and no v1 controllers").isIn(
                LimitMechanism.RLIMIT_PER_EXEC, LimitMechanism.RLIMIT_PER_USER, LimitMechanism.RLIMIT_DATA_ONLY);
        assertThat(Files.readString(root.resolve("cgroup.subtree_control"))).as("untouched").isEmpty();
    }

    @Test
    void launchPrefixMakesTheGroupWithItsLimitsWrittenExactly() throws IOException {
        ResourceLimiter limiter = ResourceLimiter.detect(root, LIMITS, ResourceLimiter.Programs.fromPath(), ResourceLimiter.Launches.ALONE,
                PassedHostChecks.none());

        List<String> prefix = limiter.launchPrefix(GROUP, List.of());

        Path group = root.resolve("sandbox4j").resolve(GROUP);
        assertThat(Files.readString(group.resolve("memory.max"))).isEqualTo(Long.toString(48L << 20));
        assertThat(Files.readString(group.resolve("pids.max"))).isEqualTo("24");
        assertThat(Files.readString(group.resolve("cpu.max"))).as("a quarter of a 100 ms period")
                .isEqualTo("25000 100000");
        assertThat(prefix).containsExactly("/bin/sh", "-c", ResourceLimiter.JOIN_GROUPS, "sandbox4j-limits", "1",
                group.resolve("cgroup.procs").toString());
        assertThat(limiter.existingGroups()).containsExactly(GROUP);
    }

    @Test
    void theJoinScriptWritesTheLaunchingProcessPidIntoEachProcsFileBeforeRunningTheCommand() throws Exception {
        Path second = Files.createDirectories(root.resolve("second"));
        List<String> argv = new ArrayList<>(List.of("/bin/sh", "-c", ResourceLimiter.JOIN_GROUPS, "sandbox4j-limits",
                "2", root.resolve("sandbox4j/cgroup.procs").toString(), second.resolve("cgroup.procs").toString(),
                "/bin/sh", "-c", "echo ran as $$"));

        Process process = new ProcessBuilder(argv).start();
        String said = new String(process.getInputStream().readAllBytes());
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();

        String pid = Long.toString(process.pid());
        assertThat(process.exitValue()).isZero();
        assertThat(said).as("the command runs in the same process (exec), after joining").isEqualTo("ran as " + pid
                + "\n");
        assertThat(Files.readString(root.resolve("sandbox4j/cgroup.procs"))).isEqualTo(pid + "\n");
        assertThat(Files.readString(second.resolve("cgroup.procs"))).isEqualTo(pid + "\n");
    }

    @Test
    void theJoinScriptRefusesToRunTheCommandWhenItCannotJoinAGroup() throws Exception {
        Path marker = root.resolve("ran");
        List<String> argv = List.of("/bin/sh", "-c", ResourceLimiter.JOIN_GROUPS, "sandbox4j-limits", "1",
                root.resolve("missing/cgroup.procs").toString(), "/bin/sh", "-c", "touch " + marker);

        Process process = new ProcessBuilder(argv).start();
        String said = new String(process.getErrorStream().readAllBytes());
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();

        assertThat(process.exitValue()).isEqualTo(125);
        assertThat(said).contains("cannot join the sandbox's control group");
        assertThat(marker).as("the command never ran outside its group").doesNotExist();
    }

    @Test
    void releaseWritesCgroupKill() throws IOException {
        ResourceLimiter limiter = ResourceLimiter.detect(root, LIMITS, ResourceLimiter.Programs.fromPath(), ResourceLimiter.Launches.ALONE,
                PassedHostChecks.none());
        limiter.launchPrefix(GROUP, List.of());
        Path group = root.resolve("sandbox4j").resolve(GROUP);
        Files.writeString(group.resolve("cgroup.kill"), "");

        // A real group is removed with rmdir however many files it shows; this fake one keeps its files.
        limiter.release(GROUP);

        assertThat(Files.readString(group.resolve("cgroup.kill"))).isEqualTo("1");
    }
}
