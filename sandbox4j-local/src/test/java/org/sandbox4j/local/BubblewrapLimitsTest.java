package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * {@link LocalLimits} enforced for real: as root on this host the backend makes cgroup v1 groups
 * (memory, pids, cpu) per sandbox, and a guest that goes past a bound is stopped. With no writable
 * cgroup it falls back to rlimits and says so. A build that is not root has no writable cgroup
 * here, so the cgroup tests need root; UnprivilegedConformanceTest proves the rlimit fallback.
 */
@EnabledOnOs(OS.LINUX)
class BubblewrapLimitsTest {

    private static final String WORK = SandboxSpec.DEFAULT_WORK_DIR;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final SandboxKey KEY = new SandboxKey("limits-scope", "limits-thread", "agent");
    private static final SandboxSpec SPEC = SandboxSpec.builder("limits").build();
    private static final Path CGROUP_ROOT = BubblewrapBackend.DEFAULT_CGROUP_ROOT;
    private static final long MIB = 1L << 20;
    /** Starts 40 background sleeps (output closed, so they never hold the exec's pipes) and counts them. */
    private static final String FORTY_SLEEPS = "i=0; while [ $i -lt 40 ]; do sleep 20 </dev/null >/dev/null 2>&1 & "
            + "i=$((i+1)); done; echo started $i";

    private final List<BubblewrapBackend> backends = new ArrayList<>();
    private final List<Path> stateRoots = new ArrayList<>();

    @AfterEach
    void cleanUp() {
        for (BubblewrapBackend backend : backends) {
            backend.dispose(KEY);
            backend.close();
        }
        stateRoots.forEach(LocalStore::deleteTree);
    }

    @Test
    void asRootHereTheLimitsAreCgroupV1Groups() throws IOException {
        requireRoot();
        BubblewrapBackend backend = backend(LocalLimits.DEFAULT, CGROUP_ROOT);

        assertThat(backend.limitMechanism()).isEqualTo(LimitMechanism.CGROUP_V1);
    }

    @Test
    void aGuestAllocatingPastTheMemoryLimitIsKilledWhileASmallerAllocationWorks() throws IOException {
        requireRoot();
        Sandbox sandbox = backend(LocalLimits.DEFAULT.withMemoryBytes(64 * MIB), CGROUP_ROOT).acquire(KEY, SPEC);

        ExecResult small = python(sandbox, 16);
        ExecResult large = python(sandbox, 200);

        assertThat(small.exitCode()).as("16 MB under a 64 MiB limit: %s", small).isZero();
        assertThat(small.stdoutText()).isEqualTo("allocated 16 MB\n");
        assertThat(large.exitCode()).as("200 MB under a 64 MiB limit: %s", large).isNotZero();
        assertThat(large.stdoutText()).doesNotContain("allocated");
        assertThat(large.exitCode()).as("killed by the OOM killer (SIGKILL), or a MemoryError").isIn(137, 1);
    }

    @Test
    void aGuestCannotStartMoreProcessesThanTheLimit() throws IOException {
        requireRoot();
        Sandbox limited = backend(LocalLimits.DEFAULT.withMaxProcesses(16), CGROUP_ROOT).acquire(KEY, SPEC);
        Sandbox roomy = backend(LocalLimits.DEFAULT, CGROUP_ROOT).acquire(KEY, SPEC);

        ExecResult bounded = limited.exec(List.of("sh", "-c", FORTY_SLEEPS), WORK, TIMEOUT);
        ExecResult unbounded = roomy.exec(List.of("sh", "-c", FORTY_SLEEPS), WORK, TIMEOUT);

        assertThat(unbounded.stdoutText()).as("the same loop under the default limit").isEqualTo("started 40\n");
        assertThat(bounded.stdoutText()).as("under a limit of 16 processes: %s", bounded)
                .isNotEqualTo("started 40\n");
        assertThat(bounded.exitCode()).as("the shell failed to fork: %s", bounded).isNotZero();
        assertThat(bounded.stderrText()).containsIgnoringCase("fork");
    }

    @Test
    void theGroupsCpuQuotaIsTheCpuShareOfAPeriodAndHoldsTheRunningCommand() throws Exception {
        requireRoot();
        BubblewrapBackend backend = backend(LocalLimits.DEFAULT.withCpus(0.5).withMaxProcesses(32)
                .withMemoryBytes(128 * MIB), CGROUP_ROOT);
        Sandbox sandbox = backend.acquire(KEY, SPEC);
        String group = groupOf(backend);
        Path cpu = CGROUP_ROOT.resolve("cpu/sandbox4j").resolve(group);
        Path pids = CGROUP_ROOT.resolve("pids/sandbox4j").resolve(group);
        Path memory = CGROUP_ROOT.resolve("memory/sandbox4j").resolve(group);

        CompletableFuture<ExecResult> running = CompletableFuture.supplyAsync(
                () -> sandbox.exec(List.of("sleep", "3"), WORK, TIMEOUT));
        List<String> members = waitForMembers(pids.resolve("cgroup.procs"));
        String quota = Files.readString(cpu.resolve("cpu.cfs_quota_us")).strip();
        String period = Files.readString(cpu.resolve("cpu.cfs_period_us")).strip();
        String pidsMax = Files.readString(pids.resolve("pids.max")).strip();
        String memoryMax = Files.readString(memory.resolve("memory.limit_in_bytes")).strip();
        assertThat(running.get(60, TimeUnit.SECONDS).exitCode()).isZero();

        assertThat(members).as("the running command's processes are in the sandbox's group").isNotEmpty();
        assertThat(quota).as("cpus 0.5 of a 100000 us period").isEqualTo("50000");
        assertThat(period).isEqualTo("100000");
        assertThat(pidsMax).isEqualTo("32");
        assertThat(memoryMax).isEqualTo(Long.toString(128 * MIB));
    }

    @Test
    void withNoWritableCgroupTheLimitsFallBackToRlimitsAndSaySo() throws IOException {
        Path emptyCgroupRoot = Files.createTempDirectory("s4jcg");
        stateRoots.add(emptyCgroupRoot);
        BubblewrapBackend backend = backend(LocalLimits.DEFAULT.withMaxProcesses(16).withMemoryBytes(256 * MIB),
                emptyCgroupRoot);

        ExecResult limits = backend.acquire(KEY, SPEC).exec(List.of("cat", "/proc/self/limits"), WORK, TIMEOUT);
        assertThat(limits.stdoutText()).as("the guest's own rlimits")
                .containsPattern("Max data size\\s+" + 256 * MIB + "\\s+" + 256 * MIB + "\\s");
        if (HostUser.current().isRoot()) {
            // The kernel exempts root from RLIMIT_NPROC: the backend says processes go unbounded, rather than claim it.
            assertThat(backend.limitMechanism()).isEqualTo(LimitMechanism.RLIMIT_DATA_ONLY);
            assertThat(backend.diagnostics()).anySatisfy(line -> assertThat(line).startsWith("limits: rlimits as root")
                    .contains("NOT bounded"));
            assertThat(backend.declarations().isolation()).as("a backend that cannot bound processes is no container")
                    .isEqualTo(Isolation.OS_PROCESS);
            assertThat(backend.diagnostics()).anySatisfy(line -> assertThat(line).startsWith("backend: ")
                    .contains("isolation os_process").contains("nothing bounds a guest's processes"));
        } else {
            assertThat(backend.limitMechanism()).isEqualTo(LimitMechanism.RLIMIT);
            assertThat(backend.diagnostics()).anySatisfy(line -> assertThat(line).startsWith("limits: rlimits")
                    .contains("RLIMIT_NPROC").contains("16 processes"));
            assertThat(limits.stdoutText()).containsPattern("Max processes\\s+16\\s+16\\s");
        }
        try (var left = Files.list(emptyCgroupRoot)) {
            assertThat(left).as("nothing made under a cgroup root that has no hierarchy").isEmpty();
        }
        // That RLIMIT_NPROC contains a fork bomb, per exec and whatever else the user runs, is proved
        // unprivileged, by UnprivilegedConformanceTest and UnprivilegedLimitsTest.
    }

    private static ExecResult python(Sandbox sandbox, int megabytes) {
        return sandbox.exec(List.of("python3", "-c", "b = b'x' * (" + megabytes + " << 20); print('allocated "
                + megabytes + " MB')"), WORK, TIMEOUT);
    }

    private BubblewrapBackend backend(LocalLimits limits, Path cgroupRoot) throws IOException {
        Path stateRoot = Files.createTempDirectory("s4j");
        stateRoots.add(stateRoot);
        BubblewrapBackend backend = BubblewrapBackend.builder().stateRoot(stateRoot).limits(limits)
                .cgroupRoot(cgroupRoot).build();
        backends.add(backend);
        return backend;
    }

    /** The control group name of the one sandbox {@code backend} holds. */
    private static String groupOf(BubblewrapBackend backend) throws IOException {
        try (var children = Files.list(backend.stateDirectory())) {
            String id = children.map(path -> path.getFileName().toString()).filter(name -> name.startsWith("sbx-"))
                    .findFirst().orElseThrow();
            return "s4j-" + KeyDigest.sha256Hex(backend.stateDirectory().toString()).substring(0, 8) + "-" + id;
        }
    }

    private static List<String> waitForMembers(Path procs) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            if (Files.exists(procs)) {
                List<String> members = Files.readAllLines(procs).stream().filter(line -> !line.isBlank()).toList();
                if (!members.isEmpty()) {
                    return members;
                }
            }
            Thread.sleep(20);
        }
        return List.of();
    }

    private static void requireRoot() {
        assumeTrue("root".equals(System.getProperty("user.name")), "only root can write cgroups on this host");
    }
}
