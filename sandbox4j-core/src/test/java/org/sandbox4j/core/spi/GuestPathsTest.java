package org.sandbox4j.core.spi;

import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxIsADirectory;
import org.sandbox4j.core.SandboxNotADirectory;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.SandboxSpec;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Every accepted and refused example of the reference's path rules (core contract §3), plus normalisation. */
class GuestPathsTest {

    private static final String WD = SandboxSpec.DEFAULT_WORK_DIR;

    @Nested
    class Normalize {

        // Expected values are Python's posixpath.normpath, except that a leading "//" collapses to "/".
        @ParameterizedTest(name = "normalize(\"{0}\") = \"{1}\"")
        @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
                ""                              | .
                .                               | .
                ..                              | ..
                /                               | /
                //                              | /
                ///                             | /
                ////a                           | /a
                //a/b                           | /a/b
                /..                             | /
                /../..                          | /
                /../a                           | /a
                a/./b/../c//                    | a/c
                a/..                            | .
                a/../..                         | ..
                ../a                            | ../a
                ../../a/b                       | ../../a/b
                a//b                            | a/b
                a/b/                            | a/b
                a/b/.                           | a/b
                ./a                             | a
                /a/./b/./                       | /a/b
                /a/b/../../..                   | /
                a/b/../../../c                  | ../c
                ...                             | ...
                a/.../b                         | a/.../b
                /a/..b/c                        | /a/..b/c
                .a/b.                           | .a/b.
                "a/ ./b"                        | "a/ ./b"
                /sandbox4j/work/../etc/passwd   | /sandbox4j/etc/passwd
                /a/b/c/../../d                  | /a/d
                é/./x                           | é/x
                """)
        void matchesPosixNormpath(String path, String expected) {
            assertThat(GuestPaths.normalize(path)).isEqualTo(expected);
        }

        @Test
        void keepsBackslashesAndFullwidthDotsAsOrdinaryCharacters() {
            // normalize is pure arithmetic; refusing a backslash is confine's job.
            assertThat(GuestPaths.normalize("a\\..\\b")).isEqualTo("a\\..\\b");
            assertThat(GuestPaths.normalize("/a/\uFF0E\uFF0E/b")).isEqualTo("/a/\uFF0E\uFF0E/b");
        }
    }

    @Nested
    class RelativeTo {

        @ParameterizedTest(name = "\"{0}\" under \"{1}\" is \"{2}\"")
        @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
                /maf-sandbox/work/./sub/../a.txt | /maf-sandbox/work      | a.txt
                /a.txt                           | /                      | a.txt
                /maf-sandbox/work                | /maf-sandbox/work      | ""
                /maf-sandbox/work/               | /maf-sandbox/work/.    | ""
                /maf-sandbox/work/sub/x          | /maf-sandbox/work/     | sub/x
                /maf-sandbox/work/sub/x          | //maf-sandbox//work    | sub/x
                /                                | /                      | ""
                /maf-sandbox/work/sub/deeper     | /maf-sandbox/work/sub  | deeper
                """)
        void insideTheBase(String path, String base, String expected) {
            assertThat(GuestPaths.relativeTo(path, base)).contains(expected);
        }

        @ParameterizedTest(name = "\"{0}\" is not under \"{1}\"")
        @CsvSource(delimiter = '|', textBlock = """
                /maf-sandbox/work/sub2                | /maf-sandbox/work/sub
                /maf-sandbox/work-outside/a.txt       | /maf-sandbox/work
                /maf-sandbox/work2                    | /maf-sandbox/work
                /maf-sandbox/work/../etc/passwd       | /maf-sandbox/work
                /maf-sandbox/work/sub/../../etc       | /maf-sandbox/work
                /maf-sandbox/work/./../etc            | /maf-sandbox/work
                /maf-sandbox                          | /maf-sandbox/work
                /                                     | /maf-sandbox/work
                maf-sandbox/work/a.txt                | /maf-sandbox/work
                """)
        void outsideTheBase(String path, String base) {
            assertThat(GuestPaths.relativeTo(path, base)).isEmpty();
        }
    }

    @Nested
    class Confine {

        // Fullwidth dots and slashes (U+FF0E, U+FF0F) are ordinary characters in the guest grammar.
        @ParameterizedTest(name = "\"{0}\" in \"{1}\" confines to \"{2}\"")
        @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
                a.txt                        | /sandbox4j/work    | /sandbox4j/work/a.txt
                sub/deeper/a.txt             | /sandbox4j/work    | /sandbox4j/work/sub/deeper/a.txt
                /sandbox4j/work/sub/a.txt    | /sandbox4j/work    | /sandbox4j/work/sub/a.txt
                ./sub/a.txt                  | /sandbox4j/work    | /sandbox4j/work/sub/a.txt
                sub/../a.txt                 | /sandbox4j/work    | /sandbox4j/work/a.txt
                .                            | /sandbox4j/work    | /sandbox4j/work
                ""                           | /sandbox4j/work    | /sandbox4j/work
                /sandbox4j/work              | /sandbox4j/work    | /sandbox4j/work
                sub//a.txt/                  | /sandbox4j/work    | /sandbox4j/work/sub/a.txt
                a.txt                        | /sandbox4j/work/   | /sandbox4j/work/a.txt
                a.txt                        | /sandbox4j/work/.  | /sandbox4j/work/a.txt
                .                            | /sandbox4j/work/   | /sandbox4j/work
                .                            | /sandbox4j/work/.  | /sandbox4j/work
                /sandbox4j/work/sub/a.txt    | /sandbox4j/work/.  | /sandbox4j/work/sub/a.txt
                out                          | /                  | /out
                /etc/x                       | /                  | /etc/x
                ..                           | /                  | /
                \uFF0E\uFF0E/x               | /sandbox4j/work    | /sandbox4j/work/\uFF0E\uFF0E/x
                a\uFF0Fb                     | /sandbox4j/work    | /sandbox4j/work/a\uFF0Fb
                ...                          | /sandbox4j/work    | /sandbox4j/work/...
                """)
        void accepted(String path, String workingDirectory, String expected) {
            assertThat(GuestPaths.confine(path, workingDirectory)).isEqualTo(expected);
        }

        @ParameterizedTest(name = "\"{0}\" escapes \"{1}\"")
        @CsvSource(delimiter = '|', textBlock = """
                ../etc/passwd                    | /sandbox4j/work
                /etc/x                           | /sandbox4j/work
                ..                               | /sandbox4j/work
                sub/../../work-outside/a.txt     | /sandbox4j/work
                ../work2/a.txt                   | /sandbox4j/work
                /sandbox4j/work-outside/a.txt    | /sandbox4j/work
                /sandbox4j/work2                 | /sandbox4j/work
                /sandbox4j                       | /sandbox4j/work
                /                                | /sandbox4j/work
                /sandbox4j/work/../etc           | /sandbox4j/work
                ./../etc                         | /sandbox4j/work/.
                ../etc                           | /sandbox4j/work/
                a/b/../../../x                   | /sandbox4j/work
                """)
        void refusedAsOutside(String path, String workingDirectory) {
            assertThatThrownBy(() -> GuestPaths.confine(path, workingDirectory))
                    .isInstanceOf(SandboxPathNotConfined.class)
                    .hasMessageContaining("resolves outside the working directory");
        }

        @ParameterizedTest
        @ValueSource(strings = {"sub\\a.txt", "\\", "..\\..\\etc", "/sandbox4j/work/a\\b"})
        void refusesABackslash(String path) {
            assertThatThrownBy(() -> GuestPaths.confine(path, WD))
                    .isInstanceOf(SandboxPathNotConfined.class)
                    .hasMessageContaining("contains a backslash");
        }

        @Test
        void refusesABackslashBeforeAnythingElse() {
            // Inside or not, a backslash is refused with its own reason.
            assertThatThrownBy(() -> GuestPaths.confine("..\\..\\..", WD)).hasMessageContaining("backslash");
            assertThatThrownBy(() -> GuestPaths.confine("a.txt", "C:\\work")).hasMessageContaining("backslash");
        }

        @ParameterizedTest
        @ValueSource(strings = {"a\0b", "\0", "/sandbox4j/work/a.txt\0.png"})
        void refusesANul(String path) {
            assertThatThrownBy(() -> GuestPaths.confine(path, WD))
                    .isInstanceOf(SandboxPathNotConfined.class)
                    .hasMessageContaining("NUL");
        }

        @ParameterizedTest
        @ValueSource(strings = {"work", "sandbox4j/work", ".", ""})
        void refusesARelativeWorkingDirectory(String workingDirectory) {
            assertThatThrownBy(() -> GuestPaths.confine("a.txt", workingDirectory))
                    .isInstanceOf(SandboxPathNotConfined.class)
                    .hasMessageContaining("not absolute");
        }

        @Test
        void quotesAHostilePathShortInTheMessage() {
            String hostile = "../" + "x".repeat(10_000);
            assertThatThrownBy(() -> GuestPaths.confine(hostile, WD))
                    .isInstanceOf(SandboxPathNotConfined.class)
                    .hasMessageContaining("(truncated)")
                    .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(GuestText.MAX_QUOTED_CHARS * 3));
        }
    }

    @Nested
    class DirectoryChain {

        @ParameterizedTest(name = "chain of \"{0}\" in \"{1}\" is [{2}]")
        @CsvSource(delimiter = '|', quoteCharacter = '"', textBlock = """
                a.txt            | /sandbox4j/work    | /sandbox4j,/sandbox4j/work,/sandbox4j/work/a.txt
                sub/deeper       | /sandbox4j/work    | /sandbox4j,/sandbox4j/work,/sandbox4j/work/sub,/sandbox4j/work/sub/deeper
                .                | /sandbox4j/work    | /sandbox4j,/sandbox4j/work
                ""               | /sandbox4j/work/   | /sandbox4j,/sandbox4j/work
                sub              | /sandbox4j/work/.  | /sandbox4j,/sandbox4j/work,/sandbox4j/work/sub
                out              | /                  | /out
                /out             | /                  | /out
                a/b              | //x//y/            | /x,/x/y,/x/y/a,/x/y/a/b
                """)
        void everyDirectoryFromTheRootDown(String path, String workingDirectory, String expected) {
            assertThat(GuestPaths.directoryChain(path, workingDirectory)).containsExactly(expected.split(","));
        }

        @Test
        void theRootAloneHasAnEmptyChain() {
            assertThat(GuestPaths.directoryChain("/")).isEmpty();
            assertThat(GuestPaths.directoryChain(".", "/")).isEmpty();
        }

        @Test
        void refusesAPathThatDoesNotConfine() {
            assertThatThrownBy(() -> GuestPaths.directoryChain("../etc", WD)).isInstanceOf(SandboxPathNotConfined.class);
        }

        @Test
        void needsAnAbsolutePath() {
            assertThatThrownBy(() -> GuestPaths.directoryChain("a/b"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("absolute");
        }
    }

    @Nested
    class ParentAndFileName {

        @ParameterizedTest
        @CsvSource(delimiter = '|', textBlock = """
                /a/b/c    | /a/b   | c
                /a        | /      | a
                /         | /      | ''
                /a/b/     | /a     | b
                //a//b/./ | /a     | b
                """)
        void splitTheLastComponent(String path, String parent, String fileName) {
            assertThat(GuestPaths.parent(path)).isEqualTo(parent);
            assertThat(GuestPaths.fileName(path)).isEqualTo(fileName);
        }
    }

    @Nested
    class RefuseSymlinkedParents {

        @Test
        void aRealDirectoryChainPassesAndReturnsTheConfinedPath() {
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD, WD + "/sub");
            assertThat(GuestPaths.refuseSymlinkedParents(stat, "sub/a.txt", WD, false)).isEqualTo(WD + "/sub/a.txt");
            assertThat(stat.asked).containsExactly("/sandbox4j", WD, WD + "/sub");
        }

        @Test
        void theLeafIsNotWalkedByDefault() {
            // An lstat-like leaf: the caller inspects it itself.
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD).link(WD + "/leaf");
            assertThat(GuestPaths.refuseSymlinkedParents(stat, "leaf", WD, false)).isEqualTo(WD + "/leaf");
            assertThat(stat.asked).doesNotContain(WD + "/leaf");
        }

        @Test
        void includeSelfWalksTheLeafToo() {
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD).link(WD + "/leaf");
            assertThatThrownBy(() -> GuestPaths.refuseSymlinkedParents(stat, "leaf", WD, true))
                    .isInstanceOf(SandboxPathNotConfined.class)
                    .hasMessageContaining("is a link rather than a real directory");
            assertThat(stat.asked).containsExactly("/sandbox4j", WD, WD + "/leaf");
        }

        @Test
        void includeSelfOnARealDirectoryPasses() {
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD, WD + "/dir");
            assertThat(GuestPaths.refuseSymlinkedParents(stat, "dir", WD, true)).isEqualTo(WD + "/dir");
            assertThat(stat.asked).containsExactly("/sandbox4j", WD, WD + "/dir");
        }

        @Test
        void aMissingComponentEndsTheWalkWithoutARefusal() {
            // "missing" is below; the link under it is never asked about because the walk stops.
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD).link(WD + "/missing/link");
            assertThat(GuestPaths.refuseSymlinkedParents(stat, "missing/link/a.txt", WD, false))
                    .isEqualTo(WD + "/missing/link/a.txt");
            assertThat(stat.asked).containsExactly("/sandbox4j", WD, WD + "/missing");
        }

        @Test
        void aLinkedParentIsAnEscape() {
            // out -> /etc makes out/hostname look like an ordinary 12-byte file.
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD).link(WD + "/out");
            assertThatThrownBy(() -> GuestPaths.refuseSymlinkedParents(stat, "out/hostname", WD, false))
                    .isInstanceOf(SandboxPathNotConfined.class)
                    .hasMessageContaining("'" + WD + "/out' is a link rather than a real directory");
        }

        @Test
        void aLinkedAncestorOfTheWorkingDirectoryIsAnEscape() {
            // /sandbox4j -> / : a walk that started at the working directory would miss it.
            FakeStat stat = new FakeStat().link("/sandbox4j").directories(WD);
            assertThatThrownBy(() -> GuestPaths.refuseSymlinkedParents(stat, "a.txt", WD, false))
                    .isInstanceOf(SandboxPathNotConfined.class)
                    .hasMessageContaining("'/sandbox4j' is a link");
            assertThat(stat.asked).containsExactly("/sandbox4j");
        }

        @Test
        void aLinkedWorkingDirectoryIsAnEscape() {
            FakeStat stat = new FakeStat().directories("/sandbox4j").link(WD);
            assertThatThrownBy(() -> GuestPaths.refuseSymlinkedParents(stat, "a.txt", WD, false))
                    .isInstanceOf(SandboxPathNotConfined.class);
        }

        @ParameterizedTest
        @ValueSource(strings = {"FILE", "OTHER"})
        void aNonDirectoryParentIsNotADirectoryRatherThanAnEscape(EntryKind kind) {
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD).kind(WD + "/plain.txt", kind);
            assertThatThrownBy(() -> GuestPaths.refuseSymlinkedParents(stat, "plain.txt/x", WD, false))
                    .isInstanceOf(SandboxNotADirectory.class)
                    .isInstanceOf(SandboxFileException.class)
                    .isNotInstanceOf(SandboxPathNotConfined.class)
                    .hasMessageContaining("'" + WD + "/plain.txt' is not a directory");
        }

        @Test
        void theFirstOffendingComponentFromTheRootDecides() {
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD).kind(WD + "/file", EntryKind.FILE)
                    .link(WD + "/file/link");
            assertThatThrownBy(() -> GuestPaths.refuseSymlinkedParents(stat, "file/link/x", WD, false))
                    .isInstanceOf(SandboxNotADirectory.class);
        }

        @Test
        void walksUnderTheRootWorkingDirectory() {
            FakeStat stat = new FakeStat().link("/out");
            assertThatThrownBy(() -> GuestPaths.refuseSymlinkedParents(stat, "out/x", "/", false))
                    .isInstanceOf(SandboxPathNotConfined.class);
            FakeStat empty = new FakeStat();
            assertThat(GuestPaths.refuseSymlinkedParents(empty, "x", "/", false)).isEqualTo("/x");
            assertThat(empty.asked).isEmpty();
        }

        @Test
        void confinesBeforeAskingAnything() {
            FakeStat stat = new FakeStat();
            assertThatThrownBy(() -> GuestPaths.refuseSymlinkedParents(stat, "../x", WD, false))
                    .isInstanceOf(SandboxPathNotConfined.class);
            assertThat(stat.asked).isEmpty();
        }
    }

    @Nested
    class ConfineWritePath {

        @ParameterizedTest
        @ValueSource(strings = {".", "", "/sandbox4j/work", "sub/..", "/sandbox4j/work/"})
        void refusesTheWorkingDirectoryItself(String path) {
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD);
            assertThatThrownBy(() -> GuestPaths.confineWritePath(stat, path, WD))
                    .isInstanceOf(SandboxPathNotConfined.class)
                    .hasMessageContaining("working directory itself");
        }

        @Test
        void refusesTheWorkingDirectorySpelledDifferently() {
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD);
            assertThatThrownBy(() -> GuestPaths.confineWritePath(stat, WD, WD + "/."))
                    .isInstanceOf(SandboxPathNotConfined.class)
                    .hasMessageContaining("working directory itself");
        }

        @Test
        void refusesALinkedLeaf() {
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD).link(WD + "/a.txt");
            assertThatThrownBy(() -> GuestPaths.confineWritePath(stat, "a.txt", WD))
                    .isInstanceOf(SandboxPathNotConfined.class)
                    .hasMessageContaining("is a link");
        }

        @Test
        void refusesADirectoryLeaf() {
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD, WD + "/dir");
            assertThatThrownBy(() -> GuestPaths.confineWritePath(stat, "dir", WD))
                    .isInstanceOf(SandboxIsADirectory.class)
                    .isInstanceOf(SandboxFileException.class);
        }

        @Test
        void refusesALinkedParent() {
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD).link(WD + "/out");
            assertThatThrownBy(() -> GuestPaths.confineWritePath(stat, "out/a.txt", WD))
                    .isInstanceOf(SandboxPathNotConfined.class)
                    .hasMessageContaining("rather than a real directory");
        }

        @Test
        void refusesAFileParent() {
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD).kind(WD + "/plain.txt", EntryKind.FILE);
            assertThatThrownBy(() -> GuestPaths.confineWritePath(stat, "plain.txt/a.txt", WD))
                    .isInstanceOf(SandboxNotADirectory.class);
        }

        @Test
        void refusesAnEscape() {
            FakeStat stat = new FakeStat();
            assertThatThrownBy(() -> GuestPaths.confineWritePath(stat, "../a.txt", WD))
                    .isInstanceOf(SandboxPathNotConfined.class)
                    .hasMessageContaining("resolves outside");
            assertThat(stat.asked).isEmpty();
        }

        @Test
        void missingParentsPass() {
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD);
            assertThat(GuestPaths.confineWritePath(stat, "new/deeper/a.txt", WD)).isEqualTo(WD + "/new/deeper/a.txt");
        }

        @Test
        void aMissingWorkingDirectoryPasses() {
            assertThat(GuestPaths.confineWritePath(new FakeStat(), "a.txt", WD)).isEqualTo(WD + "/a.txt");
        }

        @Test
        void anExistingFileLeafIsOverwritable() {
            FakeStat stat = new FakeStat().directories("/sandbox4j", WD).kind(WD + "/a.txt", EntryKind.FILE);
            assertThat(GuestPaths.confineWritePath(stat, "./a.txt", WD)).isEqualTo(WD + "/a.txt");
        }
    }

    /** A map-backed no-follow stat that records every path it is asked about, in order. */
    static final class FakeStat implements NoFollowStat {
        final Map<String, EntryKind> entries = new HashMap<>();
        final List<String> asked = new ArrayList<>();

        FakeStat directories(String... paths) {
            for (String path : paths) {
                entries.put(path, EntryKind.DIRECTORY);
            }
            return this;
        }

        FakeStat link(String path) {
            return kind(path, EntryKind.SYMLINK);
        }

        FakeStat kind(String path, EntryKind kind) {
            entries.put(path, kind);
            return this;
        }

        @Override
        public Optional<EntryKind> kindOf(String absoluteGuestPath) {
            asked.add(absoluteGuestPath);
            return Optional.ofNullable(entries.get(absoluteGuestPath));
        }
    }
}
