package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.testkit.Fixtures.OUTSIDE;
import static org.sandbox4j.testkit.Fixtures.WORK;
import static org.sandbox4j.testkit.Fixtures.state;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxPathNotConfined;

class InMemorySandboxRemoveTest {

    @Test
    void aRemovalRemovesOnlyItsTarget() {
        InMemorySandbox sandbox = layout();

        sandbox.remove("doomed.txt", WORK, false);

        assertThat(sandbox.exists(WORK + "/doomed.txt")).isFalse();
        assertThat(sandbox.exists(WORK + "/bystander.txt")).isTrue();
    }

    @ParameterizedTest(name = "recursive = {0}")
    @ValueSource(booleans = {false, true})
    void aMissingPathIsSuccessEveryTime(boolean recursive) {
        InMemorySandbox sandbox = layout();

        sandbox.remove("doomed.txt", WORK, recursive);
        String after = state(sandbox);

        assertThatCode(() -> sandbox.remove("doomed.txt", WORK, recursive)).doesNotThrowAnyException();
        assertThatCode(() -> sandbox.remove("never/was.txt", WORK, recursive)).doesNotThrowAnyException();
        assertThat(state(sandbox)).isEqualTo(after);
    }

    @ParameterizedTest(name = "recursive = {0}")
    @ValueSource(booleans = {false, true})
    void aLinkIsRemovedItselfNeverFollowed(boolean recursive) {
        InMemorySandbox sandbox = layout();

        sandbox.remove("link-out", WORK, recursive);

        assertThat(sandbox.symlinks()).doesNotContain(WORK + "/link-out");
        assertThat(sandbox.contentOf(OUTSIDE + "/target.txt")).isPresent();
    }

    @Test
    void aDeviceIsRemovedWithoutRecursive() {
        InMemorySandbox sandbox = layout();

        sandbox.remove("fifo", WORK, false);

        assertThat(sandbox.nonRegular()).containsExactly(WORK + "/tree/socket");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"dir", "empty"})
    void aDirectoryNeedsRecursiveEvenWhenEmpty(String directory) {
        InMemorySandbox sandbox = layout();
        String before = state(sandbox);

        assertThatThrownBy(() -> sandbox.remove(directory, WORK, false))
                .isExactlyInstanceOf(SandboxFileException.class)
                .hasMessageContaining("'" + directory + "'")
                .hasMessageContaining("recursive");
        assertThat(state(sandbox)).isEqualTo(before);

        sandbox.remove(directory, WORK, true);
        assertThat(sandbox.exists(WORK + "/" + directory)).isFalse();
    }

    @Test
    void recursiveRemovesTheTreeAndLeavesPrefixSiblings() {
        InMemorySandbox sandbox = layout();

        sandbox.remove("tree", WORK, true);

        assertThat(sandbox.exists(WORK + "/tree")).isFalse();
        assertThat(sandbox.contents()).doesNotContainKeys(WORK + "/tree/leaf.txt", WORK + "/tree/deeper/leaf.txt");
        assertThat(sandbox.directories()).doesNotContain(WORK + "/tree/empty");
        assertThat(sandbox.symlinks()).doesNotContain(WORK + "/tree/inside-link");
        assertThat(sandbox.nonRegular()).doesNotContain(WORK + "/tree/socket");
        assertThat(sandbox.contents()).containsKeys(WORK + "/tree2/sibling.txt", WORK + "/next-to-tree.txt",
                OUTSIDE + "/interior-target.txt");
        assertThat(sandbox.exists(WORK + "/tree-plus")).isTrue();
    }

    @Test
    void removingTheLastFileOfAnImpliedDirectoryLeavesNoDirectory() {
        InMemorySandbox sandbox = InMemorySandbox.builder().seedFile(WORK + "/only/file.txt", "x").build();

        sandbox.remove("only/file.txt", WORK, false);

        // Seeded parents are implied, not created: the fake's documented shape.
        assertThat(sandbox.exists(WORK + "/only")).isFalse();
    }

    static Stream<Arguments> refusedRemovals() {
        return Stream.of(
                Arguments.of("the working directory", ".", WORK, SandboxPathNotConfined.class),
                Arguments.of("the working directory, spelled absolute", WORK + "/", WORK, SandboxPathNotConfined.class),
                Arguments.of("outside", "../outside/target.txt", WORK, SandboxPathNotConfined.class),
                Arguments.of("outside, absolute", OUTSIDE + "/target.txt", WORK, SandboxPathNotConfined.class),
                Arguments.of("the root", "/", WORK, SandboxPathNotConfined.class),
                Arguments.of("a backslash", "tree\\leaf.txt", WORK, SandboxPathNotConfined.class),
                Arguments.of("through a linked parent", "link-dir/target.txt", WORK, SandboxPathNotConfined.class),
                Arguments.of("under a linked working directory", "target.txt", WORK + "/link-dir",
                        SandboxPathNotConfined.class),
                Arguments.of("below a file", "doomed.txt/deeper", WORK, SandboxNotADirectory.class));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusedRemovals")
    void aRefusedRemovalChangesNothingWithEitherFlag(String description, String path, String workingDirectory,
            Class<? extends SandboxException> refusal) {
        for (boolean recursive : new boolean[] {false, true}) {
            InMemorySandbox sandbox = layout();
            String before = state(sandbox);

            assertThatThrownBy(() -> sandbox.remove(path, workingDirectory, recursive)).isInstanceOf(refusal);
            assertThat(state(sandbox)).isEqualTo(before);
        }
    }

    @Test
    void theWorkingDirectoryRefusalSaysWhatToDo() {
        assertThatThrownBy(() -> layout().remove(".", WORK, true))
                .hasMessageContaining("working directory itself")
                .hasMessageContaining("remove the entries inside it");
    }

    static InMemorySandbox layout() {
        return InMemorySandbox.builder()
                .seedFile(OUTSIDE + "/target.txt", "known")
                .seedFile(OUTSIDE + "/interior-target.txt", "known")
                .seedFile(WORK + "/doomed.txt", "doomed")
                .seedFile(WORK + "/bystander.txt", "bystander")
                .seedSymlink(WORK + "/link-out")
                .seedSymlink(WORK + "/link-dir")
                .seedOther(WORK + "/fifo")
                .seedFile(WORK + "/dir/keeps.txt", "keeps")
                .seedDirectory(WORK + "/empty")
                .seedFile(WORK + "/tree/leaf.txt", "leaf")
                .seedFile(WORK + "/tree/deeper/leaf.txt", "leaf")
                .seedDirectory(WORK + "/tree/empty")
                .seedSymlink(WORK + "/tree/inside-link")
                .seedOther(WORK + "/tree/socket")
                .seedFile(WORK + "/tree2/sibling.txt", "sibling")
                .seedDirectory(WORK + "/tree-plus")
                .seedFile(WORK + "/next-to-tree.txt", "neighbour")
                .build();
    }
}
