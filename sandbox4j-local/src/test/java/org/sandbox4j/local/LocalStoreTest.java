package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;

/** The on-disk store: owner-only directories, whole creation and removal, locks, link-safe deletion. */
@EnabledOnOs(OS.LINUX)
class LocalStoreTest {

    private static final SandboxKey KEY = new SandboxKey("store-scope", "store-thread", "agent");

    @TempDir
    Path tempDir;

    @Test
    void openingMakesTheStateRootTheStoreAndItsLocksOwnerOnly() throws IOException {
        Path stateRoot = tempDir.resolve("state");

        LocalStore store = LocalStore.open(stateRoot, "bubblewrap", "test");

        assertThat(store.root()).isEqualTo(stateRoot.resolve("bubblewrap"));
        for (Path directory : List.of(stateRoot, store.root(), store.root().resolve(".locks"))) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(directory)))
                    .as("%s", directory).isEqualTo("rwx------");
        }
    }

    @Test
    void aStateRootThatIsARegularFileIsRefusedNamingIt() throws IOException {
        Path file = Files.writeString(tempDir.resolve("file"), "x");

        assertThatThrownBy(() -> LocalStore.open(file, "bubblewrap", "test"))
                .isExactlyInstanceOf(SandboxException.class)
                .hasMessageContaining("cannot use the state root " + file);
    }

    @Test
    void createBuildsTheWholeSandboxUnderATemporaryNameAndRenamesItIntoPlace() throws IOException {
        LocalStore store = LocalStore.open(tempDir.resolve("s"), "bubblewrap", "test");
        SandboxRecord record = SandboxRecord.fresh("sbx-0001", KEY, "kind", "fp", Duration.ofMinutes(1));
        List<Path> seenWhileBuilding = new java.util.ArrayList<>();

        Path created = store.create(record, building -> {
            seenWhileBuilding.add(building);
            assertThat(building.getFileName().toString()).startsWith(".building-");
            assertThat(store.records()).as("no record is visible while building").isEmpty();
            Files.createDirectories(building.resolve("workspace/work"));
        });

        assertThat(created).isEqualTo(store.directory("sbx-0001"));
        assertThat(created.resolve("workspace/work")).isDirectory();
        assertThat(seenWhileBuilding.get(0)).doesNotExist();
        assertThat(store.records()).containsExactly(SandboxRecord.read(created).orElseThrow());
        assertThat(store.debris()).isEmpty();
    }

    @Test
    void aFailedBuildLeavesNothingBehind() throws IOException {
        LocalStore store = LocalStore.open(tempDir.resolve("s"), "bubblewrap", "test");
        SandboxRecord record = SandboxRecord.fresh("sbx-0002", KEY, "kind", "fp", Duration.ofMinutes(1));

        assertThatThrownBy(() -> store.create(record, building -> {
            Files.writeString(building.resolve("half"), "half a sandbox");
            throw new IOException("disk full");
        })).hasMessage("disk full");

        assertThat(store.directory("sbx-0002")).doesNotExist();
        assertThat(store.debris()).isEmpty();
        assertThat(store.records()).isEmpty();
    }

    @Test
    void retireTakesTheSandboxAwayAtOnceAndDeleteRetiredRemovesItWhole() throws IOException {
        LocalStore store = LocalStore.open(tempDir.resolve("s"), "bubblewrap", "test");
        store.create(SandboxRecord.fresh("sbx-0003", KEY, "kind", "fp", Duration.ofMinutes(1)),
                building -> Files.createDirectories(building.resolve("workspace/deep/er")));

        Path retired = store.retire("sbx-0003").orElseThrow();
        assertThat(store.directory("sbx-0003")).as("gone by its id at once").doesNotExist();
        assertThat(store.debris()).containsExactly(retired);
        LocalStore.deleteRetired(retired);

        assertThat(store.debris()).as("no half-removed directory left").isEmpty();
        assertThat(store.retire("sbx-0003")).as("already gone").isEmpty();
    }

    @Test
    void theLockFileGoesWithTheSandboxAndAWaiterOnTheRemovedFileLocksAfresh() throws Exception {
        LocalStore store = LocalStore.open(tempDir.resolve("s"), "bubblewrap", "test");
        Path locks = store.root().resolve(".locks");
        java.util.concurrent.CountDownLatch holding = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger inside = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger mostInside = new java.util.concurrent.atomic.AtomicInteger();
        Thread remover = new Thread(() -> store.locked("sbx-0004", () -> {
            inside.incrementAndGet();
            holding.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            store.removeLock("sbx-0004");
            inside.decrementAndGet();
            return null;
        }));
        remover.start();
        holding.await();
        List<Thread> waiters = new java.util.ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Thread waiter = new Thread(() -> store.locked("sbx-0004", () -> {
                mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
                Thread.onSpinWait();
                inside.decrementAndGet();
                return null;
            }));
            waiters.add(waiter);
            waiter.start();
        }
        Thread.sleep(200);
        release.countDown();
        remover.join();
        for (Thread waiter : waiters) {
            waiter.join();
        }

        assertThat(mostInside.get()).as("never two holders at once, across a removed lock file").isEqualTo(1);
        store.locked("sbx-0004", () -> {
            store.removeLock("sbx-0004");
            return null;
        });
        try (var left = Files.list(locks)) {
            assertThat(left).as("no lock file outlives its sandbox").isEmpty();
        }
        assertThat(LocalStore.jvmLockEntries()).as("no in-JVM lock outlives its users").isZero();
    }

    @Test
    void recordsSkipsDirectoriesWithoutAReadableRecord() throws IOException {
        LocalStore store = LocalStore.open(tempDir.resolve("s"), "bubblewrap", "test");
        Files.createDirectories(store.directory("sbx-no-record"));
        Files.createDirectories(store.directory("sbx-garbled"));
        Files.writeString(store.directory("sbx-garbled").resolve(SandboxRecord.FILE_NAME), "id=sbx-garbled\n");
        store.create(SandboxRecord.fresh("sbx-good", KEY, "kind", "fp", Duration.ofMinutes(1)), building -> { });

        assertThat(store.records()).extracting(SandboxRecord::id).containsExactly("sbx-good");
    }

    @Test
    void deleteTreeRemovesLinksAsLinksAndDirectoriesTheGuestLocked() throws IOException {
        Path outside = Files.createDirectories(tempDir.resolve("outside"));
        Path precious = Files.writeString(outside.resolve("precious.txt"), "keep me");
        Path tree = Files.createDirectories(tempDir.resolve("tree/a/b"));
        Files.writeString(tree.resolve("file.txt"), "x");
        Files.createSymbolicLink(tempDir.resolve("tree/a/to-outside"), outside);
        Files.createSymbolicLink(tempDir.resolve("tree/a/to-file"), precious);
        Files.setPosixFilePermissions(tree, PosixFilePermissions.fromString("---------"));

        LocalStore.deleteTree(tempDir.resolve("tree"));

        assertThat(tempDir.resolve("tree")).doesNotExist();
        assertThat(Files.exists(tempDir.resolve("tree"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(precious).as("a link's target outside the tree").hasContent("keep me");
    }

    @Test
    void twoStoresOverOneRootInOneJvmTakeTurnsOnASandboxsLock() throws Exception {
        Path stateRoot = tempDir.resolve("s");
        LocalStore first = LocalStore.open(stateRoot, "bubblewrap", "first");
        LocalStore second = LocalStore.open(stateRoot, "bubblewrap", "second");
        CountDownLatch firstHolds = new CountDownLatch(1);
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger mostInside = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<String> one = threads.submit(() -> first.locked("sbx-shared", () -> {
                enter(inside, mostInside);
                firstHolds.countDown();
                pause(300);
                inside.decrementAndGet();
                return "first";
            }));
            assertThat(firstHolds.await(10, TimeUnit.SECONDS)).isTrue();
            Future<String> two = threads.submit(() -> second.locked("sbx-shared", () -> {
                enter(inside, mostInside);
                inside.decrementAndGet();
                return "second";
            }));

            assertThat(one.get(10, TimeUnit.SECONDS)).isEqualTo("first");
            assertThat(two.get(10, TimeUnit.SECONDS)).as("the second store waits instead of failing")
                    .isEqualTo("second");
            assertThat(mostInside.get()).as("never both inside").isEqualTo(1);
        } finally {
            threads.shutdownNow();
        }
    }

    private static void enter(AtomicInteger inside, AtomicInteger mostInside) {
        mostInside.accumulateAndGet(inside.incrementAndGet(), Math::max);
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
