package org.sandbox4j.docker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.SandboxKey;

/** The container's name and labels, and the little tar the archive endpoints need. */
class NamesAndTarTest {

    @Test
    void labelValuesPassIntactOrAreHashedNeverTruncated() {
        assertThat(ContainerIdentity.labelValue("thread-42")).isEqualTo("thread-42");
        String longValue = "x".repeat(64);
        assertThat(ContainerIdentity.labelValue(longValue)).matches("sha256-[0-9a-f]{48}");
        assertThat(ContainerIdentity.labelValue("a b")).matches("sha256-[0-9a-f]{48}");
        // A value shaped like a digest is hashed too, so no raw value can pose as another's digest.
        String shaped = ContainerIdentity.labelValue(longValue);
        assertThat(ContainerIdentity.labelValue(shaped)).isNotEqualTo(shaped).matches("sha256-[0-9a-f]{48}");
        assertThat(ContainerIdentity.labelValue("a b")).isEqualTo(ContainerIdentity.labelValue("a b"));
    }

    @Test
    void theNameIsADigestOfEverythingThatFixesTheContainer() {
        SandboxKey key = new SandboxKey("scope", "thread", "agent");
        ContainerIdentity one = ContainerIdentity.of("docker", key, "kind", "/sandbox4j", "fp");
        assertThat(one.name()).matches("sandbox4j-[0-9a-f]{24}");
        assertThat(ContainerIdentity.of("docker", key, "kind", "/sandbox4j", "fp")).isEqualTo(one);
        assertThat(ContainerIdentity.of("docker", key, "other", "/sandbox4j", "fp").name()).isNotEqualTo(one.name());
        assertThat(ContainerIdentity.of("docker", key, "kind", "/elsewhere", "fp").name()).isNotEqualTo(one.name());
        assertThat(ContainerIdentity.of("docker", key, "kind", "/sandbox4j", "fp2").name()).isNotEqualTo(one.name());
        assertThat(ContainerIdentity.of("podman", key, "kind", "/sandbox4j", "fp").name()).isNotEqualTo(one.name());
        assertThat(one.labels()).containsEntry(ContainerIdentity.LABEL_SCOPE, "scope")
                .containsEntry(ContainerIdentity.LABEL_THREAD, "thread").containsEntry(ContainerIdentity.LABEL_KIND, "kind");
    }

    @Test
    void aWrittenArchiveReadsBackItsFirstHeader() throws IOException {
        byte[] archive = new Tar.Writer(65534, 65534).file("a.txt", 0644, "hello".getBytes(StandardCharsets.UTF_8))
                .finish();
        ByteArrayInputStream in = new ByteArrayInputStream(archive);
        Tar.Header header = Tar.firstHeader(in).orElseThrow();
        assertThat(header).isEqualTo(new Tar.Header("a.txt", EntryKind.FILE, 5));
        assertThat(new String(in.readNBytes(5), StandardCharsets.UTF_8)).isEqualTo("hello");
    }

    @Test
    void longAndNonAsciiNamesTravelInAPaxHeader() throws IOException {
        String name = "d/".repeat(80) + "fïle.txt";
        byte[] archive = new Tar.Writer(0, 0).directory("d", 0755).file(name, 0644, new byte[3]).finish();
        ByteArrayInputStream in = new ByteArrayInputStream(archive);
        assertThat(Tar.firstHeader(in).orElseThrow()).isEqualTo(new Tar.Header("d/", EntryKind.DIRECTORY, 0));
        assertThat(Tar.firstHeader(in).orElseThrow()).isEqualTo(new Tar.Header(name, EntryKind.FILE, 3));
    }

    @Test
    void paxRecordsCountTheirOwnLength() {
        for (int length = 1; length < 300; length++) {
            byte[] record = Tar.paxRecord("path", "x".repeat(length));
            String text = new String(record, StandardCharsets.UTF_8);
            assertThat(Integer.parseInt(text.substring(0, text.indexOf(' ')))).isEqualTo(record.length);
        }
    }

    @Test
    void anEmptyArchiveHasNoEntryAndACorruptHeaderIsRefused() throws IOException {
        assertThat(Tar.firstHeader(new ByteArrayInputStream(new byte[1024]))).isEmpty();
        byte[] archive = new Tar.Writer(0, 0).file("a", 0644, new byte[1]).finish();
        archive[0] = 'b';
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> Tar.firstHeader(new ByteArrayInputStream(archive)))
                .isInstanceOf(IOException.class).hasMessageContaining("checksum");
    }
}
