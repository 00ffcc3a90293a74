package org.sandbox4j.microvm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxListing;
import org.sandbox4j.core.SandboxQuery;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.KeyDigest;
import org.sandbox4j.core.spi.TreeRemoval;

/** The backend as a {@link org.sandbox4j.core.SandboxInventory}: listed and disposed of from the records alone. */
class MicroVmInventoryTest {

    private static final String SCOPE = "microvm-inventory-test";
    /** One state root for the class: its snapshot is made once. */
    private static final Path STATE_ROOT = TestGuest.stateRoot();
    private final Path stateRoot = STATE_ROOT;
    private final MicroVmBackend owner = MicroVmBackend.builder().guest(TestGuest.image()).stateRoot(stateRoot).build();

    @AfterEach
    void closeBackend() {
        owner.close();
    }

    @AfterAll
    static void removeStateRoot() throws IOException {
        TreeRemoval.remove(STATE_ROOT, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
    }

    @Test
    void anotherInstanceListsAndDisposesByScopeAndThreadWithTheLocalBackendsFields() throws Exception {
        Instant before = Instant.now();
        Sandbox one = owner.acquire(new SandboxKey(SCOPE, "one", "agent"), SandboxSpec.builder("python").build());
        owner.acquire(new SandboxKey(SCOPE, "two", "agent"), SandboxSpec.builder("codeact").build());
        owner.acquire(new SandboxKey("another-scope", "one", "agent"), SandboxSpec.builder("python").build());
        MicroVm oneVm = ((MicroVmSandbox) one).vm();

        try (MicroVmBackend other = MicroVmBackend.builder().guest(TestGuest.image()).stateRoot(stateRoot).build()) {
            List<SandboxListing> scope = other.list(SandboxQuery.scope(SCOPE));
            assertThat(scope).extracting(SandboxListing::kind).containsExactly(Optional.of("python"),
                    Optional.of("codeact"));
            assertThat(scope).allSatisfy(listing -> {
                assertThat(listing.backend()).isEqualTo(MicroVmBackend.DEFAULT_NAME);
                assertThat(listing.scope()).isEqualTo(SCOPE);
                assertThat(listing.threadId()).as("the record keeps the thread as a digest only").isEmpty();
                assertThat(listing.id()).startsWith("vm-");
                assertThat(listing.createdAt()).hasValueSatisfying(at -> assertThat(at).isAfterOrEqualTo(before));
                assertThat(listing.lastUsed()).isPresent();
            });
            assertThat(scope).extracting(SandboxListing::threadDigest).containsExactly(
                    SandboxListing.threadDigestOf("one"), SandboxListing.threadDigestOf("two"));
            assertThat(other.list(SandboxQuery.conversation(SCOPE, "one"))).singleElement()
                    .satisfies(listing -> assertThat(listing.threadId()).contains("one"));

            assertThat(other.dispose(SandboxQuery.conversation(SCOPE, "one"))).isEqualTo(1);
            assertThat(oneVm.process().onExit().get(30, TimeUnit.SECONDS).isAlive()).isFalse();
            assertThat(other.list(SandboxQuery.scope(SCOPE))).hasSize(1);

            assertThat(other.dispose(SandboxQuery.scope(SCOPE))).isEqualTo(1);
            assertThat(other.list(SandboxQuery.scope(SCOPE))).isEmpty();
            assertThat(other.list(SandboxQuery.scope("another-scope"))).hasSize(1);
        }
    }

    @Test
    void theRecordKeepsLabelsAsDigestsAsTheLocalBackendsDo() throws Exception {
        owner.acquire(new SandboxKey(SCOPE, "secret-thread", "secret-agent-dir"), SandboxSpec.builder("python")
                .build());
        Path directory = stateRoot.resolve(owner.list(SandboxQuery.scope(SCOPE)).get(0).id());
        String text = java.nio.file.Files.readString(directory.resolve(SandboxRecord.FILE));

        assertThat(text).doesNotContain("secret-thread", "secret-agent-dir", SCOPE)
                .contains("scope-sha256=" + KeyDigest.sha256Hex(SCOPE),
                        "thread-sha256=" + KeyDigest.sha256Hex("secret-thread"),
                        "agent-dir-sha256=" + KeyDigest.sha256Hex("secret-agent-dir"), "kind=python");
    }
}
