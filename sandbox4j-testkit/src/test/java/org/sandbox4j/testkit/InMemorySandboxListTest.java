package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.testkit.Fixtures.OUTSIDE;
import static org.sandbox4j.testkit.Fixtures.WORK;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxPathNotConfined;

class InMemorySandboxListTest {

    @Test
    void theWorkingDirectoryListsItsImmediateChildrenSortedAndDescribed() {
        InMemorySandbox sandbox = layout();

        assertThat(sandbox.listDir(".", WORK)).containsExactly(
                SandboxEntry.file("a.txt", 1),
                SandboxEntry.directory("deep"),
                SandboxEntry.directory("empty"),
                SandboxEntry.other("fifo"),
                SandboxEntry.symlink("link-dir"),
                SandboxEntry.symlink("link-file"),
                SandboxEntry.directory("sub"),
                SandboxEntry.directory("sub2"),
                SandboxEntry.file("z.txt", 3));
    }

    @Test
    void aSubdirectoryListsWithPathsRelativeToTheWorkingDirectory() {
        assertThat(layout().listDir("sub", WORK)).containsExactly(
                SandboxEntry.file("sub/one.txt", 3),
                SandboxEntry.directory("sub/two"));
    }

    @Test
    void aPrefixSiblingIsNotAChild() {
        assertThat(layout().listDir("sub2", WORK)).containsExactly(SandboxEntry.file("sub2/sibling.txt", 7));
    }

    @Test
    void aDeeperEntryContributesItsFirstLevelNameOnce() {
        assertThat(layout().listDir("deep", WORK)).containsExactly(SandboxEntry.directory("deep/er"));
    }

    @Test
    void anEmptyDirectoryListsNothing() {
        assertThat(layout().listDir("empty", WORK)).isEmpty();
    }

    @Test
    void theRootCanBeListed() {
        assertThat(layout().listDir("/", "/")).containsExactly(SandboxEntry.directory("sandbox4j"));
    }

    static Stream<Arguments> refusedListings() {
        return Stream.of(
                Arguments.of("a linked directory", "link-dir", WORK, SandboxPathNotConfined.class),
                Arguments.of("through a linked parent", "link-dir/sub", WORK, SandboxPathNotConfined.class),
                Arguments.of("under a linked working directory", ".", WORK + "/link-dir",
                        SandboxPathNotConfined.class),
                Arguments.of("under a linked ancestor", ".", WORK + "/link-dir/sub", SandboxPathNotConfined.class),
                Arguments.of("outside", "../outside", WORK, SandboxPathNotConfined.class),
                Arguments.of("a file", "a.txt", WORK, SandboxNotADirectory.class),
                Arguments.of("a device", "fifo", WORK, SandboxNotADirectory.class),
                Arguments.of("below a file", "a.txt/deeper", WORK, SandboxNotADirectory.class),
                Arguments.of("nothing there", "missing", WORK, SandboxFileNotFound.class),
                Arguments.of("nothing there, deeper", "missing/deeper", WORK, SandboxFileNotFound.class));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusedListings")
    void aListingIsRefused(String description, String path, String workingDirectory,
            Class<? extends SandboxException> refusal) {
        assertThatThrownBy(() -> layout().listDir(path, workingDirectory)).isInstanceOf(refusal);
    }

    static InMemorySandbox layout() {
        return InMemorySandbox.builder()
                .seedFile(OUTSIDE + "/target.txt", "known")
                .seedFile(WORK + "/z.txt", "zed")
                .seedFile(WORK + "/a.txt", "a")
                .seedFile(WORK + "/sub/one.txt", "one")
                .seedFile(WORK + "/sub/two/three.txt", "three")
                .seedFile(WORK + "/sub2/sibling.txt", "sibling")
                .seedFile(WORK + "/deep/er/est/leaf.txt", "leaf")
                .seedDirectory(WORK + "/deep/er")
                .seedDirectory(WORK + "/empty")
                .seedSymlink(WORK + "/link-dir")
                .seedSymlink(WORK + "/link-file")
                .seedOther(WORK + "/fifo")
                .build();
    }
}
