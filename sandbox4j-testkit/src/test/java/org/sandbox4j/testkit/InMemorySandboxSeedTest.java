package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.testkit.Fixtures.WORK;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.SandboxEntry;

/** Seeding, the inspection accessors, and thread safety. */
class InMemorySandboxSeedTest {

    @Test
    void eachSeedKindIsStoredWhereItsAccessorShowsIt() {
        InMemorySandbox sandbox = InMemorySandbox.builder()
                .seedFile(WORK + "/bytes.bin", new byte[] {1, 2})
                .seedFile(WORK + "/text.txt", "é")
                .seedSymlink(WORK + "/link")
                .seedDirectory(WORK + "/empty")
                .seedOther(WORK + "/socket")
                .build();

        assertThat(sandbox.contents()).containsOnlyKeys(WORK + "/bytes.bin", WORK + "/text.txt");
        assertThat(sandbox.contentOf(WORK + "/text.txt")).hasValueSatisfying(
                bytes -> assertThat(bytes).containsExactly(0xc3, 0xa9));
        assertThat(sandbox.symlinks()).containsExactly(WORK + "/link");
        assertThat(sandbox.directories()).containsExactly(WORK + "/empty");
        assertThat(sandbox.nonRegular()).containsExactly(WORK + "/socket");
        assertThat(sandbox.contentOf(WORK + "/link")).isEmpty();
    }

    @Test
    void existsCoversEveryShapeIncludingImpliedDirectoriesAndTheRoot() {
        InMemorySandbox sandbox = InMemorySandbox.builder()
                .seedFile(WORK + "/a/b.txt", "b")
                .seedSymlink(WORK + "/link")
                .seedOther(WORK + "/socket")
                .build();

        assertThat(sandbox.exists("/")).isTrue();
        assertThat(sandbox.exists("/sandbox4j")).isTrue();
        assertThat(sandbox.exists(WORK + "/a")).isTrue();
        assertThat(sandbox.exists(WORK + "/a/")).isTrue();
        assertThat(sandbox.exists(WORK + "/a/b.txt")).isTrue();
        assertThat(sandbox.exists(WORK + "/link")).isTrue();
        assertThat(sandbox.exists(WORK + "/socket")).isTrue();
        assertThat(sandbox.exists(WORK + "/a/b")).isFalse();
        assertThat(sandbox.exists(WORK + "/a/b.txt2")).isFalse();
        assertThat(sandbox.directories()).isEmpty();
    }

    @Test
    void seedPathsAreNormalised() {
        InMemorySandbox sandbox = InMemorySandbox.builder().seedFile(WORK + "//sub/./x/../a.txt", "a").build();

        assertThat(sandbox.contents()).containsOnlyKeys(WORK + "/sub/a.txt");
    }

    @Test
    void aLaterSeedOfTheSamePathReplacesTheEarlierOne() {
        InMemorySandbox sandbox = InMemorySandbox.builder()
                .seedFile(WORK + "/x", "file")
                .seedSymlink(WORK + "/x")
                .build();

        assertThat(sandbox.contents()).isEmpty();
        assertThat(sandbox.stat("x", WORK)).contains(SandboxEntry.symlink("x"));
    }

    @Test
    void anEntrySeededBelowANonDirectoryIsRefused() {
        assertThatThrownBy(() -> InMemorySandbox.builder()
                .seedSymlink(WORK + "/link-dir")
                .seedFile(WORK + "/link-dir/inner.txt", "x")
                .build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'" + WORK + "/link-dir/inner.txt'")
                .hasMessageContaining("seeded as " + EntryKind.SYMLINK.wire());
        assertThatThrownBy(() -> InMemorySandbox.builder()
                .seedFile(WORK + "/plain.txt", "x")
                .seedDirectory(WORK + "/plain.txt/sub")
                .build())
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void relativeOrRootSeedsAreRefused() {
        assertThatThrownBy(() -> InMemorySandbox.builder().seedFile("relative.txt", "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("absolute");
        assertThatThrownBy(() -> InMemorySandbox.builder().seedDirectory("/"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void accessorsRefuseRelativePaths() {
        InMemorySandbox sandbox = InMemorySandbox.builder().build();

        assertThatThrownBy(() -> sandbox.exists("a.txt")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> sandbox.contentOf("a.txt")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void seedsAndAccessorsCopyTheirBytes() {
        byte[] seeded = {1, 2, 3};
        InMemorySandbox sandbox = InMemorySandbox.builder().seedFile(WORK + "/a", seeded).build();
        seeded[0] = 9;
        sandbox.contentOf(WORK + "/a").orElseThrow()[1] = 9;
        sandbox.contents().get(WORK + "/a")[2] = 9;

        assertThat(sandbox.contentOf(WORK + "/a")).hasValueSatisfying(bytes -> assertThat(bytes).containsExactly(1, 2, 3));
    }

    @Test
    void accessorsReturnUnmodifiableSnapshots() {
        InMemorySandbox sandbox = InMemorySandbox.builder().seedSymlink(WORK + "/link").build();
        var links = sandbox.symlinks();

        sandbox.remove("link", WORK, false);

        assertThat(links).containsExactly(WORK + "/link");
        assertThatThrownBy(() -> links.add("/x")).isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> sandbox.contents().put("/x", new byte[0]))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Test
    void concurrentWritesAndCommandsAreAllKept() throws Exception {
        InMemorySandbox sandbox = InMemorySandbox.builder().build();
        int writers = 8;
        int filesEach = 50;
        ExecutorService pool = Executors.newFixedThreadPool(writers);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int writer = 0; writer < writers; writer++) {
                int id = writer;
                done.add(pool.submit(() -> {
                    for (int file = 0; file < filesEach; file++) {
                        sandbox.writeFile("w" + id + "/f" + file + ".txt", "x", WORK);
                        sandbox.exec(List.of("true"), WORK, java.time.Duration.ofSeconds(1));
                    }
                }));
            }
            for (Future<?> future : done) {
                future.get(1, TimeUnit.MINUTES);
            }
        } finally {
            pool.shutdownNow();
        }

        assertThat(sandbox.contents()).hasSize(writers * filesEach);
        assertThat(sandbox.commands()).hasSize(writers * filesEach);
        assertThat(sandbox.listDir(".", WORK)).hasSize(writers);
    }
}
