package org.sandbox4j.local;

import org.sandbox4j.core.spi.WorkspaceFiles;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.local.WorkspaceFixture.INSIDE;
import static org.sandbox4j.local.WorkspaceFixture.SECRET;
import static org.sandbox4j.local.WorkspaceFixture.WORK;
import static org.sandbox4j.local.WorkspaceFixture.utf8;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxPathNotConfined;

/**
 * The guest changes the workspace while the host works in it: a directory replaced by a link
 * between calls, a directory flipping to a link and back during calls, and concurrent writers.
 * Each test checks afterwards that nothing outside the workspace was read, written or deleted.
 */
@EnabledOnOs(OS.LINUX)
class WorkspaceFilesRaceTest {

    private static final Duration FLIPPING = Duration.ofSeconds(2);

    @TempDir
    Path tempDir;

    private WorkspaceFixture fixture;
    private WorkspaceFiles files;

    @BeforeEach
    void plant() throws IOException {
        fixture = WorkspaceFixture.create(tempDir);
        files = fixture.files;
        Files.createDirectories(fixture.outside.resolve("victim"));
        Files.write(fixture.outside.resolve("victim/file.txt"), SECRET);
    }

    @Test
    void aDirectorySwappedForALinkBetweenCallsIsRefusedByEveryMethod() throws IOException {
        files.writeFile("swap/first.txt", INSIDE, WORK);
        assertThat(files.readFile("swap/first.txt", WORK, 1024)).isEqualTo(INSIDE);
        // What a guest can do between two calls: move the real directory away, plant a link in its place.
        Files.move(fixture.work.resolve("swap"), fixture.work.resolve("swap-away"));
        Files.createSymbolicLink(fixture.work.resolve("swap"), fixture.outside);
        Map<String, String> outside = fixture.outsideSnapshot();

        assertThatThrownBy(() -> files.writeFile("swap/second.txt", utf8("attack"), WORK))
                .isExactlyInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> files.writeFile("swap/new-dir/second.txt", utf8("attack"), WORK))
                .isExactlyInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> files.readFile("swap/secret.txt", WORK, 1024))
                .isExactlyInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> files.stat("swap/secret.txt", WORK)).isExactlyInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> files.listDir("swap", WORK)).isExactlyInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> files.remove("swap/secret.txt", WORK, false))
                .isExactlyInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> files.remove("swap/victim", WORK, true))
                .isExactlyInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> files.writeFile("first.txt", utf8("attack"), WORK + "/swap"))
                .isExactlyInstanceOf(SandboxPathNotConfined.class);

        assertThat(fixture.outsideSnapshot()).isEqualTo(outside);
        // The link itself is the guest's to remove, and removing it leaves its target alone.
        files.remove("swap", WORK, true);
        assertThat(fixture.outsideSnapshot()).isEqualTo(outside);
    }

    /**
     * A host thread flips {@code work/flip} between a real directory and a link to outside as fast
     * as it can while every method works through it. Each call must either do its work inside the
     * workspace or refuse; nothing outside may change, and no secret may come back.
     */
    @Test
    void aDirectoryFlippingToALinkDuringCallsNeverLetsACallOutside() throws Exception {
        Path flip = fixture.work.resolve("flip");
        Path away = fixture.work.resolve("flip-away");
        Files.createDirectories(flip);
        Files.write(flip.resolve("inside.txt"), INSIDE);
        Map<String, String> outside = fixture.outsideSnapshot();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger flips = new AtomicInteger();
        ExecutorService flipper = Executors.newSingleThreadExecutor();
        Future<?> flipping = flipper.submit(() -> {
            while (!stop.get()) {
                try {
                    Files.move(flip, away);
                    // While nothing is at 'flip', a write may make it afresh: clear that away each time.
                    deleteTree(flip);
                    Files.createSymbolicLink(flip, fixture.outside);
                    Thread.onSpinWait();
                    Files.delete(flip);
                    deleteTree(flip);
                    Files.move(away, flip);
                    flips.incrementAndGet();
                } catch (IOException | UncheckedIOException madeMeanwhile) {
                    // A write made 'flip' in an instant when nothing was there: put the real one back.
                    try {
                        if (Files.exists(away, LinkOption.NOFOLLOW_LINKS)) {
                            deleteTree(flip);
                            moveQuietly(away, flip);
                        }
                    } catch (UncheckedIOException stillRacing) {
                        // The next turn tries again.
                    }
                }
            }
        });
        List<String> unexpected = new ArrayList<>();
        int refused = 0;
        int done = 0;
        long deadline = System.nanoTime() + FLIPPING.toNanos();
        try {
            while (System.nanoTime() < deadline) {
                for (Runnable call : callsThroughTheFlip()) {
                    try {
                        call.run();
                        done++;
                    } catch (SandboxException refusal) {
                        refused++;
                    } catch (RuntimeException | AssertionError e) {
                        unexpected.add(e.toString());
                    }
                }
            }
        } finally {
            stop.set(true);
            flipping.get(10, TimeUnit.SECONDS);
            flipper.shutdownNow();
        }

        System.out.printf("flip race: %d flips, %d calls done, %d refused%n", flips.get(), done, refused);
        assertThat(unexpected).isEmpty();
        assertThat(flips.get()).as("flips").isPositive();
        assertThat(done).as("calls that did their work").isPositive();
        assertThat(refused).as("calls refused").isPositive();
        assertThat(fixture.outsideSnapshot()).isEqualTo(outside);
        assertThat(fixture.outside.resolve("secret.txt")).hasBinaryContent(SECRET);
        assertThat(WorkspaceFilesTest.leftovers(fixture.workspace)).isEmpty();
    }

    private List<Runnable> callsThroughTheFlip() {
        return List.of(
                () -> files.writeFile("flip/written.txt", utf8("written"), WORK),
                () -> files.writeFile("flip/made/deeper.txt", utf8("written"), WORK),
                () -> files.writeFile("written-in-wd.txt", utf8("written"), WORK + "/flip"),
                () -> assertThat(files.readFile("flip/inside.txt", WORK, 1024)).isEqualTo(INSIDE),
                () -> assertThat(files.readFile("flip/secret.txt", WORK, 1024)).isNotEqualTo(SECRET),
                () -> assertThat(files.stat("flip/secret.txt", WORK)).isEmpty(),
                () -> assertThat(files.listDir("flip", WORK)).extracting(SandboxEntry::path)
                        .doesNotContain("flip/secret.txt", "flip/victim", "flip/sub"),
                () -> files.remove("flip/secret.txt", WORK, false),
                () -> files.remove("flip/victim", WORK, true),
                () -> files.remove("flip/made", WORK, true));
    }

    @Test
    void concurrentWritersToOneFileLeaveOneCompleteVersion() throws Exception {
        int writers = 8;
        int rounds = 25;
        int size = 64 * 1024;
        ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
        CountDownLatch start = new CountDownLatch(1);
        AtomicBoolean writing = new AtomicBoolean(true);
        ConcurrentLinkedQueue<String> torn = new ConcurrentLinkedQueue<>();
        files.writeFile("contended.bin", version((byte) 'a', size), WORK);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int w = 0; w < writers; w++) {
                byte[] content = version((byte) ('b' + w), size);
                futures.add(pool.submit(() -> {
                    start.await();
                    for (int r = 0; r < rounds; r++) {
                        files.writeFile("contended.bin", content, WORK);
                    }
                    return null;
                }));
            }
            Future<?> reader = pool.submit(() -> {
                start.await();
                while (writing.get()) {
                    byte[] read = files.readFile("contended.bin", WORK, size);
                    if (!complete(read, size)) {
                        torn.add(read.length + " bytes starting " + read[0]);
                    }
                }
                return null;
            });
            start.countDown();
            for (Future<?> future : futures) {
                future.get(60, TimeUnit.SECONDS);
            }
            writing.set(false);
            reader.get(60, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }

        assertThat(torn).isEmpty();
        assertThat(complete(Files.readAllBytes(fixture.work.resolve("contended.bin")), size)).isTrue();
        assertThat(WorkspaceFilesTest.leftovers(fixture.workspace)).isEmpty();
    }

    @Test
    void concurrentWritersMakingTheSameParentsLoseNoFile() throws Exception {
        int writers = 16;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            for (int round = 0; round < 10; round++) {
                String directory = "fresh-" + round + "/a/b/c";
                CountDownLatch start = new CountDownLatch(1);
                List<Future<?>> futures = new ArrayList<>();
                for (int w = 0; w < writers; w++) {
                    String path = directory + "/file-" + w + ".txt";
                    futures.add(pool.submit(() -> {
                        start.await();
                        files.writeFile(path, utf8(path), WORK);
                        return null;
                    }));
                }
                start.countDown();
                for (Future<?> future : futures) {
                    future.get(60, TimeUnit.SECONDS);
                }
                for (int w = 0; w < writers; w++) {
                    String path = directory + "/file-" + w + ".txt";
                    assertThat(fixture.work.resolve(path)).as(path).hasBinaryContent(utf8(path));
                }
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(WorkspaceFilesTest.leftovers(fixture.workspace)).isEmpty();
    }

    @Test
    void aLinkPlantedWhereAParentWillBeMadeIsNotFollowed() throws IOException {
        Files.createSymbolicLink(fixture.work.resolve("later"), fixture.outside.resolve("made-by-host"));
        Map<String, String> outside = fixture.outsideSnapshot();

        assertThatThrownBy(() -> files.writeFile("later/x.txt", INSIDE, WORK))
                .isExactlyInstanceOf(SandboxPathNotConfined.class);

        assertThat(Files.exists(fixture.outside.resolve("made-by-host"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(fixture.outsideSnapshot()).isEqualTo(outside);
        assertThat(files.stat("later", WORK).map(SandboxEntry::withoutAttributes)).isEqualTo(Optional.of(SandboxEntry.symlink("later")));
    }

    /** Deletes a host tree made by the writes under test, never following a link. */
    private static void deleteTree(Path root) {
        if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException failure) {
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path directory, IOException failure) throws IOException {
                    try {
                        Files.deleteIfExists(directory);
                    } catch (DirectoryNotEmptyException refilled) {
                        // A write landed meanwhile; the next turn clears it.
                    }
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void moveQuietly(Path from, Path to) {
        try {
            Files.move(from, to);
        } catch (IOException ignored) {
            // The next turn tries again.
        }
    }

    private static byte[] version(byte fill, int size) {
        byte[] content = new byte[size];
        Arrays.fill(content, fill);
        return content;
    }

    /** Whether {@code read} is one writer's whole version: the full size, one byte value throughout. */
    private static boolean complete(byte[] read, int size) {
        if (read.length != size) {
            return false;
        }
        for (byte b : read) {
            if (b != read[0]) {
                return false;
            }
        }
        return true;
    }
}
