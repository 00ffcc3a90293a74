package org.sandbox4j.microvm;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;

/**
 * The wall-clock lease: an owner that renews keeps its guests, and a guest nobody renews ends, by
 * itself (its agent powers it off) and at the hands of any backend on the state root.
 */
class MicroVmLeaseTest {

    private static final Duration SHORT_LEASE = Duration.ofSeconds(3);
    /** Far beyond a 3 s lease, even on a loaded machine: a sanity bound, not a timing. */
    private static final long GONE_WITHIN_SECONDS = 60;
    private static final SandboxSpec SPEC = SandboxSpec.builder("python").build();
    /** One state root for the class: its snapshot is made once. */
    private static final TestBackends BACKENDS = new TestBackends();

    @AfterEach
    void closeBackends() {
        BACKENDS.closeAll();
    }

    @AfterAll
    static void removeStateRoot() throws IOException {
        BACKENDS.removeStateRoot();
    }

    private MicroVmBackend backend(Duration lease) {
        return BACKENDS.build(builder -> builder.lease(lease));
    }

    private static SandboxKey key(String thread) {
        return new SandboxKey("microvm-lease-test", thread, "agent");
    }

    private static ExecResult run(Sandbox sandbox, String script) {
        return TestGuest.succeeded(sandbox, script);
    }

    private static MicroVm vmOf(Sandbox sandbox) {
        return ((MicroVmSandbox) sandbox).vm();
    }

    @Test
    void aGuestWhoseOwnerStopsRenewingPowersItselfOff() throws Exception {
        MicroVmBackend backend = backend(SHORT_LEASE);
        Sandbox sandbox = backend.acquire(key("unrenewed"), SPEC);
        run(sandbox, "true");
        MicroVm vm = vmOf(sandbox);

        // As if the owner had hung or vanished: nothing renews the lease, and no backend looks at the record.
        backend.stopRenewing();

        assertThat(vm.process().onExit().get(GONE_WITHIN_SECONDS, TimeUnit.SECONDS).isAlive()).isFalse();
        assertThat(vm.consoleTail()).as("the guest's agent, not the host, ended it")
                .contains("the host did not renew");
    }

    @Test
    void aGuestWhoseOwnerRenewsOutlivesSeveralLeases() throws Exception {
        MicroVmBackend backend = backend(SHORT_LEASE);
        Sandbox sandbox = backend.acquire(key("renewed"), SPEC);
        run(sandbox, "echo kept > marker");
        long pid = vmOf(sandbox).process().pid();

        Thread.sleep(SHORT_LEASE.multipliedBy(3).plusSeconds(1).toMillis());

        assertThat(run(sandbox, "cat marker").stdoutText().strip()).isEqualTo("kept");
        assertThat(vmOf(backend.acquire(key("renewed"), SPEC)).process().pid()).isEqualTo(pid);
        assertThat(SandboxRecord.readFrom(vmOf(sandbox).directory()).orElseThrow().leaseUntil())
                .isAfter(Instant.now());
    }

    @Test
    void aGuestWhoseLeaseRanOutIsEndedByTheNextBackendAndTheNextAcquire() throws Exception {
        // A lease long enough that the guests do not end themselves first: the host's reapers are the point here.
        MicroVmBackend owner = backend(Duration.ofMinutes(5));
        MicroVm first = vmOf(owner.acquire(key("lapsed-first"), SPEC));
        MicroVm second = vmOf(owner.acquire(key("lapsed-second"), SPEC));
        owner.stopRenewing();
        lapse(first.directory());

        MicroVmBackend next = backend(Duration.ofMinutes(5));

        assertThat(Files.exists(first.directory())).isFalse();
        assertThat(first.process().onExit().get(GONE_WITHIN_SECONDS, TimeUnit.SECONDS).isAlive()).isFalse();
        assertThat(second.process().isAlive()).as("its owner lives and its lease runs").isTrue();

        lapse(second.directory());
        run(next.acquire(key("lapsed-other"), SPEC), "true");

        assertThat(Files.exists(second.directory())).isFalse();
        assertThat(second.process().onExit().get(GONE_WITHIN_SECONDS, TimeUnit.SECONDS).isAlive()).isFalse();
    }

    @Test
    void aGuestWithARecordThisVersionCannotReadIsEndedOnceItIsOld() throws Exception {
        MicroVmBackend owner = backend(Duration.ofMinutes(5));
        MicroVm old = vmOf(owner.acquire(key("old-format"), SPEC));
        MicroVm young = vmOf(owner.acquire(key("young"), SPEC));
        owner.stopRenewing();
        // What the first version wrote: five lines of digests and the owner, no lease.
        for (MicroVm vm : List.of(old, young)) {
            Files.writeString(vm.directory().resolve(SandboxRecord.FILE), "a\nb\nc\n1\n2\n");
        }
        Files.setLastModifiedTime(old.directory(), FileTime.from(Instant.now().minus(Duration.ofHours(1))));

        backend(Duration.ofMinutes(5));

        assertThat(Files.exists(old.directory())).isFalse();
        assertThat(old.process().onExit().get(GONE_WITHIN_SECONDS, TimeUnit.SECONDS).isAlive()).isFalse();
        assertThat(young.process().isAlive()).as("a directory made just now may still be getting its record").isTrue();
    }

    /** Writes the record as an owner that stopped renewing leaves it: its lease ran out. */
    private static void lapse(Path directory) throws IOException {
        SandboxRecord.readFrom(directory).orElseThrow().lapsed().writeTo(directory);
    }
}
