package org.sandbox4j.microvm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
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
import org.sandbox4j.core.SandboxTimeoutException;
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
    void asRootEveryGuestsQemuRunsAsAUidOfItsOwn() throws Exception {
        backend.acquire(key("uid-a"), SandboxSpec.builder("python").build());
        backend.acquire(key("uid-b"), SandboxSpec.builder("python").build());
        List<ProcessHandle> qemus = guestDirectories().stream().map(directory -> MicroVm.recordedProcess(directory)
                .orElseThrow()).toList();
        assertThat(qemus).hasSize(2);
        int uid = uidOf(Path.of("/proc/self"));
        int first = uidOf(Path.of("/proc/" + qemus.get(0).pid()));
        int second = uidOf(Path.of("/proc/" + qemus.get(1).pid()));
        if (uid != 0) {
            assertThat(List.of(first, second)).containsOnly(uid);
            assertThat(backend.diagnostics()).anySatisfy(line -> assertThat(line).startsWith("QEMU runs as this user"));
            return;
        }
        assertThat(List.of(first, second)).allSatisfy(qemuUid -> assertThat(qemuUid)
                .isBetween(UnprivilegedQemu.FIRST_UID, UnprivilegedQemu.FIRST_UID + UnprivilegedQemu.UIDS - 1));
        assertThat(first).isNotEqualTo(second);
        assertThat(backend.diagnostics()).anySatisfy(line -> assertThat(line)
                .startsWith("QEMU runs as a uid of its own per guest"));
        // One guest's QEMU, were it compromised, cannot even signal another's.
        assertThat(runAsUser(first, "kill", "-0", Long.toString(qemus.get(1).pid()))).isNotZero();
        assertThat(runAsUser(first, "kill", "-0", Long.toString(qemus.get(0).pid()))).isZero();
    }

    @Test
    void qemusUserCannotWriteWhatTheHostReadsAboutItsGuest() throws Exception {
        assumeTrue(uidOf(Path.of("/proc/self")) == 0, "QEMU runs as another user only when the host runs as root");
        SandboxKey key = key("forge");
        Sandbox sandbox = backend.acquire(key, SandboxSpec.builder("python").build());
        Path directory = guestDirectories().get(0);
        ProcessHandle qemu = MicroVm.recordedProcess(directory).orElseThrow();
        SandboxRecord record = SandboxRecord.readFrom(directory).orElseThrow();
        int qemuUid = uidOf(Path.of("/proc/" + qemu.pid()));

        // What a compromised QEMU would try: forge the record (to claim another conversation's key),
        // point the pid file at another process, swap its own directory for a link.
        String d = directory.toString();
        assertThat(runAsUser(qemuUid, "sh", "-c", "echo forged > " + d + "/sandbox")).isNotZero();
        assertThat(runAsUser(qemuUid, "sh", "-c", "echo 1 > " + d + "/qemu.pid")).isNotZero();
        assertThat(runAsUser(qemuUid, "sh", "-c", "rm -f " + d + "/sandbox " + d + "/qemu.pid")).isNotZero();
        assertThat(runAsUser(qemuUid, "mv", d + "/q", d + "/q2")).isNotZero();
        assertThat(runAsUser(qemuUid, "ln", "-s", "/", d + "/sandbox2")).isNotZero();
        // Its own directory it may write: the uid is the one QEMU runs as.
        assertThat(runAsUser(qemuUid, "touch", d + "/q/probe")).isZero();

        assertThat(SandboxRecord.readFrom(directory)).contains(record);
        assertThat(MicroVm.recordedProcess(directory).map(ProcessHandle::pid)).contains(qemu.pid());
        assertThat(Files.getOwner(directory.resolve(SandboxRecord.FILE)).getName()).isEqualTo("root");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(directory.resolve(SandboxRecord.FILE))))
                .isEqualTo("rw-------");
        assertThat(run(sandbox, "echo still").stdoutText().strip()).isEqualTo("still");
    }

    @Test
    void aLinkInPlaceOfTheAgentSocketIsRefusedBeforeAByteIsSent() throws Exception {
        assumeTrue(uidOf(Path.of("/proc/self")) == 0, "QEMU runs as another user only when the host runs as root");
        backend.acquire(key("decoy"), SandboxSpec.builder("python").build());
        Path directory = guestDirectories().get(0);
        Path decoySocket = stateRoot.resolve("decoy.sock");
        AtomicLong received = new AtomicLong();
        try (ServerSocketChannel decoy = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            decoy.bind(UnixDomainSocketAddress.of(decoySocket));
            Thread reader = new Thread(() -> {
                try (SocketChannel peer = decoy.accept()) {
                    ByteBuffer buffer = ByteBuffer.allocate(4096);
                    for (int n; (n = peer.read(buffer.clear())) > 0; ) {
                        received.addAndGet(n);
                    }
                } catch (IOException closed) {
                    // the test is over
                }
            });
            reader.setDaemon(true);
            reader.start();
            // As a compromised QEMU could: its agent socket becomes a link to a socket someone else serves.
            Path agentSocket = QemuLaunch.qemuDirectory(directory).resolve(QemuLaunch.AGENT_SOCKET);
            Files.delete(agentSocket);
            Files.createSymbolicLink(agentSocket, decoySocket);

            assertThatThrownBy(() -> MicroVm.attach(directory, Accelerator.TCG, Duration.ofSeconds(10), "microvm"))
                    .isInstanceOf(SandboxException.class).hasMessageContaining("runs as root, not as QEMU's user");
            Thread.sleep(200);
            assertThat(received.get()).isZero();
        }
    }

    private static int uidOf(Path path) throws IOException {
        return (Integer) Files.getAttribute(path, "unix:uid");
    }

    /** Runs a command as {@code uid} the way QEMU runs (setpriv, no groups); its exit code. */
    private static int runAsUser(int uid, String... command) throws Exception {
        List<String> argv = new java.util.ArrayList<>(List.of("setpriv", "--reuid=" + uid, "--regid=" + uid,
                "--clear-groups", "--"));
        argv.addAll(List.of(command));
        Process process = new ProcessBuilder(argv).redirectErrorStream(true).redirectOutput(
                ProcessBuilder.Redirect.DISCARD).start();
        assertThat(process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        return process.exitValue();
    }

    @Test
    void egressBeyondTheAllowlistIsRefusedAtAcquire() {
        SandboxSpec unrestricted = SandboxSpec.builder("python").egress(Egress.UNRESTRICTED).build();
        assertThatThrownBy(() -> backend.acquire(key("egress"), unrestricted))
                .isInstanceOf(SandboxEgressNotEnforced.class).hasMessageContaining("no network device");
        assertThat(guestDirectories()).isEmpty();
    }

    @Test
    void onlyAnAllowlistingGuestHasTheEgressPortAndItsProxyEnvironment() {
        Sandbox closed = backend.acquire(key("closed"), SandboxSpec.builder("python").build());
        Sandbox allowlisting = backend.acquire(key("allowlisting"), SandboxSpec.builder("python")
                .egress(Egress.ALLOWLIST).egressAllow("example.org").build());
        String ports = "cat /sys/class/virtio-ports/*/name | sort | tr '\\n' ' '; echo; echo \"$http_proxy\"";

        assertThat(run(closed, ports).stdoutText().lines().toList()).containsExactly("agent ", "");
        assertThat(run(allowlisting, ports).stdoutText().lines().toList()).containsExactly("agent egress ",
                "http://127.0.0.1:3128");
        // The same key with another egress is another guest: a closed guest never gains a way out.
        assertThat(guestDirectories()).hasSize(2);
        assertThat(backend.egressAuditLog(closed)).isEmpty();
        assertThat(backend.egressAuditLog(allowlisting)).isPresent();
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
        new SandboxRecord(record.scopeHash(), record.threadHash(), record.agentHash(), record.kind(),
                record.fingerprint(), record.createdAt(), record.acquiredAt(), record.ownerPid(),
                java.time.Instant.ofEpochMilli(1), record.leaseUntil()).writeTo(directory);

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

    /*
     * The guest agent keeps empty per-exec cgroups for later execs instead of making and removing one
     * per command: a kept cgroup must never be one another exec's leftovers still live in, so that
     * killing a command's tree kills nothing of any other command, and kept ones must not pile up.
     */
    private static String cgroupOf(Sandbox sandbox) {
        ExecResult result = run(sandbox, "cat /proc/self/cgroup");
        assertThat(result.exitCode()).as(result.stderrText()).isZero();
        return result.stdoutText().strip();
    }

    @Test
    void aCgroupWithALeftoverIsNeverGivenToTheNextCommand() {
        Sandbox sandbox = backend.acquire(key("cgroup-leftover"),
                SandboxSpec.builder("python").build());
        ExecResult leaving = run(sandbox, "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!; cat /proc/self/cgroup");
        assertThat(leaving.exitCode()).as(leaving.stderrText()).isZero();
        String leftoverPid = leaving.stdoutText().lines().findFirst().orElseThrow();
        String leftCgroup = leaving.stdoutText().lines().skip(1).findFirst().orElseThrow();

        // Every later command runs elsewhere, and killing one (its timeout) leaves the leftover alive.
        for (int i = 0; i < 3; i++) {
            assertThat(cgroupOf(sandbox)).isNotEqualTo(leftCgroup);
        }
        assertThatThrownBy(() -> sandbox.exec(Command.shell("sleep 300"),
                ExecOptions.in(SandboxSpec.DEFAULT_WORK_DIR, Duration.ofSeconds(2))))
                .isInstanceOf(SandboxTimeoutException.class);
        ExecResult alive = run(sandbox, "kill -0 " + leftoverPid + " && grep -qx '" + leftCgroup
                + "' /proc/" + leftoverPid + "/cgroup");
        assertThat(alive.exitCode()).as("the leftover still runs in its own cgroup: " + alive.stderrText()).isZero();

        // Once the leftover is gone, its cgroup goes at a later command's end.
        String leftDirectory = "/sys/fs/cgroup" + leftCgroup.substring(leftCgroup.indexOf("::") + 2);
        ExecResult ended = run(sandbox, "kill " + leftoverPid + "; while kill -0 " + leftoverPid
                + " 2>/dev/null; do sleep 0.1; done");
        assertThat(ended.exitCode()).as(ended.stderrText()).isZero();
        cgroupOf(sandbox);
        ExecResult removed = run(sandbox, "test ! -e " + leftDirectory);
        assertThat(removed.exitCode()).as(leftDirectory + " is removed").isZero();
    }

    @Test
    void keptCgroupsDoNotPileUp() {
        Sandbox sandbox = backend.acquire(key("cgroup-many"),
                SandboxSpec.builder("python").build());
        String first = cgroupOf(sandbox);
        for (int i = 0; i < 20; i++) {
            cgroupOf(sandbox);
        }
        // The per-exec cgroups sit side by side under the agent's own: count them after 21 commands.
        String parent = "/sys/fs/cgroup" + first.substring(first.indexOf("::") + 2, first.lastIndexOf('/'));
        ExecResult listed = run(sandbox, "find " + parent + " -mindepth 1 -maxdepth 1 -type d | wc -l");
        assertThat(listed.exitCode()).as(listed.stderrText()).isZero();
        assertThat(Integer.parseInt(listed.stdoutText().strip())).isBetween(1, 5);
    }
}
