package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.testkit.Fixtures.OUTSIDE;
import static org.sandbox4j.testkit.Fixtures.WORK;
import static org.sandbox4j.testkit.Fixtures.state;
import static org.sandbox4j.testkit.Fixtures.text;
import static org.sandbox4j.testkit.Fixtures.utf8;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxIsADirectory;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxPathNotConfined;

class InMemorySandboxWriteTest {

    @Test
    void aWriteLandsAtTheConfinedAbsolutePath() {
        InMemorySandbox sandbox = InMemorySandbox.builder().build();

        sandbox.writeFile("real/written.txt", utf8("written"), WORK);

        assertThat(sandbox.contentOf(WORK + "/real/written.txt")).map(Fixtures::text).contains("written");
        assertThat(sandbox.contents()).containsOnlyKeys(WORK + "/real/written.txt");
    }

    @Test
    void anAbsolutePathInsideTheWorkingDirectoryIsAccepted() {
        InMemorySandbox sandbox = InMemorySandbox.builder().build();

        sandbox.writeFile(WORK + "/sub/a.txt", utf8("a"), WORK);
        sandbox.writeFile("./sub/../b.txt", utf8("b"), WORK + "/.");

        assertThat(sandbox.contents()).containsOnlyKeys(WORK + "/sub/a.txt", WORK + "/b.txt");
    }

    @Test
    void bytesSurviveVerbatimAndTheCallersArrayIsCopied() {
        InMemorySandbox sandbox = InMemorySandbox.builder().build();
        byte[] payload = {0, (byte) 0xff, (byte) 0xc3, 0x28, '\n', '\r'};

        sandbox.writeFile("binary.bin", payload, WORK);
        payload[0] = 42;

        assertThat(sandbox.contentOf(WORK + "/binary.bin")).hasValueSatisfying(
                stored -> assertThat(stored).containsExactly(0, 0xff, 0xc3, 0x28, '\n', '\r'));
    }

    @Test
    void stringContentIsUtf8() {
        InMemorySandbox sandbox = InMemorySandbox.builder().build();

        sandbox.writeFile("naive.txt", "naïve", WORK);

        assertThat(sandbox.contentOf(WORK + "/naive.txt")).hasValueSatisfying(
                stored -> assertThat(stored).containsExactly('n', 'a', 0xc3, 0xaf, 'v', 'e'));
    }

    @Test
    void aSecondWriteReplacesTheFirst() {
        InMemorySandbox sandbox = InMemorySandbox.builder().build();

        sandbox.writeFile("twice.txt", "first, and longer", WORK);
        sandbox.writeFile("twice.txt", "second", WORK);

        assertThat(sandbox.contentOf(WORK + "/twice.txt")).map(Fixtures::text).contains("second");
    }

    @Test
    void missingParentsAreCreatedAsDirectoriesThatOutliveTheFile() {
        InMemorySandbox sandbox = InMemorySandbox.builder().build();

        sandbox.writeFile("deep/er/est/leaf.txt", "leaf", WORK);
        sandbox.remove("deep/er/est/leaf.txt", WORK, false);

        assertThat(sandbox.directories()).contains(WORK + "/deep", WORK + "/deep/er", WORK + "/deep/er/est");
        assertThat(sandbox.exists(WORK + "/deep/er/est")).isTrue();
    }

    @Test
    void aWriteReplacesADeviceOrFifoAsARenameIntoPlaceWould() {
        InMemorySandbox sandbox = InMemorySandbox.builder().seedOther(WORK + "/fifo").build();

        sandbox.writeFile("fifo", "now a file", WORK);

        assertThat(sandbox.nonRegular()).isEmpty();
        assertThat(sandbox.contentOf(WORK + "/fifo")).map(Fixtures::text).contains("now a file");
    }

    static Stream<Arguments> refusedWrites() {
        return Stream.of(
                Arguments.of("outside, relative", "../outside/planted.txt", WORK, SandboxPathNotConfined.class),
                Arguments.of("outside, absolute", OUTSIDE + "/planted.txt", WORK, SandboxPathNotConfined.class),
                Arguments.of("a prefix-sharing sibling", WORK + "-outside/planted.txt", WORK,
                        SandboxPathNotConfined.class),
                Arguments.of("a backslash", "sub\\file.txt", WORK, SandboxPathNotConfined.class),
                Arguments.of("through a linked parent", "link-dir/landed.txt", WORK, SandboxPathNotConfined.class),
                Arguments.of("through a deeper linked parent", "link-dir/sub/landed.txt", WORK,
                        SandboxPathNotConfined.class),
                Arguments.of("onto a link", "link-file", WORK, SandboxPathNotConfined.class),
                Arguments.of("the working directory itself", ".", WORK, SandboxPathNotConfined.class),
                Arguments.of("the working directory, spelled empty", "", WORK, SandboxPathNotConfined.class),
                Arguments.of("a linked working directory", "landed.txt", WORK + "/link-dir",
                        SandboxPathNotConfined.class),
                Arguments.of("a linked ancestor of the working directory", "landed.txt", WORK + "/link-dir/sub",
                        SandboxPathNotConfined.class),
                Arguments.of("a directory leaf", "dir", WORK, SandboxIsADirectory.class),
                Arguments.of("an implied directory leaf", "implied", WORK, SandboxIsADirectory.class),
                Arguments.of("a plain-file parent", "plain.txt/deeper.txt", WORK, SandboxNotADirectory.class),
                Arguments.of("a device parent", "fifo/deeper.txt", WORK, SandboxNotADirectory.class));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusedWrites")
    void aRefusedWriteChangesNothing(String description, String path, String workingDirectory,
            Class<? extends SandboxException> refusal) {
        InMemorySandbox sandbox = seededLayout();
        String before = state(sandbox);

        assertThatThrownBy(() -> sandbox.writeFile(path, "planted", workingDirectory)).isInstanceOf(refusal);

        assertThat(state(sandbox)).isEqualTo(before);
    }

    @Test
    void aLinkedDestinationIsRefusedAndTheLinkStaysALink() {
        InMemorySandbox sandbox = seededLayout();

        assertThatThrownBy(() -> sandbox.writeFile("link-file", "planted", WORK))
                .isInstanceOf(SandboxPathNotConfined.class)
                .hasMessageContaining("'link-file'")
                .hasMessageContaining("link");

        assertThat(sandbox.symlinks()).contains(WORK + "/link-file");
        assertThat(sandbox.contentOf(OUTSIDE + "/target.txt")).map(Fixtures::text).contains("known");
    }

    @Test
    void aRefusalNamesTheOffendingComponent() {
        InMemorySandbox sandbox = seededLayout();

        assertThatThrownBy(() -> sandbox.writeFile("link-dir/landed.txt", "planted", WORK))
                .hasMessageContaining("'" + WORK + "/link-dir'");
    }

    @Test
    void nullContentIsRefused() {
        InMemorySandbox sandbox = InMemorySandbox.builder().build();

        assertThatThrownBy(() -> sandbox.writeFile("a.txt", (byte[]) null, WORK))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not null");
        assertThatThrownBy(() -> sandbox.writeFile("a.txt", (String) null, WORK))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(sandbox.contents()).isEmpty();
    }

    /** A working directory holding one of every shape, next to an outside directory with a known file. */
    static InMemorySandbox seededLayout() {
        return InMemorySandbox.builder()
                .seedFile(OUTSIDE + "/target.txt", "known")
                .seedFile(WORK + "/plain.txt", "plain")
                .seedSymlink(WORK + "/link-dir")
                .seedSymlink(WORK + "/link-file")
                .seedDirectory(WORK + "/dir")
                .seedFile(WORK + "/implied/inner.txt", "inner")
                .seedOther(WORK + "/fifo")
                .build();
    }

    @Test
    void theSeededLayoutIsWhatTheRefusalTableAssumes() {
        InMemorySandbox sandbox = seededLayout();

        assertThat(text(sandbox.contentOf(OUTSIDE + "/target.txt").orElseThrow())).isEqualTo("known");
        assertThat(sandbox.symlinks()).containsExactly(WORK + "/link-dir", WORK + "/link-file");
        assertThat(sandbox.exists(WORK + "/implied")).isTrue();
        assertThat(sandbox.directories()).containsExactly(WORK + "/dir");
        assertThat(sandbox.nonRegular()).containsExactly(WORK + "/fifo");
    }
}
