package org.sandbox4j.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.SandboxEntry;
import org.sandbox4j.core.SandboxFileException;
import org.sandbox4j.core.SandboxFileNotFound;
import org.sandbox4j.core.SandboxNotARegularFile;
import org.sandbox4j.core.SandboxPathNotConfined;
import org.sandbox4j.core.SandboxTransferCapExceeded;
import org.sandbox4j.core.spi.FileRefusals;

/** The kit's file methods over the real agent, resident on this host. */
class AgentFilesTest {

    private static ResidentAgent agent;
    private static AgentFiles files;

    @TempDir
    Path work;
    private String wd;

    @BeforeAll
    static void startAgent() {
        agent = ResidentAgent.start(AgentBinary.path(), "agent-test");
        files = new AgentFiles(agent.connection(), "agent-test");
    }

    @AfterAll
    static void stopAgent() {
        agent.close();
    }

    @BeforeEach
    void workingDirectory() {
        wd = work.toString();
    }

    @Test
    void aWriteLandsWholeWithItsParentsAndReadsBack() throws Exception {
        byte[] content = new byte[1_500_000];
        for (int i = 0; i < content.length; i++) {
            content[i] = (byte) i;
        }
        files.writeFile("a/b/c.bin", content, wd);
        assertThat(Files.readAllBytes(work.resolve("a/b/c.bin"))).isEqualTo(content);
        assertThat(files.readFile("a/b/c.bin", wd, content.length)).isEqualTo(content);
        files.writeFile("a/b/c.bin", "again".getBytes(StandardCharsets.UTF_8), wd);
        assertThat(files.readFile("a/b/c.bin", wd, 100)).asString().isEqualTo("again");
        assertThat(files.readFile("a/b/c.bin", wd, 100)).isNotEmpty();
        assertThat(work.resolve("a/b").toFile().list()).containsExactly("c.bin");
    }

    @Test
    void statAndListSayWhatIsThereWithoutFollowingLinks() throws Exception {
        files.writeFile("dir/file.txt", "12345".getBytes(StandardCharsets.UTF_8), wd);
        Files.createSymbolicLink(work.resolve("dir/link"), Path.of("/etc"));
        assertThat(files.stat("dir/file.txt", wd).map(SandboxEntry::withoutAttributes))
                .contains(SandboxEntry.file("dir/file.txt", 5));
        assertThat(files.stat("dir/link", wd).map(SandboxEntry::kind)).contains(EntryKind.SYMLINK);
        assertThat(files.stat("dir/nothing", wd)).isEmpty();
        assertThat(files.listDir("dir", wd)).extracting(SandboxEntry::withoutAttributes)
                .containsExactly(SandboxEntry.file("dir/file.txt", 5), SandboxEntry.symlink("dir/link"));
    }

    @Test
    void anEntryCarriesTheModeAndTimeTheGuestGaveIt() throws Exception {
        files.writeFile("stamped.txt", "12345".getBytes(StandardCharsets.UTF_8), wd);
        Path onTheGuest = work.resolve("stamped.txt");
        Files.setPosixFilePermissions(onTheGuest, java.nio.file.attribute.PosixFilePermissions.fromString("rw-r-----"));
        java.time.Instant stamped = java.time.Instant.parse("2020-01-02T03:04:05.123456789Z");
        Files.setLastModifiedTime(onTheGuest, java.nio.file.attribute.FileTime.from(stamped));
        SandboxEntry entry = files.stat("stamped.txt", wd).orElseThrow();
        assertThat(entry.mode()).hasValue(0640);
        assertThat(entry.modified()).contains(stamped);
        assertThat(files.listDir(".", wd)).contains(entry);
    }

    @Test
    void aSymlinkedParentIsRefused() throws Exception {
        Path outside = Files.createDirectory(work.resolve("outside"));
        Files.writeString(outside.resolve("secret"), "no");
        Files.createDirectory(work.resolve("wd"));
        Files.createSymbolicLink(work.resolve("wd/escape"), outside);
        String inner = work.resolve("wd").toString();
        assertThatThrownBy(() -> files.readFile("escape/secret", inner, 100))
                .isInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> files.writeFile("escape/new", new byte[1], inner))
                .isInstanceOf(SandboxPathNotConfined.class);
        assertThatThrownBy(() -> files.readFile("escape", inner, 100)).isInstanceOf(SandboxNotARegularFile.class)
                .hasMessage(FileRefusals.readOfALink("escape").getMessage());
        assertThat(outside.toFile().list()).containsExactly("secret");
    }

    @Test
    void aReadAboveTheCapIsRefusedWhole() {
        files.writeFile("big", new byte[1000], wd);
        assertThatThrownBy(() -> files.readFile("big", wd, 999)).isInstanceOf(SandboxTransferCapExceeded.class)
                .hasMessage(FileRefusals.readOverCap("big", 1000, 999).getMessage());
        assertThat(files.readFile("big", wd, 1000)).hasSize(1000);
    }

    @Test
    void aReadOfSomethingMissingIsNotFound() {
        assertThatThrownBy(() -> files.readFile("none", wd, 10)).isInstanceOf(SandboxFileNotFound.class)
                .hasMessage(FileRefusals.notFound("none", wd).getMessage());
    }

    @Test
    void removalTakesFilesLinksAndTreesNeverWhatALinkNames() throws Exception {
        files.writeFile("tree/x/y", new byte[3], wd);
        Path outside = Files.createDirectory(work.resolve("kept"));
        Files.writeString(outside.resolve("keep"), "k");
        Files.createSymbolicLink(work.resolve("tree/x/link"), outside);
        assertThatThrownBy(() -> files.remove("tree", wd, false)).isInstanceOf(SandboxFileException.class)
                .hasMessage(FileRefusals.removalNeedsRecursive("tree").getMessage());
        files.remove("tree/x/y", wd, false);
        assertThat(work.resolve("tree/x/y")).doesNotExist();
        files.remove("tree", wd, true);
        assertThat(work.resolve("tree")).doesNotExist();
        assertThat(outside.resolve("keep")).hasContent("k");
        files.remove("tree", wd, true);
    }
}
