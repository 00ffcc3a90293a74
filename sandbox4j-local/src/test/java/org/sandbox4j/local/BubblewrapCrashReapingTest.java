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
import org.sandbox4j.core.KeyDigest;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * Sandboxes left by a JVM that died without disposing of them: a child JVM acquires sandboxes on a
 * shared state root and is killed; a later backend over the same root reaps what the dead owner
 * left once its lease ran out, with its control groups, and keeps what a live owner or an
 * unexpired lease still vouches for. Real bwrap, real cgroups, a real killed process.
 */
@EnabledOnOs(OS.LINUX)
class BubblewrapCrashReapingTest {

    private static final Path CGROUP_ROOT = BubblewrapBackend.DEFAULT_CGROUP_ROOT;
    private static final List<String> GROUP_HIERARCHIES = List.of("memory", "pids", "cpu", "unified");
    private static final Duration SHORT_LEASE = Duration.ofSeconds(1);
    private static final Duration CHILD_BOUND = Duration.ofMinutes(2);
    private static final String WORK = SandboxSpec.DEFAULT_WORK_DIR;
    private static final SandboxSpec SPEC = SandboxSpec.builder("reaping").build();
    private static final SandboxKey CRASHED_SHORT = new SandboxKey("reap-scope", "crashed-short-lease", "agent");
    private static final SandboxKey CRASHED_LONG = new SandboxKey("reap-scope", "crashed-long-lease", "agent");
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
            for (SandboxKey key : List.of(CRASHED_SHORT, CRASHED_LONG, LIVE)) {
                backend.dispose(key);
            }
            backend.close();
        }
        LocalStore.deleteTree(stateRoot);
    }

    @Test
    void aNewBackendReapsWhatAKilledOwnerLeftAfterItsLeaseButKeepsLiveAndUnexpiredSandboxes() throws Exception {
        BubblewrapBackend mine = track(BubblewrapBackend.builder().stateRoot(stateRoot).lease(SHORT_LEASE).build());
        Sandbox live = mine.acquire(LIVE, SPEC);
        live.writeFile("mine.txt", "still here", WORK);
        assertThat(live.exec(List.of("true"), WORK, Duration.ofSeconds(30)).exitCode()).isZero();

        runAndKillChild();

        Path store = mine.stateDirectory();
        String shortId = idOf(CRASHED_SHORT);
        String longId = idOf(CRASHED_LONG);
        String liveId = idOf(LIVE);
        assertThat(store.resolve(shortId).resolve(LocalStore.WORKSPACE).resolve("work/crashed.txt"))
                .as("the killed child's file").hasContent("written before the crash");
        assertThat(groupsOf(store, shortId)).as("the killed child's control groups, made by its exec").isNotEmpty();
        // Past every short lease, this JVM's included: only a live owner keeps its sandbox now.
        Thread.sleep(SHORT_LEASE.toMillis() * 2 + 200);

        BubblewrapBackend reaper = track(BubblewrapBackend.builder().stateRoot(stateRoot).lease(SHORT_LEASE).build());

        assertThat(store.resolve(shortId)).as("the dead owner's expired sandbox").doesNotExist();
        assertThat(groupsOf(store, shortId)).as("the dead owner's control groups").isEmpty();
        assertThat(store.resolve(longId)).as("the dead owner's sandbox whose lease has not run out").isDirectory();
        assertThat(store.resolve(liveId)).as("a sandbox whose owner (this JVM) is alive, lease expired or not")
                .isDirectory();
        assertThat(live.readFile("mine.txt", WORK, 100)).asString(StandardCharsets.UTF_8).isEqualTo("still here");
        assertThat(reaper.acquire(LIVE, SPEC).exec(List.of("cat", "mine.txt"), WORK, Duration.ofSeconds(30))
                .stdoutText()).isEqualTo("still here");

        // The long lease runs out (rewritten here instead of waiting ten minutes): reaping on demand takes it.
        SandboxRecord longRecord = SandboxRecord.read(store.resolve(longId)).orElseThrow();
        new SandboxRecord(longRecord.id(), longRecord.scopeHash(), longRecord.threadHash(), longRecord.agentHash(),
                longRecord.kind(), longRecord.fingerprint(), longRecord.createdAt(), longRecord.ownerPid(),
                longRecord.ownerStart(), Instant.now().minusSeconds(1)).write(store.resolve(longId));

        assertThat(reaper.reapAbandoned()).as("sandboxes reaped on demand").isEqualTo(1);
        assertThat(store.resolve(longId)).doesNotExist();
        assertThat(groupsOf(store, longId)).isEmpty();
        assertThat(store.resolve(liveId)).isDirectory();
        assertThat(reaper.reapAbandoned()).as("a second pass finds nothing more").isZero();
    }

    @Test
    void aSandboxWhoseOwnerIsAnotherLiveJvmIsKeptPastItsLeaseAndReapedOnceThatJvmIsKilled() throws Exception {
        Process child = startReadyChild();
        String shortId;
        BubblewrapBackend other;
        try {
            shortId = idOf(CRASHED_SHORT);
            Thread.sleep(SHORT_LEASE.toMillis() * 2 + 200);

            other = track(BubblewrapBackend.builder().stateRoot(stateRoot).lease(SHORT_LEASE).build());

            assertThat(other.stateDirectory().resolve(shortId))
                    .as("lease expired, but its owner (another JVM, same pid and start time) is alive").isDirectory();
            assertThat(other.reapAbandoned()).isZero();
        } finally {
            kill(child);
        }

        assertThat(other.reapAbandoned()).as("reaped once the owner is dead").isEqualTo(1);
        assertThat(other.stateDirectory().resolve(shortId)).doesNotExist();
        assertThat(groupsOf(other.stateDirectory(), shortId)).isEmpty();
    }

    @Test
    void reapingRemovesOldHalfBuiltAndHalfRemovedDebrisButNotAFreshBuild() throws Exception {
        BubblewrapBackend backend = track(BubblewrapBackend.builder().stateRoot(stateRoot).build());
        Path store = backend.stateDirectory();
        Path oldBuild = debris(store.resolve(".building-old"), Duration.ofMinutes(5));
        Path oldRemoval = debris(store.resolve(".removing-old"), Duration.ofMinutes(5));
        Path freshBuild = debris(store.resolve(".building-fresh"), Duration.ZERO);

        backend.reapAbandoned();

        assertThat(oldBuild).as("half-built debris older than a minute").doesNotExist();
        assertThat(oldRemoval).as("half-removed debris older than a minute").doesNotExist();
        assertThat(freshBuild).as("a build that may still be running in another process").isDirectory();
    }

    @Test
    void reapingRemovesThisStateRootsControlGroupsThatHaveNoSandbox() throws Exception {
        BubblewrapBackend backend = track(BubblewrapBackend.builder().stateRoot(stateRoot).build());
        assertThat(backend.limitMechanism()).isEqualTo(LimitMechanism.CGROUP_V1);
        String orphan = "sbx-0123456789abcdef0123456789abcdef";
        Path orphanGroup = CGROUP_ROOT.resolve("pids/sandbox4j").resolve(groupName(backend.stateDirectory(), orphan));
        Path foreignGroup = CGROUP_ROOT.resolve("pids/sandbox4j").resolve("s4j-00000000-" + orphan);
        Files.createDirectory(orphanGroup);
        Files.createDirectory(foreignGroup);
        try {
            backend.reapAbandoned();

            assertThat(orphanGroup).as("a group of this state root with no sandbox directory").doesNotExist();
            assertThat(foreignGroup).as("another state root's group").isDirectory();
        } finally {
            Files.deleteIfExists(orphanGroup);
            Files.deleteIfExists(foreignGroup);
        }
    }

    // ---------------------------------------------------------------- the child that crashes

    /**
     * Run in a child JVM: acquires one sandbox under a 1-second lease and one under the default
     * (10-minute) lease, writes a file and execs once in each, says {@value #READY}, and waits to
     * be killed.
     */
    public static final class CrashingOwner {
        public static void main(String[] args) throws Exception {
            Path root = Path.of(args[0]);
            BubblewrapBackend shortLease = BubblewrapBackend.builder().stateRoot(root).lease(SHORT_LEASE).build();
            BubblewrapBackend longLease = BubblewrapBackend.builder().stateRoot(root).build();
            for (var pair : List.of(new Object[] {shortLease, CRASHED_SHORT}, new Object[] {longLease, CRASHED_LONG})) {
                Sandbox sandbox = ((BubblewrapBackend) pair[0]).acquire((SandboxKey) pair[1], SPEC);
                sandbox.writeFile("crashed.txt", "written before the crash", WORK);
                if (sandbox.exec(List.of("true"), WORK, Duration.ofSeconds(30)).exitCode() != 0) {
                    throw new IllegalStateException("the child's exec failed");
                }
            }
            System.out.println(READY);
            System.out.flush();
            Thread.sleep(CHILD_BOUND.toMillis());
        }
    }

    private void runAndKillChild() throws Exception {
        kill(startReadyChild());
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
