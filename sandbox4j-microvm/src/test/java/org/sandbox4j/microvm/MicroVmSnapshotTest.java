package org.sandbox4j.microvm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/** Fast acquire: guests restored from a snapshot of a booted, idle guest, each with its own randomness. */
class MicroVmSnapshotTest {

    private static final SandboxSpec SPEC = SandboxSpec.builder("python").build();
    private final TestBackends backends = new TestBackends();
    private final Path stateRoot = backends.stateRoot();

    @AfterEach
    void closeBackends() throws IOException {
        backends.removeStateRoot();
    }

    private MicroVmBackend backend(boolean snapshots) {
        return backends.build(builder -> builder.snapshots(snapshots));
    }

    private static SandboxKey key(String thread) {
        return new SandboxKey("microvm-snapshot-test", thread, "agent");
    }

    private static ExecResult run(Sandbox sandbox, String script) {
        return TestGuest.succeeded(sandbox, script);
    }

    private static String fastAcquire(MicroVmBackend backend) {
        return backend.diagnostics().stream().filter(line -> line.startsWith("fast acquire:")).findFirst()
                .orElseThrow();
    }

    /** The snapshots' state files (each has its memory file beside it). */
    private List<Path> snapshotFiles() throws IOException {
        return snapshotFiles(GuestSnapshots.SUFFIX);
    }

    private List<Path> snapshotFiles(String suffix) throws IOException {
        try (Stream<Path> files = Files.list(stateRoot.resolve(GuestSnapshots.DIRECTORY))) {
            return files.filter(file -> file.getFileName().toString().endsWith(suffix)).toList();
        }
    }

    @Test
    void guestsAreRestoredFromOneSnapshotThatOtherInstancesReuse() throws IOException {
        MicroVmBackend first = backend(true);
        run(first.acquire(key("a"), SPEC), "true");
        run(first.acquire(key("b"), SPEC), "true");

        assertThat(fastAcquire(first)).contains("2 guest(s) restored from a snapshot, 0 booted cold");
        List<Path> snapshots = snapshotFiles();
        assertThat(snapshots).hasSize(1);
        assertThat(snapshotFiles(GuestSnapshots.MEMORY_SUFFIX)).hasSize(1);
        try (Stream<Path> all = Files.list(stateRoot.resolve(GuestSnapshots.DIRECTORY))) {
            assertThat(all.count()).isEqualTo(2);
        }
        FileTime made = Files.getLastModifiedTime(snapshots.get(0));

        MicroVmBackend second = backend(true);
        ExecResult python = run(second.acquire(key("c"), SPEC), "python3 -c 'print(sum(range(10)))'");

        assertThat(python.stdoutText().strip()).isEqualTo("45");
        assertThat(fastAcquire(second)).contains("1 guest(s) restored from a snapshot, 0 booted cold");
        assertThat(snapshotFiles()).containsExactly(snapshots.get(0));
        assertThat(Files.getLastModifiedTime(snapshots.get(0))).isEqualTo(made);
    }

    @Test
    void aRestoredGuestMapsTheSnapshotsMemoryButNeitherItNorItsQemuCanChangeIt() throws Exception {
        MicroVmBackend backend = backend(true);
        run(backend.acquire(key("maker"), SPEC), "true");
        Path memory = snapshotFiles(GuestSnapshots.MEMORY_SUFFIX).get(0);
        String before = sha256(memory);

        Sandbox writer = backend.acquire(key("writer"), SPEC);
        // Dirties most of the guest's memory (the page cache and the overlay included), pages the
        // restored guest mapped from the snapshot among them.
        ExecResult wrote = run(writer, "python3 -c 'b = bytearray(80 << 20); b[::4096] = b\"x\" * len(b[::4096])'"
                + " && head -c 20000000 /dev/urandom > big && sync && echo done");
        assertThat(wrote.stdoutText().strip()).as(wrote.stderrText()).isEqualTo("done");

        assertThat(sha256(memory)).isEqualTo(before);
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        if (uid == 0) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(memory))).isEqualTo("rw-r-----");
            assertThat(Files.getAttribute(memory, "unix:gid")).isEqualTo(UnprivilegedQemu.GUEST_GROUP);
            Path directory;
            try (Stream<Path> guests = Files.list(stateRoot)) {
                directory = guests.filter(path -> path.getFileName().toString().startsWith("vm-")).findFirst()
                        .orElseThrow();
            }
            int qemuUid = (Integer) Files.getAttribute(QemuLaunch.qemuDirectory(directory), "unix:uid");
            Process append = new ProcessBuilder("setpriv", "--reuid=" + qemuUid, "--regid="
                    + UnprivilegedQemu.GUEST_GROUP, "--clear-groups", "--", "sh", "-c", "echo x >> " + memory)
                    .redirectErrorStream(true).start();
            assertThat(append.waitFor()).isNotZero();
            assertThat(sha256(memory)).isEqualTo(before);
        }
    }

    private static String sha256(Path file) throws Exception {
        java.security.MessageDigest digest = java.security.MessageDigest.getInstance("SHA-256");
        try (java.io.InputStream in = Files.newInputStream(file)) {
            byte[] buffer = new byte[1 << 20];
            for (int n; (n = in.read(buffer)) > 0; ) {
                digest.update(buffer, 0, n);
            }
        }
        return java.util.HexFormat.of().formatHex(digest.digest());
    }

    @Test
    void restoredGuestsEachGetFreshRandomness() {
        MicroVmBackend backend = backend(true);
        String script = "cat /proc/sys/kernel/random/uuid; head -c 16 /dev/urandom | od -An -tx1";
        String one = run(backend.acquire(key("one"), SPEC), script).stdoutText();
        String two = run(backend.acquire(key("two"), SPEC), script).stdoutText();

        assertThat(fastAcquire(backend)).contains("2 guest(s) restored");
        List<String> first = one.lines().toList();
        List<String> second = two.lines().toList();
        assertThat(first.get(0)).matches("[0-9a-f-]{36}").isNotEqualTo(second.get(0));
        assertThat(first.get(1).strip()).hasSize(47).isNotEqualTo(second.get(1).strip());
    }

    @Test
    void aRestoredGuestKeepsTheHostsTimeNotTheSnapshots() throws InterruptedException {
        MicroVmBackend backend = backend(true);
        run(backend.acquire(key("maker"), SPEC), "true");
        Thread.sleep(5_000);

        long guest = Long.parseLong(run(backend.acquire(key("later"), SPEC), "date +%s").stdoutText().strip());

        assertThat(guest).isCloseTo(System.currentTimeMillis() / 1000, org.assertj.core.data.Offset.offset(2L));
    }

    @Test
    void aCorruptSnapshotFallsBackToAColdBootAndIsReplaced() throws IOException {
        MicroVmBackend backend = backend(true);
        run(backend.acquire(key("maker"), SPEC), "true");
        Path snapshot = snapshotFiles().get(0);
        long size = Files.size(snapshot);
        byte[] garbage = new byte[64 * 1024];
        new java.util.Random(7).nextBytes(garbage);
        Files.write(snapshot, garbage);

        run(backend.acquire(key("cold"), SPEC), "true");

        assertThat(fastAcquire(backend)).contains("1 guest(s) restored from a snapshot, 1 booted cold")
                .contains("restoring " + snapshot + " failed");

        run(backend.acquire(key("again"), SPEC), "true");

        assertThat(fastAcquire(backend)).contains("2 guest(s) restored from a snapshot, 1 booted cold");
        assertThat(Files.size(snapshot)).isGreaterThan(garbage.length).isCloseTo(size, org.assertj.core.data
                .Percentage.withPercentage(50));
    }

    @Test
    void aPartialSnapshotACrashedMakerLeftIsRemovedByTheNextBackend() throws IOException {
        Path snapshots = Files.createDirectories(stateRoot.resolve(GuestSnapshots.DIRECTORY));
        Path stale = Files.write(snapshots.resolve("0".repeat(32) + GuestSnapshots.SUFFIX + GuestSnapshots.PARTIAL
                + "000000000000"), new byte[4096]);
        Files.setLastModifiedTime(stale, FileTime.from(java.time.Instant.now().minus(Duration.ofHours(2))));
        Path fresh = Files.write(snapshots.resolve("1".repeat(32) + GuestSnapshots.SUFFIX + GuestSnapshots.PARTIAL
                + "000000000000"), new byte[4096]);

        backend(true);

        assertThat(stale).doesNotExist();
        assertThat(fresh).exists();
    }

    @Test
    void snapshotsCanBeTurnedOff() throws IOException {
        MicroVmBackend backend = backend(false);
        run(backend.acquire(key("off"), SPEC), "true");

        assertThat(fastAcquire(backend)).startsWith("fast acquire: off").contains("0 guest(s) restored from a "
                + "snapshot, 1 booted cold");
        assertThat(stateRoot.resolve(GuestSnapshots.DIRECTORY)).doesNotExist();
    }

    /** Not a timing assert: prints the median for the benchmark's note, with a generous sanity bound. */
    @Test
    void restoreAcquirePlusFirstExecIsFarBelowABoot() {
        MicroVmBackend backend = backend(true);
        run(backend.acquire(key("warm-up"), SPEC), "true");
        List<Long> millis = new ArrayList<>();
        List<Long> acquireMillis = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            long start = System.nanoTime();
            Sandbox sandbox = backend.acquire(key("timed-" + i), SPEC);
            acquireMillis.add(Duration.ofNanos(System.nanoTime() - start).toMillis());
            run(sandbox, "true");
            millis.add(Duration.ofNanos(System.nanoTime() - start).toMillis());
            backend.dispose(key("timed-" + i));
        }
        Collections.sort(millis);
        Collections.sort(acquireMillis);
        System.out.println("restore acquire + first exec, ms (sorted): " + millis + "; median "
                + (millis.get(4) + millis.get(5)) / 2 + "; the acquire alone: " + acquireMillis + "; median "
                + (acquireMillis.get(4) + acquireMillis.get(5)) / 2);

        assertThat(fastAcquire(backend)).contains("11 guest(s) restored");
        assertThat(millis.get(5)).isLessThan(30_000);
    }
}
