package org.sandbox4j.core.outputs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.Optional;

import org.junit.jupiter.api.Test;
import org.sandbox4j.core.SandboxArtifactNameInvalid;

class ArtifactTest {

    private static final String SECRET_HANDLE = "https://store.example/out.png?sig=bearer-secret";

    @Test
    void anArtifactRefusesAnInvalidName() {
        assertThatThrownBy(() -> new Artifact("../escape", new byte[0], "kind", Optional.empty()))
                .isInstanceOf(SandboxArtifactNameInvalid.class);
    }

    @Test
    void anArtifactKeepsItsOwnCopyOfTheBytes() {
        byte[] bytes = "original".getBytes(StandardCharsets.UTF_8);
        Artifact artifact = new Artifact("out.txt", bytes, "kind", Optional.of("text/plain"));
        bytes[0] = 'X';
        artifact.content()[1] = 'Y';

        assertThat(new String(artifact.content(), StandardCharsets.UTF_8)).isEqualTo("original");
        assertThat(artifact.size()).isEqualTo(8);
        assertThat(artifact).isEqualTo(new Artifact("out.txt", "original".getBytes(StandardCharsets.UTF_8), "kind",
                Optional.of("text/plain")));
    }

    @Test
    void aLandedArtifactNeverRendersItsHandle() {
        LandedArtifact landed = new LandedArtifact("out.png", "out.png (3 bytes)", Optional.of(SECRET_HANDLE));

        assertThat(landed.toString()).contains("out.png (3 bytes)").doesNotContain("bearer-secret");
        assertThat(landed.handle()).contains(SECRET_HANDLE);
    }

    @Test
    void aSinkNormalisesToNfcUnlessItSaysOtherwise() {
        OutputSink sink = artifact -> LandedArtifact.of(artifact.name(), artifact.name());
        assertThat(sink.normalization()).isEqualTo(org.sandbox4j.core.NameNormalization.NFC);
    }
}
