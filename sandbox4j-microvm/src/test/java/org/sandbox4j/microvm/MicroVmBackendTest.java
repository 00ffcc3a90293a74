package org.sandbox4j.microvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.sandbox4j.core.Command;
import org.sandbox4j.core.Egress;
import org.sandbox4j.core.ExecOptions;
import org.sandbox4j.core.ExecResult;
import org.sandbox4j.core.Sandbox;
import org.sandbox4j.core.SandboxEgressNotEnforced;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxKey;
import org.sandbox4j.core.SandboxSpec;
import org.sandbox4j.core.spi.TreeRemoval;

/** What the TCK does not cover: the guest's own kernel, the accelerator, dead and orphaned guests, boot failure. */
class MicroVmBackendTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private final Path stateRoot = TestGuest.stateRoot();
    private final MicroVmBackend backend = MicroVmBackend.builder().guest(TestGuest.image()).stateRoot(stateRoot)
            .build();

    @AfterEach
    void closeBackend() throws IOException {
        backend.close();
        TreeRemoval.remove(stateRoot, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
    }

    private static SandboxKey key(String thread) {
        return new SandboxKey("microvm-test", thread, "agent");
    }

    private static ExecResult run(Sandbox sandbox, String script) {
        return sandbox.exec(Command.shell(script), ExecOptions.in(SandboxSpec.DEFAULT_WORK_DIR, TIMEOUT));
    }

    @Test
    void theGuestRunsItsOwnKernel() throws IOException {
        Sandbox sandbox = backend.acquire(key("kernel"), SandboxSpec.builder("python").build());
        String hostBoot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).strip();

        ExecResult guest = run(sandbox, "cat /proc/sys/kernel/random/boot_id; python3 -c 'print(sum(range(10)))'");

        assertThat(guest.exitCode()).as(guest.stderrText()).isZero();
        List<String> lines = guest.stdoutText().lines().toList();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).matches("[0-9a-f-]{36}").isNotEqualTo(hostBoot);
        assertThat(lines.get(1)).isEqualTo("45");
    }

    @Test
    void theAcceleratorIsNamedWithItsReason() {
        Accelerator.Choice choice = backend.accelerator();
        assertThat(choice.reason()).startsWith(choice.accelerator().name() + ":");
        if (Files.exists(Path.of("/sys/module/kvm_pvm")) || !Files.exists(Path.of("/dev/kvm"))) {
            assertThat(choice.accelerator()).isEqualTo(Accelerator.TCG);
        }
    }

    @Test
    void asRootQemuRunsAsNobody() throws IOException {
        backend.acquire(key("nobody"), SandboxSpec.builder("python").build());
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        int qemuUid = (Integer) Files.getAttribute(Path.of("/proc/" + onlyRecordedQemu().pid()), "unix:uid");

        assertThat(qemuUid).isEqualTo(uid == 0 ? UnprivilegedQemu.NOBODY : uid);
        assertThat(backend.diagnostics()).anySatisfy(line -> assertThat(line).startsWith("QEMU runs as "
                + (uid == 0 ? "nobody" : "this user")));
    }

    @Test
    void onlyClosedEgressIsServed() {
        SandboxSpec allowlist = SandboxSpec.builder("python").egress(Egress.ALLOWLIST).egressAllow("example.org")
                .build();
        assertThatThrownBy(() -> backend.acquire(key("egress"), allowlist))
                .isInstanceOf(SandboxEgressNotEnforced.class).hasMessageContaining("no network device");
        assertThat(guestDirectories()).isEmpty();
    }

    @Test
    void aGuestKilledFromOutsideIsReplacedOnTheNextAcquire() throws Exception {
        SandboxKey key = key("killed");
        Sandbox first = backend.acquire(key, SandboxSpec.builder("python").build());
        run(first, "echo kept > marker");
        ProcessHandle qemu = onlyRecordedQemu();
        qemu.destroyForcibly();
        qemu.onExit().get();

        Sandbox second = backend.acquire(key, SandboxSpec.builder("python").build());

        assertThat(run(second, "cat marker 2>/dev/null || echo fresh").stdoutText().strip()).isEqualTo("fresh");
        assertThat(onlyRecordedQemu().pid()).isNotEqualTo(qemu.pid());
    }

    @Test
    void aGuestWhoseOwnerDiedIsEndedByTheNextBackend() throws Exception {
        backend.acquire(key("orphan"), SandboxSpec.builder("python").build());
        ProcessHandle qemu = onlyRecordedQemu();
        Path directory = guestDirectories().get(0);
        SandboxRecord record = SandboxRecord.readFrom(directory).orElseThrow();
        // As if the JVM that booted it had crashed: a pid that cannot be a live process's start.
        new SandboxRecord(record.conversation(), record.key(), record.kind(), record.ownerPid(), 1L).writeTo(directory);

        MicroVmBackend.builder().guest(TestGuest.image()).stateRoot(stateRoot).build().close();

        assertThat(qemu.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS).isAlive()).isFalse();
        assertThat(guestDirectories()).isEmpty();
    }

    @Test
    void disposeScopeOnAnotherInstanceEndsTheGuest() throws Exception {
        backend.acquire(key("scoped"), SandboxSpec.builder("python").build());
        ProcessHandle qemu = onlyRecordedQemu();
        MicroVmBackend other = MicroVmBackend.builder().guest(TestGuest.image()).stateRoot(stateRoot).build();

        assertThat(other.disposeScope("microvm-test", "scoped")).isEqualTo(1);

        assertThat(qemu.onExit().get(10, java.util.concurrent.TimeUnit.SECONDS).isAlive()).isFalse();
        assertThat(guestDirectories()).isEmpty();
    }

    @Test
    void aGuestThatCannotBootIsRefusedWithItsLastWordsAndLeavesNoQemu() throws IOException {
        // Readable by every user: as root, QEMU runs as nobody.
        Path broken = Files.createTempDirectory("s4jbroken", PosixFilePermissions.asFileAttribute(
                PosixFilePermissions.fromString("rwxr-xr-x")));
        GuestImage real = TestGuest.image();
        Files.writeString(broken.resolve(GuestImage.KERNEL_FILE), "not a kernel", StandardCharsets.UTF_8);
        Files.createSymbolicLink(broken.resolve(GuestImage.INITRD_FILE), real.initrd());
        Files.createSymbolicLink(broken.resolve(GuestImage.ROOT_FILE), real.root());
        MicroVmBackend unbootable = MicroVmBackend.builder().guest(GuestImage.at(broken)).stateRoot(stateRoot)
                .accelerator(Accelerator.TCG).bootDeadline(Duration.ofSeconds(20)).build();

        assertThatThrownBy(() -> unbootable.acquire(key("broken"), SandboxSpec.builder("python").build()))
                .isInstanceOf(SandboxException.class).hasMessageContaining("did not come up")
                .hasMessageContaining("QEMU said");
        assertThat(guestDirectories()).isEmpty();
        unbootable.close();
        TreeRemoval.remove(broken, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
    }

    private List<Path> guestDirectories() {
        try (Stream<Path> entries = Files.list(stateRoot)) {
            return entries.filter(path -> path.getFileName().toString().startsWith("vm-")).toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    private ProcessHandle onlyRecordedQemu() {
        List<Path> directories = guestDirectories();
        assertThat(directories).hasSize(1);
        Optional<ProcessHandle> qemu = MicroVm.recordedProcess(directories.get(0));
        assertThat(qemu).isPresent();
        return qemu.get();
    }
}
