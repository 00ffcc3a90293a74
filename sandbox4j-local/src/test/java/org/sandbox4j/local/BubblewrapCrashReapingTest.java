package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * Sandboxes left by a JVM that died without disposing of them: a child JVM holds sandboxes with
 * commands running in them on a shared state root and is killed with SIGKILL; the next backend on
 * that root ends and removes everything it left at once (processes, control groups, directories,
 * lock files), in cgroup mode and in rlimit mode. A sandbox an owner let go of normally (closed,
 * or its JVM exited) is kept until its lease runs out, for the next process to adopt; a live
 * owner's is kept whatever its lease. Real bwrap, real cgroups, real killed processes.
 */
@EnabledOnOs(OS.LINUX)
class BubblewrapCrashReapingTest {

    private static final Path CGROUP_ROOT = BubblewrapBackend.DEFAULT_CGROUP_ROOT;
    private static final List<String> GROUP_HIERARCHIES = List.of("memory", "pids", "cpu", "unified");
    private static final Duration SHORT_LEASE = Duration.ofSeconds(1);
    private static final Duration CHILD_BOUND = Duration.ofMinutes(2);
    private static final String WORK = SandboxSpec.DEFAULT_WORK_DIR;
    private static final SandboxSpec SPEC = SandboxSpec.builder("reaping").build();
    private static final SandboxKey CRASHED = new SandboxKey("reap-scope", "crashed", "agent");
    private static final SandboxKey LET_GO = new SandboxKey("reap-scope", "let-go", "agent");
    private static final SandboxKey LIVE = new SandboxKey("reap-scope", "live-owner", "agent");
    private static final String READY = "READY";

    private Path stateRoot;
    private final List<BubblewrapBackend> backends = new ArrayList<>();

    @BeforeEach
    void makeStateRoot() throws IOException {
        stateRoot = Files.createTempDirectory("s4j");
    }

    @AfterEach
    void cleanUp() {
        for (BubblewrapBackend backend : backends) {
            for (SandboxKey key : List.of(CRASHED, LET_GO, LIVE)) {
                backend.dispose(key);
            }
            backend.close();
        }
        LocalStore.deleteTree(stateRoot);
    }

    @Test
    void afterAKilledOwnerWithFiveRunningSandboxesTheNextBackendLeavesNothingWithinFiveSecondsInCgroupMode()
            throws Exception {
        CrashedOwner.Recovery recovery = crashAndRecover("default", BubblewrapBackend.builder());

        assertThat(recovery.before().processes()).as("the killed owner's commands ran on").hasSizeGreaterThanOrEqualTo(
                CrashedOwner.SANDBOXES);
        assertThat(recovery.before().groups()).as("with their control groups").isNotEmpty();
        assertThat(recovery.before().locks()).hasSize(CrashedOwner.SANDBOXES);
        assertThat(recovery.after()).as("left %s after %s", recovery.after(), recovery.took())
                .matches(CrashedOwner.Leftovers::isEmpty);
        assertThat(recovery.took()).isLessThanOrEqualTo(CrashedOwner.RECOVERY_BOUND);
    }

    @Test
    void afterAKilledOwnerWithFiveRunningSandboxesTheNextBackendLeavesNothingWithinFiveSecondsInRlimitMode()
            throws Exception {
        Path noCgroups = Files.createTempDirectory("s4jcg");
        try {
            CrashedOwner.Recovery recovery = crashAndRecover(noCgroups.toString(),
                    BubblewrapBackend.builder().cgroupRoot(noCgroups));

            assertThat(recovery.before().processes()).hasSizeGreaterThanOrEqualTo(CrashedOwner.SANDBOXES);
            assertThat(recovery.after()).as("left %s after %s", recovery.after(), recovery.took())
                    .matches(CrashedOwner.Leftovers::isEmpty);
        } finally {
            LocalStore.deleteTree(noCgroups);
        }
    }

    @Test
    void afterAKilledOwnerWithFiveRunningProcessSandboxesTheNextBackendLeavesNothingWithinFiveSeconds()
            throws Exception {
        Process owner = CrashedOwner.start(stateRoot, "default", ProcessBackend.TYPE);
        CrashedOwner.killHard(owner);
        CrashedOwner.Recovery recovery = CrashedOwner.recover(stateRoot.resolve(ProcessBackend.TYPE),
                () -> ProcessBackend.builder().stateRoot(stateRoot).build());

        assertThat(recovery.before().processes()).as("the killed owner's commands ran on")
                .hasSizeGreaterThanOrEqualTo(CrashedOwner.SANDBOXES);
        assertThat(recovery.after()).as("left %s after %s", recovery.after(), recovery.took())
                .matches(CrashedOwner.Leftovers::isEmpty);
    }

    private CrashedOwner.Recovery crashAndRecover(String cgroupRoot, BubblewrapBackend.Builder next) throws Exception {
        Process owner = CrashedOwner.start(stateRoot, cgroupRoot);
        CrashedOwner.killHard(owner);
        return CrashedOwner.recover(stateRoot, next);
    }

    @Test
    void aSandboxItsOwnerLetGoIsKeptUntilItsLeaseRunsOutAndAnotherProcessAdoptsIt() throws Exception {
        BubblewrapBackend first = BubblewrapBackend.builder().stateRoot(stateRoot).build();
        first.acquire(LET_GO, SPEC).writeFile("kept.txt", "for the next process", WORK);
        first.close();
        String id = idOf(LET_GO);
        markOwnedByADeadProcess(id, Instant.now().plusSeconds(600));

        BubblewrapBackend next = track(BubblewrapBackend.builder().stateRoot(stateRoot).build());

        assertThat(next.stateDirectory().resolve(id)).as("let go, owner gone, lease running: kept").isDirectory();
        assertThat(next.acquire(LET_GO, SPEC).exec(List.of("cat", "kept.txt"), WORK, Duration.ofSeconds(30))
                .stdoutText()).isEqualTo("for the next process");
        next.close();
        markOwnedByADeadProcess(id, Instant.now().minusSeconds(1));
        assertThat(next.reapAbandoned()).as("let go, owner gone, lease run out: reaped").isEqualTo(1);
        assertThat(next.stateDirectory().resolve(id)).doesNotExist();
    }

    @Test
    void aLiveOwnersSandboxIsKeptPastItsLease() throws Exception {
        BubblewrapBackend mine = track(BubblewrapBackend.builder().stateRoot(stateRoot).lease(SHORT_LEASE).build());
        Sandbox live = mine.acquire(LIVE, SPEC);
        live.writeFile("mine.txt", "still here", WORK);
        Thread.sleep(SHORT_LEASE.toMillis() * 2 + 200);

        BubblewrapBackend reaper = track(BubblewrapBackend.builder().stateRoot(stateRoot).lease(SHORT_LEASE).build());

        assertThat(reaper.reapAbandoned()).isZero();
        assertThat(live.readFile("mine.txt", WORK, 100)).asString(StandardCharsets.UTF_8).isEqualTo("still here");
    }

    @Test
    void aSandboxWhoseOwnerIsAnotherLiveJvmIsKeptAndReapedAtOnceWhenThatJvmIsKilled() throws Exception {
        Process child = startReadyChild();
        String id;
        BubblewrapBackend other;
        try {
            id = idOf(CRASHED);
            Thread.sleep(SHORT_LEASE.toMillis() * 2 + 200);

            other = track(BubblewrapBackend.builder().stateRoot(stateRoot).lease(SHORT_LEASE).build());

            assertThat(other.stateDirectory().resolve(id))
                    .as("its owner (another JVM, same pid and start time) is alive").isDirectory();
            assertThat(other.reapAbandoned()).isZero();
        } finally {
            kill(child);
        }

        assertThat(other.reapAbandoned()).as("reaped once the owner is dead, its lease notwithstanding")
                .isEqualTo(1);
        assertThat(other.stateDirectory().resolve(id)).doesNotExist();
        assertThat(groupsOf(other.stateDirectory(), id)).isEmpty();
    }

    @Test
    void reapingRemovesHalfRemovedDebrisAtOnceAndOldHalfBuiltDebrisButNotAFreshBuild() throws Exception {
        BubblewrapBackend backend = track(BubblewrapBackend.builder().stateRoot(stateRoot).build());
        Path store = backend.stateDirectory();
        Path oldBuild = debris(store.resolve(".building-old"), Duration.ofMinutes(5));
        Path freshRemoval = debris(store.resolve(".removing-fresh"), Duration.ZERO);
        Path freshBuild = debris(store.resolve(".building-fresh"), Duration.ZERO);

        backend.reapAbandoned();

        assertThat(oldBuild).as("half-built debris older than a minute").doesNotExist();
        assertThat(freshRemoval).as("half-removed debris: a removal is finished at once").doesNotExist();
        assertThat(freshBuild).as("a build that may still be running in another process").isDirectory();
    }

    @Test
    void reapingRemovesLockFilesWithNoSandbox() throws Exception {
        BubblewrapBackend backend = track(BubblewrapBackend.builder().stateRoot(stateRoot).build());
        Path orphanLock = Files.writeString(backend.stateDirectory().resolve(".locks/sbx-0123.lock"), "");

        backend.reapAbandoned();

        assertThat(orphanLock).doesNotExist();
    }

    @Test
    void disposalRemovesTheSandboxsLockFile() throws Exception {
        BubblewrapBackend backend = track(BubblewrapBackend.builder().stateRoot(stateRoot).build());
        for (int i = 0; i < 20; i++) {
            backend.acquire(new SandboxKey("locks", "thread-" + i, "agent"), SPEC);
        }
        assertThat(Files.list(backend.stateDirectory().resolve(".locks")).count()).isEqualTo(20);

        assertThat(backend.disposeScope("locks", "thread-0")).isEqualTo(1);
        for (int i = 1; i < 20; i++) {
            backend.dispose(new SandboxKey("locks", "thread-" + i, "agent"));
        }

        try (var locks = Files.list(backend.stateDirectory().resolve(".locks"))) {
            assertThat(locks).as("lock files after 20 sandboxes were disposed of").isEmpty();
        }
    }

    // ---------------------------------------------------------------- the child that crashes

    /** Run in a child JVM: acquires one sandbox, writes a file in it, says {@value #READY}, and waits to be killed. */
    public static final class CrashingOwner {
        public static void main(String[] args) throws Exception {
            BubblewrapBackend backend = BubblewrapBackend.builder().stateRoot(Path.of(args[0])).lease(SHORT_LEASE)
                    .build();
            Sandbox sandbox = backend.acquire(CRASHED, SPEC);
            sandbox.writeFile("crashed.txt", "written before the crash", WORK);
            System.out.println(READY);
            System.out.flush();
            Thread.sleep(CHILD_BOUND.toMillis());
        }
    }

    /** Rewrites the sandbox's record as owned by a process that is gone, with {@code leaseUntil}, still detached. */
    private void markOwnedByADeadProcess(String id, Instant leaseUntil) throws Exception {
        Path directory = stateRoot.resolve(BubblewrapBackend.TYPE).resolve(id);
        SandboxRecord record = SandboxRecord.read(directory).orElseThrow();
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        new SandboxRecord(record.id(), record.scopeHash(), record.threadHash(), record.agentHash(), record.kind(),
                record.fingerprint(), record.createdAt(), gone.pid(), Instant.EPOCH, leaseUntil, record.attached())
                .write(directory);
        assertThat(record.attached()).as("closed: let go").isFalse();
    }

    /** A child JVM running {@link CrashingOwner} that has said {@value #READY}. */
    private Process startReadyChild() throws Exception {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                classPath, CrashingOwner.class.getName(), stateRoot.toString());
        Process child = new ProcessBuilder(command).redirectErrorStream(true).start();
        StringBuilder said = new StringBuilder();
        BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
        String line;
        try {
            while ((line = out.readLine()) != null && !line.equals(READY)) {
                said.append(line).append('\n');
            }
        } catch (IOException e) {
            kill(child);
            throw e;
        }
        if (line == null) {
            kill(child);
        }
        assertThat(line).as("the child got ready; it said:%n%s", said).isEqualTo(READY);
        return child;
    }

    private static void kill(Process child) throws InterruptedException {
        child.destroyForcibly();
        assertThat(child.waitFor(CHILD_BOUND.toSeconds(), TimeUnit.SECONDS)).as("the child died").isTrue();
        assertThat(child.exitValue()).as("killed, not exited").isEqualTo(137);
    }

    private BubblewrapBackend track(BubblewrapBackend backend) {
        backends.add(backend);
        return backend;
    }

    private String idOf(SandboxKey key) throws IOException {
        try (var children = Files.list(stateRoot.resolve(BubblewrapBackend.TYPE))) {
            List<String> ids = children.map(path -> path.getFileName().toString())
                    .filter(name -> name.startsWith("sbx-")).toList();
            for (String id : ids) {
                SandboxRecord record = SandboxRecord.read(stateRoot.resolve(BubblewrapBackend.TYPE).resolve(id))
                        .orElseThrow();
                if (record.belongsTo(key)) {
                    return id;
                }
            }
        }
        throw new AssertionError("no sandbox recorded for " + key);
    }

    /** The backend's name for a sandbox's control groups: {@code s4j-<8 hex of the store>-<id>}. */
    private static String groupName(Path store, String id) {
        return "s4j-" + KeyDigest.sha256Hex(store.toString()).substring(0, 8) + "-" + id;
    }

    private static List<Path> groupsOf(Path store, String id) {
        List<Path> found = new ArrayList<>();
        for (String hierarchy : GROUP_HIERARCHIES) {
            Path group = CGROUP_ROOT.resolve(hierarchy).resolve("sandbox4j").resolve(groupName(store, id));
            if (Files.isDirectory(group)) {
                found.add(group);
            }
        }
        return found;
    }

    private static Path debris(Path directory, Duration age) throws IOException {
        Files.createDirectories(directory.resolve("workspace/work"));
        Files.writeString(directory.resolve("workspace/work/left.txt"), "left behind");
        FileTime time = FileTime.from(Instant.now().minus(age));
        Files.setLastModifiedTime(directory, time);
        return directory;
    }
}
