package org.sandbox4j.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.BackendDeclarations;
import org.sandbox4j.core.Capability;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.EntryKind;
import org.sandbox4j.core.Isolation;
import org.sandbox4j.core.OsFamily;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxLimits;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.TransferLimits;

class InMemoryBackendTest {

    private static final SandboxKey FIRST = new SandboxKey("tenant", "thread-1", "agent");
    private static final SandboxKey SECOND = new SandboxKey("tenant", "thread-2", "agent");
    private static final SandboxSpec CODE = SandboxSpec.builder("execute_code").build();
    private static final SandboxSpec OTHER_KIND = SandboxSpec.builder("other").build();

    @Test
    void theDefaultsDeclareAWeakBackendThatServesTheDefaultSpec() {
        InMemoryBackend backend = InMemoryBackend.builder().build();
        BackendDeclarations declared = backend.declarations();

        assertThat(backend.name()).isEqualTo("in-memory");
        assertThat(declared.isolation()).isEqualTo(Isolation.NONE);
        assertThat(declared.capabilities()).isEqualTo(Capability.DEFAULT_CAPABILITIES);
        assertThat(declared.egressModes()).containsExactlyInAnyOrder(Egress.ALLOWLIST, Egress.CLOSED);
        assertThat(declared.egressModes()).contains(CODE.egress());
        assertThat(declared.limits()).isEqualTo(SandboxLimits.DEFAULT);
        assertThat(declared.osFamilies()).isEmpty();
    }

    @Test
    void acquireMakesTheWorkDirButLeavesASeededEntryThere() {
        InMemoryBackend backend = InMemoryBackend.builder().build();

        backend.acquire(FIRST, CODE);

        assertThat(backend.sandbox().kindAt(CODE.workDir())).contains(EntryKind.DIRECTORY);
        assertThat(backend.sandbox().listDir(".", CODE.workDir())).isEmpty();

        InMemorySandbox seeded = InMemorySandbox.builder().seedFile(CODE.workDir(), "a file, not a directory").build();
        InMemoryBackend.builder().sandbox(seeded).build().acquire(FIRST, CODE);

        assertThat(seeded.kindAt(CODE.workDir())).contains(EntryKind.FILE);
    }

    @Test
    void everyDeclarationIsConfigurable() {
        SandboxLimits small = new SandboxLimits(new TransferLimits(1, 2, 3), new TransferLimits(4, 5, 6));
        InMemoryBackend backend = InMemoryBackend.builder()
                .name("fake")
                .isolation(Isolation.MICROVM)
                .capabilities(Capability.EXEC, Capability.FILES_IN, Capability.FILES_DELETE)
                .egressModes(Egress.UNRESTRICTED)
                .limits(small)
                .osFamilies(OsFamily.POSIX)
                .build();
        BackendDeclarations declared = backend.declarations();

        assertThat(backend.name()).isEqualTo("fake");
        assertThat(declared.isolation()).isEqualTo(Isolation.MICROVM);
        assertThat(declared.capabilities()).containsExactlyInAnyOrder(Capability.EXEC, Capability.FILES_IN,
                Capability.FILES_DELETE);
        assertThat(declared.egressModes()).containsExactly(Egress.UNRESTRICTED);
        assertThat(declared.limits()).isEqualTo(small);
        assertThat(declared.osFamilies()).containsExactly(OsFamily.POSIX);
    }

    @Test
    void emptyEgressEnforcesNothing() {
        assertThat(InMemoryBackend.builder().egressModes().build().declarations().egressModes()).isEmpty();
    }

    @Test
    void declarationsCanBeGivenWhole() {
        BackendDeclarations whole = BackendDeclarations.builder(Isolation.CONTAINER).build();

        assertThat(InMemoryBackend.builder().declarations(whole).build().declarations()).isEqualTo(whole);
    }

    @Test
    void aNullLimitsDeclarationIsRefusedAsMalformed() {
        assertThatThrownBy(() -> InMemoryBackend.builder().limits(null).build())
                .isInstanceOf(SandboxException.class)
                .hasMessageContaining("SandboxLimits");
    }

    @Test
    void acquireRecordsKeyAndSpecAndAlwaysReturnsTheOneSandbox() {
        InMemorySandbox sandbox = InMemorySandbox.builder().build();
        InMemoryBackend backend = InMemoryBackend.builder().sandbox(sandbox).build();

        assertThat(backend.acquire(FIRST, CODE)).isSameAs(sandbox);
        assertThat(backend.acquire(SECOND, OTHER_KIND)).isSameAs(sandbox);

        assertThat(backend.sandbox()).isSameAs(sandbox);
        assertThat(backend.keys()).containsExactly(FIRST, SECOND);
        assertThat(backend.specs()).containsExactly(CODE, OTHER_KIND);
    }

    @Test
    void withoutASandboxGivenAFreshEmptyOneIsServed() {
        InMemoryBackend backend = InMemoryBackend.builder().build();

        assertThat(backend.acquire(FIRST, CODE)).isSameAs(backend.sandbox());
        assertThat(backend.sandbox().contents()).isEmpty();
    }

    @Test
    void anAcquireErrorIsThrownAfterRecordingTheKeyButNotTheSpec() {
        IllegalStateException error = new IllegalStateException("provider down");
        InMemoryBackend backend = InMemoryBackend.builder().acquireError(error).build();

        assertThatThrownBy(() -> backend.acquire(FIRST, CODE)).isSameAs(error);
        assertThat(backend.keys()).containsExactly(FIRST);
        assertThat(backend.specs()).isEmpty();

        backend.setAcquireError(null);
        backend.acquire(SECOND, CODE);
        assertThat(backend.keys()).containsExactly(FIRST, SECOND);
        assertThat(backend.specs()).containsExactly(CODE);

        backend.setAcquireError(error);
        assertThatThrownBy(() -> backend.acquire(SECOND, CODE)).isSameAs(error);
    }

    @Test
    void disposalsAreRecordedAndPurgeReportsTheConfiguredCount() {
        InMemoryBackend backend = InMemoryBackend.builder().purgeCount(3).build();

        assertThatCode(() -> backend.dispose(FIRST)).doesNotThrowAnyException();
        assertThat(backend.disposeScope("tenant", "thread-1")).isEqualTo(3);
        backend.setPurgeCount(0);
        assertThat(backend.disposeScope("tenant", "thread-2")).isZero();

        assertThat(backend.disposed()).containsExactly(FIRST);
        assertThat(backend.purged()).containsExactly(
                new InMemoryBackend.Purge("tenant", "thread-1"), new InMemoryBackend.Purge("tenant", "thread-2"));
    }

    @Test
    void purgeCountDefaultsToOne() {
        assertThat(InMemoryBackend.builder().build().disposeScope("s", "t")).isEqualTo(1);
    }

    @Test
    void badConfigurationIsRefused() {
        assertThatThrownBy(() -> InMemoryBackend.builder().name(" ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> InMemoryBackend.builder().purgeCount(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> InMemoryBackend.builder().build().setPurgeCount(-1))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void recordsAreSnapshots() {
        InMemoryBackend backend = InMemoryBackend.builder().build();
        var keys = backend.keys();

        backend.acquire(FIRST, CODE);

        assertThat(keys).isEmpty();
        assertThatThrownBy(() -> backend.keys().add(SECOND)).isInstanceOf(UnsupportedOperationException.class);
        assertThat(Set.copyOf(backend.keys())).containsExactly(FIRST);
    }
}
