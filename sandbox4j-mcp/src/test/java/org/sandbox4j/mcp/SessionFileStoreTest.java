package org.sandbox4j.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.SandboxLandingFailed;
import org.sandbox4j.core.SandboxThreadContextMissing;
import org.sandbox4j.core.outputs.Artifact;
import org.sandbox4j.core.outputs.LandedArtifact;
import org.sandbox4j.core.tool.ToolRefusal;

/** The per-session file areas on their own: plain files in a temporary directory, no server. */
class SessionFileStoreTest {

    private static final String A = "session-a";
    private static final String B = "session-b";

    @TempDir
    Path root;

    private final AtomicReference<String> current = new AtomicReference<>();

    private SessionFileStore store(SessionFiles.Builder limits) {
        return new SessionFileStore(limits.root(root).build(), current::get);
    }

    private SessionFileStore store() {
        return store(SessionFiles.builder());
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static List<String> names(SessionFileStore store, String session) {
        return store.list(session).stream().map(SessionFileStore.Entry::name).toList();
    }

    @Test
    void aFileIsWrittenReadListedReplacedAndDeleted() {
        SessionFileStore store = store();

        SessionFileStore.Written written = store.write(A, "data.csv", utf8("a,b\n1,2\n"));
        assertThat(written).isEqualTo(new SessionFileStore.Written("data.csv", 8, 1, 8));
        store.write(A, "notes.txt", utf8("hi"));
        assertThat(store.read(A, "data.csv")).isEqualTo(utf8("a,b\n1,2\n"));
        assertThat(store.list(A)).containsExactly(new SessionFileStore.Entry("data.csv", 8),
                new SessionFileStore.Entry("notes.txt", 2));

        assertThat(store.write(A, "data.csv", utf8("x"))).as("a replacement counts once")
                .isEqualTo(new SessionFileStore.Written("data.csv", 1, 2, 3));
        assertThat(store.read(A, "data.csv")).isEqualTo(utf8("x"));

        store.delete(A, "data.csv");
        assertThat(names(store, A)).containsExactly("notes.txt");
        assertThatThrownBy(() -> store.read(A, "data.csv")).isInstanceOf(ToolRefusal.class)
                .hasMessage("Error: there is no file named 'data.csv' in this session. Nothing was read; list_files "
                        + "shows what there is.");
        assertThatThrownBy(() -> store.delete(A, "data.csv")).hasMessageStartingWith("Error: there is no file named");
    }

    @Test
    void aNonAsciiNameIsKeptUnderAnAsciiHostNameAndListedAsGiven() throws IOException {
        SessionFileStore store = store();
        String session = "s";

        store.write(session, "é 日本%.txt", utf8("grüße"));
        store.write(session, "plain-Name_1.csv", utf8("1"));

        try (Stream<Path> area = Files.list(store.areaDirectory(session))) {
            assertThat(area.map(path -> path.getFileName().toString())).containsExactlyInAnyOrder(
                    "%C3%A9%20%E6%97%A5%E6%9C%AC%25.txt", "plain-Name_1.csv");
        }
        assertThat(store.list(session)).extracting(SessionFileStore.Entry::name)
                .containsExactlyInAnyOrder("é 日本%.txt", "plain-Name_1.csv");
        assertThat(new String(store.read(session, "é 日本%.txt"), StandardCharsets.UTF_8)).isEqualTo("grüße");
    }

    @Test
    void aHostNameTheStoreDidNotMakeIsNotShown() throws IOException {
        SessionFileStore store = store();
        store.write("s", "kept", utf8("1"));
        Path area = store.areaDirectory("s");
        Files.writeString(area.resolve("%c3%a9"), "lower-case escape");
        Files.writeString(area.resolve("%FF"), "not UTF-8");
        Files.writeString(area.resolve("50%"), "a bare percent");
        Files.writeString(area.resolve("with space"), "unescaped");

        assertThat(store.list("s")).extracting(SessionFileStore.Entry::name).containsExactly("kept");
        assertThat(SessionFileStore.storedNameOf("%C3%A9")).contains("é");
    }

    @Test
    void theAreaIsMadeAtTheFirstWriteOwnerOnlyUnderTheRootNamedByADigestOfTheSessionId() throws IOException {
        SessionFileStore store = store();
        String session = "raw-session-id-7";

        assertThat(store.list(session)).isEmpty();
        assertThat(root).isEmptyDirectory();

        store.write(session, "f", utf8("1"));

        Path area = root.resolve(KeyDigest.sha256Hex(session));
        assertThat(store.areaDirectory(session)).isEqualTo(area);
        assertThat(area.resolve("f")).hasContent("1");
        try (Stream<Path> all = Files.walk(root)) {
            assertThat(all.map(Path::toString)).noneMatch(path -> path.contains(session));
        }
    }

    @Test
    void aMissingRootIsMadeOwnerOnly() throws IOException {
        Path nested = root.resolve("state").resolve("mcp-files");
        new SessionFileStore(SessionFiles.builder().root(nested).build(), current::get);

        assertThat(Files.getPosixFilePermissions(nested)).extracting(Object::toString)
                .containsExactlyInAnyOrder("OWNER_READ", "OWNER_WRITE", "OWNER_EXECUTE");
    }

    @Test
    void aRootThatIsNotADirectoryIsRefusedAtOnce() throws IOException {
        Path file = Files.writeString(root.resolve("a-file"), "x");

        assertThatThrownBy(() -> new SessionFileStore(SessionFiles.builder().root(file).build(), current::get))
                .isInstanceOf(java.io.UncheckedIOException.class).hasMessageContaining("not a directory");
    }

    @Test
    void twoSessionsNeverSeeEachOthersFiles() {
        SessionFileStore store = store();
        store.write(A, "secret.txt", utf8("mine"));

        assertThat(store.list(B)).isEmpty();
        assertThatThrownBy(() -> store.read(B, "secret.txt")).hasMessageStartingWith("Error: there is no file named");
        assertThatThrownBy(() -> store.delete(B, "secret.txt")).hasMessageStartingWith("Error: there is no file named");
        assertThat(store.read(A, "secret.txt")).isEqualTo(utf8("mine"));
    }

    @Test
    void eachCapRefusesTheWriteWholeWithItsSentence() {
        SessionFileStore store = store(SessionFiles.builder().maxFileBytes(10).maxFiles(2).maxTotalBytes(15));

        assertThatThrownBy(() -> store.write(A, "big", new byte[11])).isInstanceOf(ToolRefusal.class)
                .hasMessage("Error: 'big' would be 11 bytes, over the limit of 10 bytes per file. Nothing was written; "
                        + "write a smaller file.");
        store.write(A, "one", new byte[10]);
        assertThatThrownBy(() -> store.write(A, "two", new byte[6]))
                .hasMessage("Error: 'two' (6 bytes) would bring the session's files to 16 bytes, over the limit of 15. "
                        + "Nothing was written; delete files with delete_file first.");
        store.write(A, "two", new byte[5]);
        assertThatThrownBy(() -> store.write(A, "three", new byte[0]))
                .hasMessage("Error: the session already holds 2 files, the most it may hold. Nothing was written; "
                        + "delete a file with delete_file first.");
        assertThat(store.write(A, "one", new byte[3])).as("replacing within the caps")
                .isEqualTo(new SessionFileStore.Written("one", 3, 2, 8));

        assertThat(store.list(A)).containsExactly(new SessionFileStore.Entry("one", 3),
                new SessionFileStore.Entry("two", 5));
        assertThat(store.areaDirectory(A).toFile().list()).as("no temporary file left behind")
                .containsExactlyInAnyOrder("one", "two");
    }

    @Test
    void badNamesAreRefusedBeforeAnythingIsTouched() {
        SessionFileStore store = store();

        assertThatThrownBy(() -> store.write(A, "../x", utf8("x")))
                .hasMessageStartingWith("Error: that file name is not usable (the artifact name '../x' has a '..' "
                        + "segment").hasMessageEndingWith("Nothing was written.");
        assertThatThrownBy(() -> store.write(A, "/etc/passwd", utf8("x")))
                .hasMessageContaining("starts with '/'").hasMessageEndingWith("Nothing was written.");
        assertThatThrownBy(() -> store.write(A, "a\nb", utf8("x")))
                .hasMessageContaining("ASCII control characters (ordinals 10)").satisfies(refusal ->
                        assertThat(refusal.getMessage()).doesNotContain("\n"));
        assertThatThrownBy(() -> store.write(A, "", utf8("x"))).hasMessageContaining("cannot be empty");
        assertThatThrownBy(() -> store.write(A, "dir/file", utf8("x")))
                .hasMessage("Error: 'dir/file' holds a '/'; the session's files are one flat folder, so use a plain "
                        + "file name. Nothing was written.");
        assertThatThrownBy(() -> store.read(A, "../../etc/passwd")).hasMessageContaining("'..' segment");
        assertThatThrownBy(() -> store.delete(A, "/etc/passwd")).hasMessageContaining("starts with '/'");

        assertThat(root).isEmptyDirectory();
    }

    @Test
    void namesAreStoredComposedAsEverySinkDeliversThem() {
        SessionFileStore store = store();
        String decomposed = "cafe\u0301.txt";

        assertThat(store.write(A, decomposed, utf8("x")).name()).isEqualTo("caf\u00e9.txt");
        assertThat(names(store, A)).containsExactly("caf\u00e9.txt");
        assertThat(store.read(A, decomposed)).isEqualTo(utf8("x"));
    }

    @Test
    void aLinkInTheAreaIsNeverFollowed() throws IOException {
        SessionFileStore store = store();
        store.write(A, "real.txt", utf8("real"));
        Path outside = Files.writeString(root.resolveSibling(root.getFileName() + "-target.txt"), "untouched");
        try {
            Files.createSymbolicLink(store.areaDirectory(A).resolve("link.txt"), outside);

            assertThat(names(store, A)).as("a link is not a file of the session").containsExactly("real.txt");
            assertThatThrownBy(() -> store.read(A, "link.txt"))
                    .hasMessage("Error: 'link.txt' is a link, and these tools never follow a link. Nothing was read; "
                            + "delete it with delete_file, or use another name.");
            assertThatThrownBy(() -> store.write(A, "link.txt", utf8("overwritten")))
                    .hasMessageStartingWith("Error: 'link.txt' is a link").hasMessageContaining("Nothing was written");
            current.set(A);
            assertThat(store.read("link.txt")).isEmpty();
            assertThat(store.listNames()).containsExactly("real.txt");

            store.delete(A, "link.txt");

            assertThat(Files.exists(store.areaDirectory(A).resolve("link.txt"), java.nio.file.LinkOption.NOFOLLOW_LINKS))
                    .isFalse();
            assertThat(outside).hasContent("untouched");
        } finally {
            Files.deleteIfExists(outside);
        }
    }

    @Test
    void anAreaThatIsALinkIsRefused() throws IOException {
        SessionFileStore store = store();
        Path elsewhere = Files.createDirectories(root.resolveSibling(root.getFileName() + "-elsewhere"));
        try {
            Files.createSymbolicLink(store.areaDirectory(A), elsewhere);

            assertThatThrownBy(() -> store.write(A, "f", utf8("x"))).isInstanceOf(ToolRefusal.class)
                    .hasMessageContaining("nothing was written");
            assertThat(elsewhere).isEmptyDirectory();
        } finally {
            Files.deleteIfExists(store.areaDirectory(A));
            Files.deleteIfExists(elsewhere);
        }
    }

    @Test
    void deletingAnAreaRemovesItAndTheCloseRemovesEveryArea() throws IOException {
        SessionFileStore store = store();
        store.write(A, "a", utf8("1"));
        store.write(B, "b", utf8("2"));
        Path outside = Files.writeString(root.resolveSibling(root.getFileName() + "-kept.txt"), "kept");
        try {
            Files.createSymbolicLink(store.areaDirectory(A).resolve("link"), outside);

            store.deleteArea(A);

            assertThat(store.areaDirectory(A)).doesNotExist();
            assertThat(outside).hasContent("kept");
            assertThat(store.areaDirectory(B)).isDirectory();
            store.deleteArea(A); // again: nothing to do, never throws

            store.deleteAll();
            assertThat(root).isEmptyDirectory();
        } finally {
            Files.deleteIfExists(outside);
        }
    }

    @Test
    void asAFileStoreAndAnOutputSinkItIsTheCurrentSessionsArea() {
        SessionFileStore store = store(SessionFiles.builder().maxFileBytes(4).maxTotalBytes(4));
        store.write(A, "in.txt", utf8("abc"));

        assertThatThrownBy(store::listNames).isInstanceOf(SandboxThreadContextMissing.class);
        current.set(B);
        assertThat(store.listNames()).isEmpty();
        assertThat(store.read("in.txt")).isEmpty();
        current.set(A);
        assertThat(store.listNames()).containsExactly("in.txt");
        assertThat(store.read("in.txt")).hasValue(utf8("abc"));
        assertThat(store.read("../in.txt")).isEmpty();

        LandedArtifact landed = store.deliver(new Artifact("in.txt", utf8("ab"), "codeact", Optional.empty()));
        assertThat(landed.display()).isEqualTo("in.txt (2 bytes; read_file reads it)");
        assertThat(landed.handle()).as("no host path").isEmpty();
        assertThat(store.read(A, "in.txt")).isEqualTo(utf8("ab"));

        assertThatThrownBy(() -> store.deliver(new Artifact("out.txt", utf8("abc"), "codeact", Optional.empty())))
                .isInstanceOf(SandboxLandingFailed.class).hasMessageContaining("'out.txt'")
                .hasMessageContaining("over the limit of 4");
        assertThatThrownBy(() -> store.deliver(new Artifact("sub/out.txt", utf8("a"), "codeact", Optional.empty())))
                .isInstanceOf(SandboxLandingFailed.class).hasMessageContaining("one flat folder");
        current.set(null);
        assertThatThrownBy(() -> store.deliver(new Artifact("x", utf8("a"), "codeact", Optional.empty())))
                .isInstanceOf(SandboxLandingFailed.class).hasMessageContaining("no MCP session");
        assertThat(store.toString()).doesNotContain(root.toString());
    }

    @Test
    void impossibleLimitsFailAtBuild() {
        assertThatThrownBy(() -> SessionFiles.builder().build()).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("root");
        assertThatThrownBy(() -> SessionFiles.builder().root(root).maxFiles(0).build())
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SessionFiles.builder().root(root).maxFileBytes(10).maxTotalBytes(5).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("maxFileBytes");
        assertThat(SessionFiles.builder().root(root).build().toString()).doesNotContain(root.toString());
    }
}
