package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.testkit.Fixtures.OUTSIDE;
import static org.sandbox4j.testkit.Fixtures.WORK;
import static org.sandbox4j.testkit.Fixtures.utf8;

import org.junit.jupiter.api.Test;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxPathNotConfined;

/** The run-time planting hooks the conformance TCK's in-memory guest side uses. */
class InMemorySandboxPlantTest {

    private final InMemorySandbox sandbox = InMemorySandbox.builder().build();

    @Test
    void aPlantedFileIsStoredWithItsParentsAsDirectories() {
        sandbox.plantFile(OUTSIDE + "/sub/secret.txt", utf8("secret"));

        assertThat(sandbox.contentOf(OUTSIDE + "/sub/secret.txt")).hasValueSatisfying(
                bytes -> assertThat(bytes).isEqualTo(utf8("secret")));
        assertThat(sandbox.kindAt(OUTSIDE + "/sub")).contains(EntryKind.DIRECTORY);
    }

    @Test
    void aPlantedFileIsACopyAndReplacesAnEarlierOne() {
        byte[] content = utf8("first");
        sandbox.plantFile(WORK + "/a.txt", content);
        content[0] = 'X';
        assertThat(sandbox.contentOf(WORK + "/a.txt")).hasValueSatisfying(
                bytes -> assertThat(bytes).isEqualTo(utf8("first")));

        sandbox.plantFile(WORK + "/a.txt", utf8("second"));
        assertThat(sandbox.contentOf(WORK + "/a.txt")).hasValueSatisfying(
                bytes -> assertThat(bytes).isEqualTo(utf8("second")));
    }

    @Test
    void aPlantedLinkRecordsItsTargetAndIsNeverFollowed() {
        sandbox.plantFile(OUTSIDE + "/secret.txt", utf8("secret"));
        sandbox.plantSymlink(WORK + "/link-dir", OUTSIDE);

        assertThat(sandbox.kindAt(WORK + "/link-dir")).contains(EntryKind.SYMLINK);
        assertThat(sandbox.symlinkTarget(WORK + "/link-dir")).contains(OUTSIDE);
        assertThat(sandbox.kindAt(WORK + "/link-dir/secret.txt")).isEmpty();
        assertThat(sandbox.stat("link-dir", WORK)).contains(SandboxEntry.symlink("link-dir"));
        assertThatThrownBy(() -> sandbox.stat("link-dir/secret.txt", WORK))
                .isInstanceOf(SandboxPathNotConfined.class);
    }

    @Test
    void aLinkMayReplaceAFileOrLinkAndItsTargetGoesWithIt() {
        sandbox.plantFile(WORK + "/x", utf8("file"));
        sandbox.plantSymlink(WORK + "/x", "/first");
        sandbox.plantSymlink(WORK + "/x", "/second");
        assertThat(sandbox.symlinkTarget(WORK + "/x")).contains("/second");

        sandbox.remove("x", WORK, false);
        assertThat(sandbox.symlinkTarget(WORK + "/x")).isEmpty();
        assertThat(sandbox.exists(WORK + "/x")).isFalse();
    }

    @Test
    void aRecursiveRemovalForgetsTheTargetsOfLinksInside() {
        sandbox.plantSymlink(WORK + "/tree/link", "/anywhere");
        sandbox.remove("tree", WORK, true);
        sandbox.plantDirectory(WORK + "/tree");
        sandbox.plantFile(WORK + "/tree/file", utf8("f"));

        assertThat(sandbox.symlinkTarget(WORK + "/tree/link")).isEmpty();
        assertThat(sandbox.symlinks()).isEmpty();
    }

    @Test
    void aPlantedDirectoryExistsWhileEmptyAndPlantingItAgainChangesNothing() {
        sandbox.plantDirectory(WORK + "/empty");
        sandbox.plantDirectory(WORK + "/empty");
        sandbox.plantDirectory("/");

        assertThat(sandbox.kindAt(WORK + "/empty")).contains(EntryKind.DIRECTORY);
        assertThat(sandbox.listDir("empty", WORK)).isEmpty();
    }

    @Test
    void shapesNoGuestHasAreRefused() {
        sandbox.plantFile(WORK + "/plain.txt", utf8("plain"));
        sandbox.plantSymlink(WORK + "/link", OUTSIDE);
        sandbox.plantDirectory(WORK + "/dir");

        assertThatThrownBy(() -> sandbox.plantFile(WORK + "/link/x.txt", utf8("x")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("link has no target");
        assertThatThrownBy(() -> sandbox.plantDirectory(WORK + "/plain.txt/sub"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a directory");
        assertThatThrownBy(() -> sandbox.plantFile(WORK + "/dir", utf8("x")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a directory is there");
        assertThatThrownBy(() -> sandbox.plantSymlink(WORK + "/dir", OUTSIDE))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a directory is there");
        assertThatThrownBy(() -> sandbox.plantDirectory(WORK + "/plain.txt"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("a file is there");
        assertThatThrownBy(() -> sandbox.plantFile(WORK + "/link", utf8("x")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("never follows a link");
        assertThatThrownBy(() -> sandbox.plantFile("relative.txt", utf8("x")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(sandbox.contentOf(WORK + "/plain.txt")).hasValueSatisfying(
                bytes -> assertThat(bytes).isEqualTo(utf8("plain")));
        assertThat(sandbox.symlinkTarget(WORK + "/link")).contains(OUTSIDE);
    }
}
