package org.sandbox4j.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link TreeRemoval} on real directories: everything under the top goes, nothing a link in it
 * names is touched (not its files, not its mode), however deep or wide the tree, and even while
 * another thread keeps swapping a directory of it for a link to a decoy.
 */
@EnabledOnOs(OS.LINUX)
class TreeRemovalTest {

    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final int DECOY_FILES = 50;

    @TempDir
    Path scratch;

    private Path decoy;
    private Path top;

    @BeforeEach
    void decoyAndTop() throws IOException {
        decoy = Files.createDirectory(scratch.resolve("decoy"));
        for (int i = 0; i < DECOY_FILES; i++) {
            Files.writeString(decoy.resolve("keep-" + i), "decoy " + i);
        }
        Files.createDirectory(decoy.resolve("sub"));
        Files.setPosixFilePermissions(decoy, PosixFilePermissions.fromString("rwxr-xr-x"));
        top = Files.createDirectory(scratch.resolve("top"));
    }

    @Test
    void aTreeGoesWholeAndNothingItsLinksNameIsTouched() throws IOException {
        Files.createDirectories(top.resolve("a/b/c"));
        Files.writeString(top.resolve("a/b/c/file"), "x");
        Files.createSymbolicLink(top.resolve("a/abs-link"), decoy);
        Files.createSymbolicLink(top.resolve("a/b/rel-link"), Path.of("../../../decoy"));
        Files.createSymbolicLink(top.resolve("a/b/file-link"), decoy.resolve("keep-0"));
        Files.setPosixFilePermissions(top.resolve("a/b"), PosixFilePermissions.fromString("r-x------"));

        TreeRemoval.remove(top, TreeRemoval.Mode.PROCESSES_STOPPED, DEADLINE);

        assertThat(top).doesNotExist();
        assertDecoyIntact();
    }

    @Test
    void aLinkAtTheTopIsUnlinkedNotFollowed() throws IOException {
        Files.delete(top);
        Files.createSymbolicLink(top, decoy);

        TreeRemoval.remove(top, TreeRemoval.Mode.PROCESSES_STOPPED, DEADLINE);

        assertThat(top).doesNotExist();
        assertThat(Files.isSymbolicLink(top)).isFalse();
        assertDecoyIntact();
    }

    @Test
    void aTreeThousandsOfLevelsDeepGoesWhole() throws IOException {
        // Deeper than any path can name (PATH_MAX is 4096 bytes): only handle-relative steps reach its bottom.
        Path shallow = top;
        int levels = 2500;
        try (var chain = new DeepChain(top)) {
            for (int i = 0; i < levels; i++) {
                chain.descend("d");
            }
            chain.writeFile("bottom", "the bottom");
        }
        assertThat(shallow.resolve("d/d/d")).isDirectory();

        TreeRemoval.remove(top, TreeRemoval.Mode.PROCESSES_STOPPED, DEADLINE);

        assertThat(top).doesNotExist();
    }

    @Test
    void aDirectoryWithTensOfThousandsOfEntriesGoesWhole() throws IOException {
        Path wide = Files.createDirectory(top.resolve("wide"));
        for (int i = 0; i < 20_000; i++) {
            Files.createFile(wide.resolve("f" + i));
        }

        TreeRemoval.remove(top, TreeRemoval.Mode.GUEST_MAY_RUN, DEADLINE);

        assertThat(top).doesNotExist();
    }

    @Test
    void aDirectorySwappedForALinkWhileTheRemovalRunsNeverLeadsOutOfTheTree() throws Exception {
        for (int round = 0; round < 30; round++) {
            Path tree = Files.createDirectory(scratch.resolve("racing-" + round));
            Path victim = tree.resolve("victim");
            Path aside = tree.resolve("aside");
            Files.createDirectories(victim);
            for (int i = 0; i < 200; i++) {
                Files.writeString(victim.resolve("f" + i), "x");
            }
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger swaps = new AtomicInteger();
            Thread racer = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        // victim becomes a link to the decoy, then a directory again.
                        Files.move(victim, aside, StandardCopyOption.ATOMIC_MOVE);
                        Files.createSymbolicLink(victim, decoy);
                        swaps.incrementAndGet();
                        Files.delete(victim);
                        Files.move(aside, victim, StandardCopyOption.ATOMIC_MOVE);
                    } catch (IOException | RuntimeException raced) {
                        // The removal took something away: keep racing with what is left.
                        if (!Files.exists(tree, LinkOption.NOFOLLOW_LINKS)) {
                            return;
                        }
                    }
                }
            });
            racer.start();
            try {
                TreeRemoval.remove(tree, TreeRemoval.Mode.GUEST_MAY_RUN, DEADLINE);
            } catch (TreeRemoval.Incomplete raced) {
                // A racer that refills the tree may end a pass: safety, not completeness, is the point here.
            } finally {
                stop.set(true);
                racer.join();
            }
            assertDecoyIntact();
        }
    }

    @Test
    void aRemovalPastItsDeadlineSaysSoAndLeavesTheRestUnderTheTop() throws IOException {
        for (int i = 0; i < 100; i++) {
            Files.createFile(top.resolve("f" + i));
        }

        assertThatThrownBy(() -> TreeRemoval.remove(top, TreeRemoval.Mode.GUEST_MAY_RUN, Duration.ofNanos(1)))
                .isInstanceOf(TreeRemoval.Incomplete.class).hasMessageContaining("deadline");

        assertThat(top).isDirectory();
        assertDecoyIntact();
    }

    @Test
    void aFifoInTheTreeIsUnlinkedWithoutBeingOpened() throws Exception {
        Process mkfifo = new ProcessBuilder("mkfifo", top.resolve("pipe").toString()).start();
        assertThat(mkfifo.waitFor()).isZero();

        TreeRemoval.remove(top, TreeRemoval.Mode.GUEST_MAY_RUN, DEADLINE);

        assertThat(top).doesNotExist();
    }

    @Test
    void missingIsSuccess() throws IOException {
        TreeRemoval.remove(scratch.resolve("never-was"), TreeRemoval.Mode.GUEST_MAY_RUN, DEADLINE);
        TreeRemoval.remove(scratch.resolve("never/was"), TreeRemoval.Mode.GUEST_MAY_RUN, DEADLINE);

        assertDecoyIntact();
    }

    private void assertDecoyIntact() throws IOException {
        assertThat(decoy).isDirectory();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(decoy))).isEqualTo("rwxr-xr-x");
        try (var files = Files.list(decoy)) {
            assertThat(files.count()).isEqualTo(DECOY_FILES + 1);
        }
        assertThat(Files.readString(decoy.resolve("keep-0"), StandardCharsets.UTF_8)).isEqualTo("decoy 0");
        assertThat(decoy.resolve("sub")).isDirectory();
    }

    /** Builds a chain of directories deeper than a path can name, one open handle at a time. */
    private static final class DeepChain implements AutoCloseable {
        private java.nio.file.SecureDirectoryStream<Path> current;

        DeepChain(Path top) throws IOException {
            current = (java.nio.file.SecureDirectoryStream<Path>) Files.newDirectoryStream(top);
        }

        void descend(String name) throws IOException {
            // mkdirat has no handle-relative form in Java: make it next to the top and move it in.
            Path staging = Files.createTempDirectory("s4j-deep");
            try (var parentOfStaging = (java.nio.file.SecureDirectoryStream<Path>) Files.newDirectoryStream(
                    staging.getParent())) {
                parentOfStaging.move(staging.getFileName(), current, Path.of(name));
            }
            java.nio.file.SecureDirectoryStream<Path> next = current.newDirectoryStream(Path.of(name),
                    LinkOption.NOFOLLOW_LINKS);
            current.close();
            current = next;
        }

        void writeFile(String name, String text) throws IOException {
            try (var channel = current.newByteChannel(Path.of(name), java.util.Set.of(
                    java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.WRITE))) {
                channel.write(java.nio.ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8)));
            }
        }

        @Override
        public void close() throws IOException {
            current.close();
        }
    }
}
