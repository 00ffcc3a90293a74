package org.sandbox4j.core.outputs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sandbox4j.core.SandboxLandingFailed;
import org.sandbox4j.core.SandboxLandingNotConfined;
import org.sandbox4j.core.SandboxOutputException;

class FileSystemSinkTest {

    private static final String KIND = "execute_code";
    private static final String KNOWN = "known content\n";

    @TempDir
    Path temp;

    private Path root;
    private Path outside;
    private FileSystemSink sink;

    @BeforeEach
    void setUp() throws IOException {
        root = Files.createDirectory(temp.resolve("landing"));
        outside = Files.createDirectory(temp.resolve("outside"));
        sink = FileSystemSink.at(root);
    }

    private static Artifact artifact(String name, byte[] content) {
        return new Artifact(name, content, KIND, Optional.empty());
    }

    private static Artifact artifact(String name, String content) {
        return artifact(name, content.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void bytesLandVerbatim() throws IOException {
        byte[] payload = new byte[256];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) i;
        }

        LandedArtifact landed = sink.deliver(artifact("binary.bin", payload));

        assertThat(Files.readAllBytes(root.resolve("binary.bin"))).isEqualTo(payload);
        assertThat(landed.name()).isEqualTo("binary.bin");
        assertThat(landed.display()).isEqualTo("binary.bin (256 bytes)");
        assertThat(landed.handle()).contains(root.toRealPath().resolve("binary.bin").toString());
    }

    @Test
    void lineEndingsAreNotTranslated() throws IOException {
        sink.deliver(artifact("crlf.txt", "one\r\ntwo\n"));

        assertThat(Files.readAllBytes(root.resolve("crlf.txt"))).isEqualTo("one\r\ntwo\n".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void nestedNamesCreateTheirParents() throws IOException {
        sink.deliver(artifact("charts/2024/q1/sales.csv", "a,b\n"));
        sink.deliver(artifact("charts/2024/q2.csv", "c,d\n"));

        assertThat(root.resolve("charts/2024/q1")).isDirectory();
        assertThat(Files.readString(root.resolve("charts/2024/q1/sales.csv"))).isEqualTo("a,b\n");
        assertThat(Files.readString(root.resolve("charts/2024/q2.csv"))).isEqualTo("c,d\n");
    }

    @Test
    void aSecondDeliveryReplacesTheFileWhole() throws IOException {
        sink.deliver(artifact("report.txt", "a much longer first version\n"));
        sink.deliver(artifact("report.txt", "second\n"));

        assertThat(Files.readString(root.resolve("report.txt"))).isEqualTo("second\n");
    }

    @Test
    void noTemporaryFileIsLeftBehind() throws IOException {
        sink.deliver(artifact("dir/one.txt", "1"));
        sink.deliver(artifact("dir/one.txt", "2"));

        assertThat(namesIn(root.resolve("dir"))).containsExactly("one.txt");
        assertThat(namesIn(root)).containsExactly("dir");
    }

    @Test
    void aLinkedDirectoryIsRefusedAndNothingIsWrittenThroughIt() throws IOException {
        Files.createSymbolicLink(root.resolve("linked"), outside);

        assertThatThrownBy(() -> sink.deliver(artifact("linked/planted.txt", "payload")))
                .isInstanceOf(SandboxLandingNotConfined.class)
                .hasMessageContaining("'linked/planted.txt'")
                .satisfies(this::namesNoHostPath);

        assertThat(namesIn(outside)).isEmpty();
        assertThat(Files.isSymbolicLink(root.resolve("linked"))).isTrue();
    }

    @Test
    void aLinkedDirectoryDeeperDownIsRefused() throws IOException {
        Files.createDirectories(root.resolve("a"));
        Files.createSymbolicLink(root.resolve("a/b"), outside);

        assertThatThrownBy(() -> sink.deliver(artifact("a/b/c/planted.txt", "payload")))
                .isInstanceOf(SandboxLandingNotConfined.class)
                .satisfies(this::namesNoHostPath);

        assertThat(namesIn(outside)).isEmpty();
    }

    @Test
    void aLinkedFileIsRefusedAndItsTargetKept() throws IOException {
        Path target = Files.writeString(outside.resolve("target.txt"), KNOWN);
        Files.createSymbolicLink(root.resolve("out.txt"), target);

        assertThatThrownBy(() -> sink.deliver(artifact("out.txt", "overwritten")))
                .isInstanceOf(SandboxLandingNotConfined.class)
                .hasMessageContaining("'out.txt'")
                .satisfies(this::namesNoHostPath);

        assertThat(Files.readString(target)).isEqualTo(KNOWN);
        assertThat(Files.isSymbolicLink(root.resolve("out.txt"))).isTrue();
        assertThat(namesIn(root)).containsExactly("out.txt");
    }

    @Test
    void aDanglingLinkIsRefusedAndNothingIsCreatedAtItsTarget() throws IOException {
        Path target = outside.resolve("created-through-link.txt");
        Files.createSymbolicLink(root.resolve("dangling.txt"), target);

        assertThatThrownBy(() -> sink.deliver(artifact("dangling.txt", "payload")))
                .isInstanceOf(SandboxLandingNotConfined.class);

        assertThat(target).doesNotExist();
    }

    @Test
    void aDirectoryAtTheDestinationIsRefused() throws IOException {
        Files.createDirectories(root.resolve("taken/inside"));

        assertThatThrownBy(() -> sink.deliver(artifact("taken", "payload")))
                .isInstanceOf(SandboxLandingFailed.class)
                .hasMessageContaining("'taken'")
                .satisfies(this::namesNoHostPath);

        assertThat(root.resolve("taken/inside")).isDirectory();
    }

    @Test
    void aFileInPlaceOfAParentIsRefused() throws IOException {
        Files.writeString(root.resolve("plain.txt"), KNOWN);

        assertThatThrownBy(() -> sink.deliver(artifact("plain.txt/deeper.txt", "payload")))
                .isInstanceOf(SandboxLandingFailed.class)
                .hasMessageContaining("not a directory")
                .satisfies(this::namesNoHostPath);

        assertThat(Files.readString(root.resolve("plain.txt"))).isEqualTo(KNOWN);
    }

    @Test
    void landingRefusalsBelongToTheOutputFamily() {
        assertThat(SandboxOutputException.class).isAssignableFrom(SandboxLandingNotConfined.class)
                .isAssignableFrom(SandboxLandingFailed.class);
    }

    @Test
    void aMissingRootIsCreated() throws IOException {
        Path fresh = temp.resolve("fresh/nested/root");

        FileSystemSink.at(fresh).deliver(artifact("out.txt", "x"));

        assertThat(Files.readString(fresh.resolve("out.txt"))).isEqualTo("x");
    }

    @Test
    void aLinkedRootIsHostConfigurationAndIsResolvedOnce() throws IOException {
        Path linkedRoot = Files.createSymbolicLink(temp.resolve("root-link"), root);

        LandedArtifact landed = FileSystemSink.at(linkedRoot).deliver(artifact("out.txt", "x"));

        assertThat(Files.readString(root.resolve("out.txt"))).isEqualTo("x");
        assertThat(landed.handle()).contains(root.toRealPath().resolve("out.txt").toString());
    }

    @Test
    void aCustomDisplayIsWhatTheModelSees() {
        FileSystemSink custom = FileSystemSink.at(root, (artifact, destination) ->
                "saved " + artifact.name() + " as " + destination.getFileName());

        LandedArtifact landed = custom.deliver(artifact("dir/out.txt", "x"));

        assertThat(landed.display()).isEqualTo("saved dir/out.txt as out.txt");
    }

    @Test
    void theSinkRendersNoHostPath() {
        assertThat(sink.toString()).doesNotContain(temp.toString());
        assertThat(sink.deliver(artifact("out.txt", "x")).toString()).doesNotContain(temp.toString());
    }

    private void namesNoHostPath(Throwable refusal) {
        assertThat(refusal.getMessage()).doesNotContain(temp.toString()).doesNotContain("landing/")
                .doesNotContain("outside");
    }

    private static List<String> namesIn(Path directory) throws IOException {
        try (Stream<Path> entries = Files.list(directory)) {
            return entries.filter(path -> Files.exists(path, LinkOption.NOFOLLOW_LINKS))
                    .map(path -> path.getFileName().toString()).sorted().toList();
        }
    }
}
