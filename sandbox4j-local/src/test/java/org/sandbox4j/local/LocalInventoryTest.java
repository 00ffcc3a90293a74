package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.SandboxBackend;
import org.sandbox4j.core.SandboxInventory;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxListing;
import org.sandbox4j.core.SandboxQuery;
import org.sandbox4j.core.SandboxSpec;

/**
 * Both local backends list and dispose of sandboxes by scope or conversation from the state root,
 * so a second instance (another process) sees what the first made. Acquires only: nothing runs.
 */
class LocalInventoryTest {

    private Path stateRoot;

    @BeforeEach
    void root() throws IOException {
        stateRoot = Files.createTempDirectory("s4ji");
    }

    @AfterEach
    void clean() {
        LocalStore.deleteTree(stateRoot);
    }

    private Function<Path, SandboxBackend> backend(String type) {
        return root -> type.equals(BubblewrapBackend.TYPE) ? BubblewrapBackend.builder().stateRoot(root).build()
                : ProcessBackend.builder().stateRoot(root).build();
    }

    private static SandboxSpec spec(String type) {
        // ProcessBackend enforces only unrestricted egress; bubblewrap closes it.
        return SandboxSpec.builder("inventory")
                .egress(type.equals(ProcessBackend.TYPE) ? Egress.UNRESTRICTED : Egress.CLOSED).build();
    }

    @ParameterizedTest
    @ValueSource(strings = {BubblewrapBackend.TYPE, ProcessBackend.TYPE})
    void aSecondInstanceListsAndDisposesByScopeAndConversation(String type) {
        SandboxBackend maker = backend(type).apply(stateRoot);
        maker.acquire(new SandboxKey("alice", "t1", "agent"), spec(type));
        maker.acquire(new SandboxKey("alice", "t2", "agent"), spec(type));
        maker.acquire(new SandboxKey("bob", "t1", "agent"), spec(type));

        SandboxInventory other = (SandboxInventory) backend(type).apply(stateRoot);
        List<SandboxListing> alice = other.list(SandboxQuery.scope("alice"));
        assertThat(alice).hasSize(2).allSatisfy(listing -> {
            assertThat(listing.backend()).isEqualTo(maker.name());
            assertThat(listing.scope()).isEqualTo("alice");
            assertThat(listing.threadId()).isEmpty();
            assertThat(listing.kind()).contains("inventory");
            assertThat(listing.createdAt()).isPresent();
            assertThat(listing.lastUsed()).isPresent();
        });
        assertThat(alice).extracting(SandboxListing::threadDigest)
                .containsExactlyInAnyOrder(SandboxListing.threadDigestOf("t1"), SandboxListing.threadDigestOf("t2"));

        List<SandboxListing> one = other.list(SandboxQuery.conversation("alice", "t2"));
        assertThat(one).singleElement().satisfies(listing -> assertThat(listing.threadId()).isEqualTo(Optional.of("t2")));

        assertThat(other.dispose(SandboxQuery.conversation("alice", "t2"))).isEqualTo(1);
        assertThat(other.dispose(SandboxQuery.scope("alice"))).isEqualTo(1);
        assertThat(other.list(SandboxQuery.scope("alice"))).isEmpty();
        assertThat(((SandboxInventory) maker).list(SandboxQuery.scope("bob"))).hasSize(1);
        closeIfNeeded(maker);
        closeIfNeeded((SandboxBackend) other);
    }

    private static void closeIfNeeded(SandboxBackend backend) {
        if (backend instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception ignored) {
                // a test's backend
            }
        }
    }
}
