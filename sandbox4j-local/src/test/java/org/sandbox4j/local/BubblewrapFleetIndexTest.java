package org.sandbox4j.local;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxDisposed;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxQuery;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.KeyDigest;

/**
 * Acquire, the first exec and dispose cost what they cost for one sandbox however many the state
 * root holds: they open the records of their own conversation through the index and never list
 * the root (counted through the store's seam, on real bubblewrap). The index is a hint another
 * replica shares: it disposes by scope through it, a lost index is rebuilt, and an entry that names
 * a missing sandbox or another conversation's is dropped, never obeyed.
 */
@EnabledOnOs(OS.LINUX)
class BubblewrapFleetIndexTest {

    private static final String WORK = SandboxSpec.DEFAULT_WORK_DIR;
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final SandboxSpec SPEC = SandboxSpec.builder("fleet").build();
    private static final SandboxSpec OTHER_KIND = SandboxSpec.builder("fleet-other").build();
    /** Enough held sandboxes that a listing of the root could not hide among them. */
    private static final int HELD = 12;
    private static final String SCOPE = "fleet-scope";

    private Path stateRoot;
    private BubblewrapBackend first;
    private BubblewrapBackend second;

    @BeforeEach
    void twoReplicas() throws IOException {
        stateRoot = Files.createTempDirectory("s4jx");
        first = BubblewrapBackend.builder().stateRoot(stateRoot).build();
        second = BubblewrapBackend.builder().stateRoot(stateRoot).build();
    }

    @AfterEach
    void cleanUp() {
        first.dispose(SandboxQuery.scope(SCOPE));
        first.dispose(SandboxQuery.scope("elsewhere"));
        first.close();
        second.close();
        LocalStore.deleteTree(stateRoot);
    }

    @Test
    void acquireFirstExecAndDisposeNeverListTheStateRootWhateverItHolds() {
        for (int i = 0; i < HELD; i++) {
            first.acquire(key("held-" + i, "agent"), SPEC);
        }
        LocalStore store = first.sandboxes().store();
        long listingsBefore = store.rootListingsByThisThread();

        SandboxKey key = key("measured", "agent");
        assertThat(first.acquire(key, SPEC).exec(List.of("/bin/true"), WORK, TIMEOUT).exitCode()).isZero();
        assertThat(first.acquire(key, OTHER_KIND).exec(List.of("/bin/true"), WORK, TIMEOUT).exitCode()).isZero();
        first.dispose(key);
        assertThat(first.disposeScope(SCOPE, "held-0")).isEqualTo(1);

        assertThat(store.rootListingsByThisThread()).as("listings of the state root by acquire, exec and dispose")
                .isEqualTo(listingsBefore);
        assertThat(sandboxDirectories()).as("both kinds of the disposed key and held-0 gone, the rest held")
                .hasSize(HELD - 1);
    }

    @Test
    void anotherReplicaDisposesByScopeWhatTheFirstMadeAndNothingElse() {
        Sandbox one = first.acquire(key("t", "agent-a"), SPEC);
        first.acquire(key("t", "agent-b"), SPEC);
        first.acquire(key("t", "agent-a"), OTHER_KIND);
        first.acquire(key("other-thread", "agent-a"), SPEC);
        first.acquire(new SandboxKey("elsewhere", "t", "agent-a"), SPEC);
        long listingsBefore = second.sandboxes().store().rootListingsByThisThread();

        assertThat(second.disposeScope(SCOPE, "t")).as("what the first replica made for the thread").isEqualTo(3);

        assertThat(second.sandboxes().store().rootListingsByThisThread()).isEqualTo(listingsBefore);
        assertThatThrownBy(() -> one.exec(List.of("true"), WORK, TIMEOUT)).isInstanceOf(SandboxDisposed.class);
        assertThat(sandboxDirectories()).as("the other thread's and the other scope's").hasSize(2);
        assertThat(second.disposeScope(SCOPE, "t")).as("nothing left to dispose of").isZero();
    }

    @Test
    void aLostIndexIsRebuiltWhenABackendOpensTheStateRoot() {
        first.acquire(key("t", "agent"), SPEC);
        first.acquire(key("u", "agent"), SPEC);
        LocalStore.deleteTree(first.sandboxes().store().index().root());

        try (BubblewrapBackend third = BubblewrapBackend.builder().stateRoot(stateRoot).build()) {
            assertThat(third.sandboxes().store().index().ready()).isTrue();
            long listingsBefore = third.sandboxes().store().rootListingsByThisThread();
            assertThat(third.disposeScope(SCOPE, "t")).as("found through the rebuilt index").isEqualTo(1);
            assertThat(third.sandboxes().store().rootListingsByThisThread()).isEqualTo(listingsBefore);
        }
        assertThat(sandboxDirectories()).hasSize(1);
    }

    @Test
    void anEntryNamingAMissingSandboxOrAnotherConversationsIsDroppedNeverObeyed() throws IOException {
        first.acquire(key("t", "agent"), SPEC);
        SandboxKey foreignKey = new SandboxKey("elsewhere", "z", "agent");
        first.acquire(foreignKey, SPEC);
        String foreignId = sandboxIdOf(foreignKey);
        SandboxIndex index = first.sandboxes().store().index();
        Path thread = index.root().resolve(KeyDigest.sha256Hex(SCOPE)).resolve(KeyDigest.sha256Hex("t"));
        Path stale = Files.createFile(thread.resolve("sbx-" + "0".repeat(32)));
        Path foreign = Files.createFile(thread.resolve(foreignId));

        assertThat(second.disposeScope(SCOPE, "t")).as("the thread's own sandbox alone").isEqualTo(1);

        assertThat(stale).as("an entry whose sandbox is gone").doesNotExist();
        assertThat(foreign).as("an entry naming another conversation's sandbox").doesNotExist();
        assertThat(first.sandboxes().store().directory(foreignId)).as("that sandbox, untouched").isDirectory();
        assertThat(index.ids(KeyDigest.sha256Hex("elsewhere"), KeyDigest.sha256Hex("z")))
                .as("its own entry").contains(List.of(foreignId));
    }

    private String sandboxIdOf(SandboxKey key) {
        return first.sandboxes().store().index().ids(KeyDigest.sha256Hex(key.scope()),
                KeyDigest.sha256Hex(key.threadId())).orElseThrow().get(0);
    }

    private static SandboxKey key(String thread, String agent) {
        return new SandboxKey(SCOPE, thread, agent);
    }

    private List<Path> sandboxDirectories() {
        try (var children = Files.list(first.stateDirectory())) {
            return children.filter(path -> path.getFileName().toString().startsWith("sbx-")).toList();
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
