package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.testkit.Fixtures.OUTSIDE;
import static org.sandbox4j.testkit.Fixtures.WORK;
import static org.sandbox4j.testkit.Fixtures.state;
import static org.sandbox4j.testkit.Fixtures.text;

import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxIsADirectory;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxNotARegularFile;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.SandboxTransferCapExceeded;

/** stat and readFile: the pull surface. */
class InMemorySandboxPullTest {

    private static final long GENEROUS = 1024;

    static Stream<Arguments> statAnswers() {
        return Stream.of(
                Arguments.of("plain.txt", WORK, Optional.of(SandboxEntry.file("plain.txt", 5))),
                Arguments.of(WORK + "/plain.txt", WORK, Optional.of(SandboxEntry.file("plain.txt", 5))),
                Arguments.of("empty.txt", WORK, Optional.of(SandboxEntry.file("empty.txt", 0))),
                Arguments.of("implied/inner.txt", WORK, Optional.of(SandboxEntry.file("implied/inner.txt", 5))),
                Arguments.of("inner.txt", WORK + "/implied", Optional.of(SandboxEntry.file("inner.txt", 5))),
                Arguments.of("dir", WORK, Optional.of(SandboxEntry.directory("dir"))),
                Arguments.of("implied", WORK, Optional.of(SandboxEntry.directory("implied"))),
                Arguments.of(".", WORK, Optional.of(SandboxEntry.directory("."))),
                Arguments.of("link-file", WORK, Optional.of(SandboxEntry.symlink("link-file"))),
                Arguments.of("link-dir", WORK, Optional.of(SandboxEntry.symlink("link-dir"))),
                Arguments.of("fifo", WORK, Optional.of(SandboxEntry.other("fifo"))),
                Arguments.of("missing.txt", WORK, Optional.empty()),
                Arguments.of("missing/deeper.txt", WORK, Optional.empty()),
                Arguments.of("sub/../plain.txt", WORK, Optional.of(SandboxEntry.file("plain.txt", 5))));
    }

    @ParameterizedTest(name = "stat {0} in {1}")
    @MethodSource("statAnswers")
    void statDescribesTheFinalComponentWithoutFollowingIt(String path, String workingDirectory,
            Optional<SandboxEntry> expected) {
        assertThat(layout().stat(path, workingDirectory)).isEqualTo(expected);
    }

    static Stream<Arguments> refusedPulls() {
        return Stream.of(
                Arguments.of("outside", "../outside/target.txt", WORK, SandboxPathNotConfined.class),
                Arguments.of("a backslash", "sub\\plain.txt", WORK, SandboxPathNotConfined.class),
                Arguments.of("through a linked parent", "link-dir/target.txt", WORK, SandboxPathNotConfined.class),
                Arguments.of("a linked working directory", "leaf.txt", WORK + "/link-dir",
                        SandboxPathNotConfined.class),
                Arguments.of("a linked ancestor of the working directory", "leaf.txt", WORK + "/link-dir/sub",
                        SandboxPathNotConfined.class),
                Arguments.of("a plain parent is not an escape", "plain.txt/deeper.txt", WORK,
                        SandboxNotADirectory.class),
                Arguments.of("a device parent is not an escape", "fifo/deeper.txt", WORK,
                        SandboxNotADirectory.class));
    }

    @ParameterizedTest(name = "stat: {0}")
    @MethodSource("refusedPulls")
    void statRefuses(String description, String path, String workingDirectory,
            Class<? extends SandboxException> refusal) {
        InMemorySandbox sandbox = layout();
        String before = state(sandbox);

        assertThatThrownBy(() -> sandbox.stat(path, workingDirectory)).isInstanceOf(refusal);
        assertThat(state(sandbox)).isEqualTo(before);
    }

    @ParameterizedTest(name = "readFile: {0}")
    @MethodSource("refusedPulls")
    void readRefuses(String description, String path, String workingDirectory,
            Class<? extends SandboxException> refusal) {
        InMemorySandbox sandbox = layout();
        String before = state(sandbox);

        assertThatThrownBy(() -> sandbox.readFile(path, workingDirectory, GENEROUS)).isInstanceOf(refusal);
        assertThat(state(sandbox)).isEqualTo(before);
    }

    @Test
    void aReadReturnsTheBytes() {
        assertThat(text(layout().readFile("implied/inner.txt", WORK, GENEROUS))).isEqualTo("inner");
    }

    @Test
    void aReadOfExactlyTheCapSucceeds() {
        assertThat(text(layout().readFile("plain.txt", WORK, 5))).isEqualTo("plain");
        assertThat(layout().readFile("empty.txt", WORK, 0)).isEmpty();
    }

    @Test
    void aReadOverTheCapIsRefusedNeverTruncated() {
        assertThatThrownBy(() -> layout().readFile("plain.txt", WORK, 4))
                .isInstanceOf(SandboxTransferCapExceeded.class)
                .hasMessageContaining("'plain.txt'")
                .hasMessageContaining("5 bytes")
                .hasMessageContaining("never truncated");
    }

    @Test
    void aNegativeCapIsAProgrammingError() {
        assertThatThrownBy(() -> layout().readFile("plain.txt", WORK, -1)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theReturnedBytesAreACopy() {
        InMemorySandbox sandbox = layout();

        sandbox.readFile("plain.txt", WORK, GENEROUS)[0] = 'X';

        assertThat(text(sandbox.readFile("plain.txt", WORK, GENEROUS))).isEqualTo("plain");
    }

    static Stream<Arguments> unreadable() {
        return Stream.of(
                Arguments.of("link-file", SandboxNotARegularFile.class),
                Arguments.of("fifo", SandboxNotARegularFile.class),
                Arguments.of("dir", SandboxIsADirectory.class),
                Arguments.of("implied", SandboxIsADirectory.class),
                Arguments.of(".", SandboxIsADirectory.class),
                Arguments.of("missing.txt", SandboxFileNotFound.class),
                Arguments.of("missing/deeper.txt", SandboxFileNotFound.class));
    }

    @ParameterizedTest(name = "readFile {0}")
    @MethodSource("unreadable")
    void onlyRegularFilesAreRead(String path, Class<? extends SandboxException> refusal) {
        assertThatThrownBy(() -> layout().readFile(path, WORK, GENEROUS))
                .isInstanceOf(refusal)
                .hasMessageContaining("'" + path + "'");
    }

    /** Shape of the conformance FILES_OUT fixture: a work dir with every kind, and a known file outside. */
    static InMemorySandbox layout() {
        return InMemorySandbox.builder()
                .seedFile(OUTSIDE + "/target.txt", "known")
                .seedFile(OUTSIDE + "/sub/leaf.txt", "leaf")
                .seedFile(WORK + "/plain.txt", "plain")
                .seedFile(WORK + "/empty.txt", new byte[0])
                .seedFile(WORK + "/implied/inner.txt", "inner")
                .seedDirectory(WORK + "/dir")
                .seedSymlink(WORK + "/link-dir")
                .seedSymlink(WORK + "/link-file")
                .seedOther(WORK + "/fifo")
                .build();
    }
}
