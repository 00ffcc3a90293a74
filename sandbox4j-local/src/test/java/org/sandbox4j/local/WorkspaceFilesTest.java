package org.sandbox4j.local;

import org.sandbox4j.core.spi.WorkspaceFiles;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.sandbox4j.local.WorkspaceFixture.INSIDE;
import static org.sandbox4j.local.WorkspaceFixture.SECRET;
import static org.sandbox4j.local.WorkspaceFixture.WORK;
import static org.sandbox4j.local.WorkspaceFixture.utf8;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxTransferCapExceeded;

/** What each method does when it is not refusing, over a real host directory. */
@EnabledOnOs(OS.LINUX)
class WorkspaceFilesTest {

    @TempDir
    Path tempDir;

    private WorkspaceFixture fixture;
    private WorkspaceFiles files;

    @BeforeEach
    void plant() {
        fixture = WorkspaceFixture.create(tempDir);
        files = fixture.files;
    }

    // ---------------------------------------------------------------- writeFile

    @ParameterizedTest(name = "{0} lands at {1}")
    @CsvSource({
        "written.txt,                    written.txt",
        "/sandbox4j/work/absolute.txt,   absolute.txt",
        "./dot.txt,                      dot.txt",
        "sub/../dot-dot.txt,             dot-dot.txt",
        "deep/er/est/leaf.txt,           deep/er/est/leaf.txt",
        "real/next-to-inside.txt,        real/next-to-inside.txt"})
    void aWriteLandsExactlyThere(String path, String landed) throws IOException {
        byte[] content = utf8("content of " + path);

        files.writeFile(path, content, WORK);

        assertThat(fixture.work.resolve(landed)).isRegularFile().hasBinaryContent(content);
        assertThat(leftovers(fixture.workspace)).isEmpty();
    }

    @Test
    void bytesAreWrittenVerbatimAndReplacedWhole() {
        byte[] binary = new byte[256];
        for (int i = 0; i < binary.length; i++) {
            binary[i] = (byte) i;
        }
        files.writeFile("binary.bin", binary, WORK);
        assertThat(fixture.work.resolve("binary.bin")).hasBinaryContent(binary);

        files.writeFile("binary.bin", utf8("short"), WORK);
        assertThat(fixture.work.resolve("binary.bin")).hasBinaryContent(utf8("short"));
    }

    @Test
    void aWrittenFileIsReadableAndNotExecutable() throws IOException {
        files.writeFile("mode.txt", INSIDE, WORK);

        assertThat(Files.getPosixFilePermissions(fixture.work.resolve("mode.txt"))).contains(
                PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE).doesNotContain(
                PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.GROUP_WRITE, PosixFilePermission.OTHERS_WRITE);
    }

    @Test
    void aWriteOverAFifoReplacesItWithoutOpeningIt() {
        files.writeFile("fifo", INSIDE, WORK);

        assertThat(fixture.work.resolve("fifo")).isRegularFile().hasBinaryContent(INSIDE);
    }

    @Test
    void aWorkingDirectoryAboveTheMountPointReachesPathsUnderIt() {
        files.writeFile("sandbox4j/work/from-root.txt", INSIDE, "/");

        assertThat(fixture.work.resolve("from-root.txt")).hasBinaryContent(INSIDE);
        assertThat(files.readFile("sandbox4j/work/from-root.txt", "/", 1024)).isEqualTo(INSIDE);
    }

    @Test
    void anUnreachableWorkingDirectoryNamesTheMountPoint() {
        assertThatThrownBy(() -> files.writeFile("x.txt", INSIDE, "/tmp"))
                .isExactlyInstanceOf(SandboxFileException.class)
                .hasMessageContaining("'/sandbox4j'")
                .hasMessageContaining("'x.txt'");
    }

    // ---------------------------------------------------------------- stat

    @Test
    void statDescribesWithoutFollowing() {
        assertThat(files.stat("real/inside.txt", WORK).map(SandboxEntry::withoutAttributes)).contains(SandboxEntry.file("real/inside.txt", INSIDE.length));
        assertThat(files.stat("inside.txt", WORK + "/real").map(SandboxEntry::withoutAttributes)).contains(SandboxEntry.file("inside.txt", INSIDE.length));
        assertThat(files.stat("real", WORK).map(SandboxEntry::withoutAttributes)).contains(SandboxEntry.directory("real"));
        assertThat(files.stat(".", WORK).map(SandboxEntry::withoutAttributes)).contains(SandboxEntry.directory("."));
        assertThat(files.stat("link-file", WORK).map(SandboxEntry::withoutAttributes)).contains(SandboxEntry.symlink("link-file"));
        assertThat(files.stat("link-dir", WORK).map(SandboxEntry::withoutAttributes)).contains(SandboxEntry.symlink("link-dir"));
        assertThat(files.stat("dangling", WORK).map(SandboxEntry::withoutAttributes)).contains(SandboxEntry.symlink("dangling"));
        assertThat(files.stat("fifo", WORK).map(SandboxEntry::withoutAttributes)).contains(SandboxEntry.other("fifo"));
        assertThat(files.stat("missing.txt", WORK)).isEmpty();
        assertThat(files.stat("missing/deeper.txt", WORK)).isEmpty();
        assertThat(files.stat("work", "/sandbox4j").map(SandboxEntry::withoutAttributes)).contains(SandboxEntry.directory("work"));
        assertThat(files.stat(".", "/sandbox4j").map(SandboxEntry::withoutAttributes)).contains(SandboxEntry.directory("."));
    }

    // ---------------------------------------------------------------- readFile

    @Test
    void aReadReturnsTheBytesWithinTheCap() {
        assertThat(files.readFile("real/inside.txt", WORK, INSIDE.length)).isEqualTo(INSIDE);
        assertThat(files.readFile("/sandbox4j/work/real/inside.txt", WORK, Long.MAX_VALUE)).isEqualTo(INSIDE);
    }

    @Test
    void anEmptyFileReadsAsEmptyEvenWithACapOfZero() throws IOException {
        Files.write(fixture.work.resolve("empty.txt"), new byte[0]);

        assertThat(files.readFile("empty.txt", WORK, 0)).isEmpty();
    }

    @Test
    void aLargeFileOverTheCapIsRefusedWhole() throws IOException {
        byte[] large = new byte[3 * 1024 * 1024 + 17];
        Arrays.fill(large, (byte) 'x');
        Files.write(fixture.work.resolve("large.bin"), large);

        assertThatThrownBy(() -> files.readFile("large.bin", WORK, 1024 * 1024))
                .isExactlyInstanceOf(SandboxTransferCapExceeded.class).hasMessageContaining("'large.bin'");
        assertThat(files.readFile("large.bin", WORK, large.length)).isEqualTo(large);
        assertThatThrownBy(() -> files.readFile("large.bin", WORK, large.length - 1))
                .isExactlyInstanceOf(SandboxTransferCapExceeded.class);
    }

    @Test
    void aNegativeCapIsAProgrammingError() {
        assertThatThrownBy(() -> files.readFile("real/inside.txt", WORK, -1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    // ---------------------------------------------------------------- listDir

    @Test
    void aListingIsSortedAndNamesLinksAsLinks() throws IOException {
        Files.write(fixture.work.resolve("empty/zulu.txt"), INSIDE);
        Files.write(fixture.work.resolve("empty/alpha.txt"), new byte[0]);
        Files.createDirectory(fixture.work.resolve("empty/mike"));
        Files.createSymbolicLink(fixture.work.resolve("empty/kilo"), fixture.outside);

        assertThat(shapes(files.listDir("empty", WORK))).containsExactly(
                SandboxEntry.file("empty/alpha.txt", 0),
                SandboxEntry.symlink("empty/kilo"),
                SandboxEntry.directory("empty/mike"),
                SandboxEntry.file("empty/zulu.txt", INSIDE.length));
        assertThat(files.listDir(".", WORK + "/empty")).extracting(SandboxEntry::path)
                .containsExactly("alpha.txt", "kilo", "mike", "zulu.txt");
    }

    @Test
    void theWorkingDirectoryListsEveryKind() {
        assertThat(shapes(files.listDir(".", WORK))).containsExactly(
                SandboxEntry.symlink("dangling"),
                SandboxEntry.directory("dir"),
                SandboxEntry.directory("empty"),
                SandboxEntry.other("fifo"),
                SandboxEntry.symlink("link-dir"),
                SandboxEntry.symlink("link-file"),
                SandboxEntry.file("plain.txt", INSIDE.length),
                SandboxEntry.directory("real"),
                SandboxEntry.symlink("relative-up"));
    }

    @Test
    void anEmptyDirectoryListsNothingAndTheMountPointIsListable() {
        assertThat(files.listDir("empty", WORK)).isEmpty();
        assertThat(files.listDir(".", "/sandbox4j")).extracting(SandboxEntry::path)
                .containsExactly("linked-root", "work", "work-outside");
    }

    @Test
    void eachListedEntryAgreesWithStat() {
        for (SandboxEntry entry : files.listDir(".", WORK)) {
            assertThat(files.stat(entry.path(), WORK)).as(entry.path()).contains(entry);
        }
    }

    // ---------------------------------------------------------------- remove

    @Test
    void aRemovalRemovesOnlyWhatItNames() {
        files.remove("plain.txt", WORK, false);

        assertThat(fixture.work.resolve("plain.txt")).doesNotExist();
        assertThat(fixture.work.resolve("real/inside.txt")).exists();
    }

    @ParameterizedTest(name = "removing {0} (recursive = {1}) unlinks it and leaves its target")
    @CsvSource({"link-file, false", "link-file, true", "link-dir, false", "link-dir, true", "dangling, false",
        "relative-up, true"})
    void aLinkIsUnlinkedNeverFollowed(String link, boolean recursive) {
        Map<String, String> outside = fixture.outsideSnapshot();

        files.remove(link, WORK, recursive);

        assertThat(fixture.work.resolve(link)).doesNotExist();
        assertThat(Files.exists(fixture.work.resolve(link), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(fixture.outsideSnapshot()).isEqualTo(outside);
    }

    @Test
    void aRecursiveRemovalUnlinksTheLinksInsideItAndRemovesTheRest() throws IOException {
        Path tree = Files.createDirectories(fixture.work.resolve("tree/branch/twig"));
        Files.write(tree.resolve("leaf.txt"), INSIDE);
        Files.write(fixture.work.resolve("tree/top.txt"), INSIDE);
        Files.createSymbolicLink(fixture.work.resolve("tree/branch/to-secret"), fixture.outside.resolve("secret.txt"));
        Files.createSymbolicLink(tree.resolve("to-outside"), fixture.outside);
        Files.createSymbolicLink(tree.resolve("climbing"), Path.of("../../../../../outside"));
        Files.createDirectories(fixture.work.resolve("tree-sibling"));
        Map<String, String> outside = fixture.outsideSnapshot();

        files.remove("tree", WORK, true);

        assertThat(Files.exists(fixture.work.resolve("tree"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(fixture.work.resolve("tree-sibling")).isDirectory();
        assertThat(fixture.outsideSnapshot()).isEqualTo(outside);
        assertThat(fixture.outside.resolve("secret.txt")).hasBinaryContent(SECRET);
    }

    @Test
    void aMissingPathIsSuccess() {
        files.remove("missing.txt", WORK, false);
        files.remove("missing/deeper.txt", WORK, true);
        files.remove("plain.txt", WORK, false);
        files.remove("plain.txt", WORK, false);

        assertThat(fixture.work.resolve("plain.txt")).doesNotExist();
    }

    @Test
    void directoriesNeedRecursive() {
        files.remove("empty", WORK, true);
        files.remove("dir", WORK, true);

        assertThat(fixture.work.resolve("empty")).doesNotExist();
        assertThat(fixture.work.resolve("dir")).doesNotExist();
    }

    @Test
    void aFifoIsRemovedWithoutBeingOpened() {
        files.remove("fifo", WORK, false);

        assertThat(Files.exists(fixture.work.resolve("fifo"), LinkOption.NOFOLLOW_LINKS)).isFalse();
    }

    @Test
    void aTreeHundredsOfLevelsDeepIsRemovedWhole() throws IOException {
        Path deepest = fixture.work.resolve("deep");
        for (int i = 0; i < 300; i++) {
            deepest = deepest.resolve("d");
        }
        Files.createDirectories(deepest);
        Files.writeString(deepest.resolve("bottom"), "x");

        files.remove("deep", WORK, true);

        assertThat(Files.exists(fixture.work.resolve("deep"), LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(fixture.outsideSnapshot()).containsKey("outside/secret.txt");
    }

    @Test
    void aRoundTripThroughEveryMethod() {
        files.writeFile("round/trip.txt", INSIDE, WORK);
        assertThat(files.stat("round/trip.txt", WORK).map(SandboxEntry::withoutAttributes)).isEqualTo(Optional.of(SandboxEntry.file("round/trip.txt",
                INSIDE.length)));
        assertThat(shapes(files.listDir("round", WORK))).isEqualTo(List.of(SandboxEntry.file("round/trip.txt",
                INSIDE.length)));
        assertThat(files.readFile("round/trip.txt", WORK, INSIDE.length)).isEqualTo(INSIDE);
        files.remove("round", WORK, true);
        assertThat(files.stat("round", WORK)).isEmpty();
    }

    /** Temporary and staging names this class uses, anywhere under {@code root}. */
    static List<Path> leftovers(Path root) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(path -> path.getFileName().toString().startsWith(".sandbox4j-")).toList();
        }
    }

    @Test
    void anEntryCarriesItsOwnModeAndModificationTime() throws IOException {
        files.writeFile("stamped.txt", INSIDE, WORK);
        Path onTheHost = fixture.work.resolve("stamped.txt");
        Files.setPosixFilePermissions(onTheHost, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r-----"));
        java.time.Instant stamped = java.time.Instant.parse("2020-01-02T03:04:05Z");
        Files.setLastModifiedTime(onTheHost, java.nio.file.attribute.FileTime.from(stamped));
        SandboxEntry entry = files.stat("stamped.txt", WORK).orElseThrow();
        assertThat(entry.mode()).hasValue(0640);
        assertThat(entry.modified()).contains(stamped);
        assertThat(files.listDir(".", WORK)).contains(entry);
        SandboxEntry link = files.stat("link-file", WORK).orElseThrow();
        assertThat(link.modified()).as("the link's own time, not its target's").isPresent()
                .isNotEqualTo(Optional.of(stamped));
    }

    /** What an entry is, without the attributes a host sets as it pleases. */
    private static List<SandboxEntry> shapes(List<SandboxEntry> entries) {
        return entries.stream().map(SandboxEntry::withoutAttributes).toList();
    }
}
