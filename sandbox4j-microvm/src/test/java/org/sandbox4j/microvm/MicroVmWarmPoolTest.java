package org.sandbox4j.microvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxListing;
import org.sandbox4j.core.SandboxQuery;
import org.sandbox4j.core.SandboxSpec;

/** The warm pool: idle restored guests an acquire claims, refilled off the caller's path, ended with their owner. */
class MicroVmWarmPoolTest {

    private static final String SCOPE = "microvm-pool-test";
    /** How long the refill may take on a loaded machine: a sanity bound, not a timing. */
    private static final Duration REFILL_BOUND = Duration.ofSeconds(90);
    private static final SandboxSpec SPEC = SandboxSpec.builder("python").build();
    /** One state root for the class: its snapshots are made once. */
    private static final TestBackends BACKENDS = new TestBackends();
    private static final Path STATE_ROOT = BACKENDS.stateRoot();

    @AfterEach
    void closeBackends() {
        BACKENDS.closeAll();
    }

    @AfterAll
    static void removeStateRoot() throws IOException {
        BACKENDS.removeStateRoot();
    }

    private MicroVmBackend backend(int warmPool) {
        return BACKENDS.build(builder -> builder.warmPool(warmPool));
    }

    private static SandboxKey key(String thread) {
        return new SandboxKey(SCOPE, thread, "agent");
    }

    private static ExecResult run(Sandbox sandbox, String script) {
        return TestGuest.succeeded(sandbox, script);
    }

    private static String pool(MicroVmBackend backend) {
        return backend.diagnostics().stream().filter(line -> line.startsWith("warm pool:")).findFirst().orElseThrow();
    }

    /** Waits until the pool holds {@code count} idle guests; their directories. */
    private static List<Path> awaitIdle(MicroVmBackend backend, int count) throws InterruptedException {
        long until = System.nanoTime() + REFILL_BOUND.toNanos();
        while (!pool(backend).contains(" " + count + " idle now")) {
            assertThat(System.nanoTime() - until).as("the pool refills: " + pool(backend)).isNegative();
            Thread.sleep(100);
        }
        List<Path> idle = unclaimedDirectories();
        assertThat(idle).hasSize(count);
        return idle;
    }

    /** The guest directories whose record names no key. */
    private static List<Path> unclaimedDirectories() {
        try (Stream<Path> entries = Files.list(STATE_ROOT)) {
            return entries.filter(path -> path.getFileName().toString().startsWith("vm-"))
                    .filter(path -> SandboxRecord.readFrom(path).map(SandboxRecord::scopeHash)
                            .filter(SandboxRecord.UNCLAIMED::equals).isPresent())
                    .toList();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void anAcquireClaimsAnIdleGuestRenewedForItsKeyAndThePoolRefills() throws Exception {
        MicroVmBackend backend = backend(1);
        Sandbox first = backend.acquire(key("first"), SPEC);
        assertThat(pool(backend)).as("the first acquire of a launch finds the pool empty")
                .contains("0 claim(s), 1 miss(es)");
        Path idle = awaitIdle(backend, 1).get(0);
        assertThat(backend.list(SandboxQuery.scope(SCOPE))).as("an idle guest's record matches no key")
                .extracting(SandboxListing::id).containsExactly(((MicroVmSandbox) first).directory().getFileName()
                        .toString());
        // Its clock runs wrong while it idles (as a long idle would drift it): the claim sets it again.
        MicroVmBackend.connected(idle).orElseThrow().agent().setClock(Instant.parse("2001-01-01T00:00:00Z"));

        Sandbox claimed = backend.acquire(key("second"), SPEC);

        assertThat(((MicroVmSandbox) claimed).directory()).isEqualTo(idle);
        assertThat(pool(backend)).contains("1 claim(s), 1 miss(es)");
        assertThat(SandboxRecord.readFrom(idle).orElseThrow().belongsTo(key("second"))).isTrue();
        assertThat(backend.list(SandboxQuery.conversation(SCOPE, "second"))).singleElement()
                .satisfies(listing -> assertThat(listing.id()).isEqualTo(idle.getFileName().toString()));
        String[] guest = run(claimed, "date +%s; cat /proc/sys/kernel/random/uuid").stdoutText().split("\n");
        assertThat(Math.abs(Long.parseLong(guest[0]) - Instant.now().getEpochSecond())).isLessThan(60);
        assertThat(guest[1]).isNotEqualTo(run(first, "cat /proc/sys/kernel/random/uuid").stdoutText().strip());
        assertThat(run(claimed, "echo $(id -u) $PWD").stdoutText().strip()).isEqualTo("1000 /sandbox4j/work");

        assertThat(awaitIdle(backend, 1)).doesNotContain(idle);
    }

    @Test
    void anAllowlistingGuestIsClaimedFromItsOwnLaunchsPool() throws Exception {
        MicroVmBackend backend = backend(1);
        SandboxSpec allowlisting = SandboxSpec.builder("python").egress(Egress.ALLOWLIST).egressAllow("example.org")
                .build();
        backend.acquire(key("closed"), SPEC);
        Path closedIdle = awaitIdle(backend, 1).get(0);
        backend.acquire(key("allow-first"), allowlisting);
        List<Path> idle = awaitIdle(backend, 2);

        Sandbox claimed = backend.acquire(key("allow-second"), allowlisting);

        Path claimedDirectory = ((MicroVmSandbox) claimed).directory();
        assertThat(idle).contains(claimedDirectory);
        assertThat(claimedDirectory).isNotEqualTo(closedIdle);
        String ports = "cat /sys/class/virtio-ports/*/name | sort | tr '\\n' ' '; echo; echo \"$http_proxy\"";
        assertThat(run(claimed, ports).stdoutText().lines().toList()).containsExactly("agent egress ",
                "http://127.0.0.1:3128");
        assertThat(backend.egressAuditLog(claimed)).isPresent();
    }

    @Test
    void closeEndsTheIdleGuests() throws Exception {
        MicroVmBackend backend = backend(2);
        backend.acquire(key("close"), SPEC);
        List<ProcessHandle> idle = awaitIdle(backend, 2).stream()
                .map(directory -> MicroVm.recordedProcess(directory).orElseThrow()).toList();

        backend.close();

        for (ProcessHandle qemu : idle) {
            assertThat(qemu.onExit().get(30, TimeUnit.SECONDS).isAlive()).isFalse();
        }
        assertThat(unclaimedDirectories()).isEmpty();
    }

    @Test
    void theIdleGuestsOfAnOwnerThatDiedAreEndedByTheNextBackend() throws Exception {
        MicroVmBackend owner = backend(1);
        owner.acquire(key("orphan"), SPEC);
        Path idle = awaitIdle(owner, 1).get(0);
        ProcessHandle qemu = MicroVm.recordedProcess(idle).orElseThrow();
        SandboxRecord record = SandboxRecord.readFrom(idle).orElseThrow();
        // As if the JVM that keeps the pool had crashed: an owner start no live process has.
        new SandboxRecord(record.scopeHash(), record.threadHash(), record.agentHash(), record.kind(),
                record.fingerprint(), record.createdAt(), record.acquiredAt(), record.ownerPid(),
                Instant.ofEpochMilli(1), record.leaseUntil()).writeTo(idle);

        backend(0);

        assertThat(qemu.onExit().get(30, TimeUnit.SECONDS).isAlive()).isFalse();
        assertThat(Files.exists(idle)).isFalse();
    }

    @Test
    void aWarmPoolWithoutSnapshotsIsRefusedWithTheFix() {
        assertThatThrownBy(() -> MicroVmBackend.builder().guest(TestGuest.image()).stateRoot(STATE_ROOT)
                .snapshots(false).warmPool(1).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("turn snapshots on, or leave warmPool at 0");
        assertThatThrownBy(() -> MicroVmBackend.builder().warmPool(MicroVmBackend.MAX_WARM_POOL + 1))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("0 to 16");
    }
}
