package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TemporaryBackendTest {

    private static final byte[] KEPT = "outside the state root\n".getBytes(StandardCharsets.UTF_8);

    @Test
    void closingDeletesTheStateRootWithoutFollowingItsLinks(@TempDir Path decoys) throws IOException {
        Path decoy = Files.write(decoys.resolve("kept.txt"), KEPT);
        Path root;
        try (TemporaryBackend<ClosableInMemory> temporary = TemporaryBackend.create("s4jt",
                stateRoot -> new ClosableInMemory())) {
            root = temporary.stateRoot();
            Files.write(Files.createDirectories(root.resolve("a/b")).resolve("file.txt"), KEPT);
            Files.createSymbolicLink(root.resolve("a/link-dir"), decoys);
            Files.createSymbolicLink(root.resolve("a/b/link-file"), decoy);
            assertThat(temporary.router()).isNotNull();
        }
        assertThat(Files.exists(root, LinkOption.NOFOLLOW_LINKS)).isFalse();
        assertThat(Files.readAllBytes(decoy)).isEqualTo(KEPT);
    }

    @Test
    void deletingAMissingTreeIsNoFailure(@TempDir Path parent) {
        TemporaryBackend.deleteTree(parent.resolve("never-made"));
        assertThat(parent).isDirectory();
    }

    /** The in-memory backend holds nothing that needs closing; the test only needs one that is closable. */
    private static final class ClosableInMemory extends ForwardingBackend implements AutoCloseable {
        ClosableInMemory() {
            super(InMemoryBackend.builder().build());
        }

        @Override
        public void close() {
        }
    }
}
