package org.sandbox4j.microvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One QEMU command line: a {@code -M microvm} guest with nothing but what a sandbox needs. No
 * default devices and no NIC at all (so {@code CLOSED} egress is the absence of a network device),
 * QEMU's own seccomp sandbox on, the root disk read-only, the guest agent on a virtio-serial port
 * and the console on a second socket, both served by QEMU so that any host process can connect.
 * Every value is an argv word: nothing passes through a shell.
 *
 * @param qemu        the {@code qemu-system-x86_64} binary
 * @param guest       what it boots
 * @param accelerator KVM or TCG
 * @param memoryMib   guest RAM, which also bounds the workspace (an overlay in guest memory)
 * @param cpus        vCPUs
 * @param overlayMib  the most the guest's writable overlay (its whole writable file system) may hold
 * @param processes   the most tasks the guest's commands may run together (the agent's {@code pids.max})
 * @param directory   the sandbox's host directory: its record and QEMU's pid file, which only this host
 *                    user may write, and QEMU's own subdirectory ({@value #QEMU_DIRECTORY}) for its sockets
 * @param runAs       the unprivileged uid and gid QEMU runs as, started by {@code setpriv} with no
 *                    groups, no capabilities and {@code no_new_privs}; empty to run it as this user
 * @param egress      whether the guest gets the egress port ({@value #EGRESS_PORT_NAME}), a second
 *                    virtio-serial port over which the agent tunnels connections to {@code 127.0.0.1:3128}
 *                    to the host's allowlisting proxy; without it the guest has no way out at all
 */
record QemuLaunch(Path qemu, GuestImage guest, Accelerator accelerator, int memoryMib, int cpus, int overlayMib,
        int processes, Path directory, Optional<Unprivileged> runAs, boolean egress) {

    /** Who QEMU runs as when the host user is root: the emulator is the guest's first attack surface. */
    record Unprivileged(Path setpriv, int uid, int gid) {
    }

    /**
     * QEMU's own directory inside the sandbox's: the only place its user may write. Nothing the
     * host reads about a sandbox (its record, the pid file) is in it, so a compromised QEMU can forge
     * none of it; the host only connects to the sockets in it, checking who serves them.
     */
    static final String QEMU_DIRECTORY = "q";
    static final String AGENT_SOCKET = "agent.sock";
    static final String EGRESS_SOCKET = "egress.sock";
    /** The name the agent looks the egress port up by. */
    static final String EGRESS_PORT_NAME = "egress";
    static final String CONSOLE_SOCKET = "console.sock";
    static final String PID_FILE = "qemu.pid";
    /** Where a restored guest's QEMU waits for its snapshot stream ({@code -incoming}). */
    static final String RESTORE_SOCKET = "restore.sock";
    /** A snapshot template's QMP monitor. */
    static final String MONITOR_SOCKET = "qmp.sock";
    /** The guest user every command runs as (the guest's init hands it to the agent): never the guest's root. */
    static final String GUEST_USER = "1000:1000";
    /** The name the agent looks its port up by (under /sys/class/virtio-ports). */
    static final String AGENT_PORT_NAME = "agent";
    /** The guest memory's backend, in a template and a restored guest alike (the migration names RAM by it). */
    private static final String MEMORY_ID = "ram";
    /** sun_path holds 108 bytes with its terminating NUL. */
    static final int MAX_SOCKET_PATH_BYTES = 107;
    private static final Pattern CPU_MHZ = Pattern.compile("(?m)^cpu MHz\\s*:\\s*([0-9]+(?:\\.[0-9]+)?)");

    QemuLaunch {
        Objects.requireNonNull(qemu, "qemu");
        Objects.requireNonNull(guest, "guest");
        Objects.requireNonNull(accelerator, "accelerator");
        Objects.requireNonNull(directory, "directory");
        Objects.requireNonNull(runAs, "runAs");
    }

    QemuLaunch with(Accelerator other) {
        return new QemuLaunch(qemu, guest, other, memoryMib, cpus, overlayMib, processes, directory, runAs, egress);
    }

    /** Where QEMU makes its sockets: {@value #QEMU_DIRECTORY} in the sandbox's directory. */
    static Path qemuDirectory(Path directory) {
        return directory.resolve(QEMU_DIRECTORY);
    }

    Path qemuDirectory() {
        return qemuDirectory(directory);
    }

    Path agentSocket() {
        return qemuDirectory().resolve(AGENT_SOCKET);
    }

    Path egressSocket() {
        return qemuDirectory().resolve(EGRESS_SOCKET);
    }

    Path consoleSocket() {
        return qemuDirectory().resolve(CONSOLE_SOCKET);
    }

    /** Written by the host, not by QEMU ({@code -pidfile}): QEMU cannot write the sandbox's directory. */
    Path pidFile() {
        return directory.resolve(PID_FILE);
    }

    Path restoreSocket() {
        return qemuDirectory().resolve(RESTORE_SOCKET);
    }

    Path monitorSocket() {
        return qemuDirectory().resolve(MONITOR_SOCKET);
    }

    /**
     * What a snapshot template adds to {@link #argv()}: a QMP monitor to migrate it with, and its
     * memory in {@code memoryFile} (shared: what the guest writes lands in the file), which becomes
     * the snapshot's memory.
     */
    List<String> templateArguments(Path memoryFile) {
        List<String> arguments = new ArrayList<>(monitorArguments());
        arguments.addAll(memoryArguments(memoryFile, "share=on"));
        return List.copyOf(arguments);
    }

    /**
     * What a restored guest adds to {@link #argv()}: a monitor, through which it is told to wait for
     * the snapshot's device state ({@code -incoming defer}), and the snapshot's memory mapped
     * privately from a file it opens read-only ({@code readonly=on,rom=off}, QEMU 8.2 and later): a
     * guest's writes stay its own, pages it does not write are shared with every other guest restored
     * from the snapshot, and nothing a guest or its QEMU does can change the file.
     */
    List<String> restoreArguments(Path memoryFile) {
        List<String> arguments = new ArrayList<>(List.of("-incoming", "defer"));
        arguments.addAll(monitorArguments());
        arguments.addAll(memoryArguments(memoryFile, "share=off,readonly=on,rom=off"));
        return List.copyOf(arguments);
    }

    private List<String> monitorArguments() {
        return List.of("-qmp", "unix:" + option(monitorSocket()) + ",server=on,wait=off");
    }

    private List<String> memoryArguments(Path memoryFile, String mapping) {
        return List.of("-object", "memory-backend-file,id=" + MEMORY_ID + ",size=" + memoryMib + "M,mem-path="
                + option(memoryFile) + "," + mapping, "-machine", "memory-backend=" + MEMORY_ID);
    }

    /**
     * The same launch in another directory, run as another user: two launches that differ only in
     * those differ only in socket paths and who QEMU runs as, neither of which a snapshot holds.
     */
    QemuLaunch in(Path other, Optional<Unprivileged> user) {
        return new QemuLaunch(qemu, guest, accelerator, memoryMib, cpus, overlayMib, processes, other, user, egress);
    }

    /** The whole command line: {@code setpriv} (when QEMU runs as another user), then {@link #qemuArgv()}. */
    List<String> argv() {
        List<String> argv = new ArrayList<>();
        runAs.ifPresent(user -> argv.addAll(List.of(user.setpriv().toString(), "--reuid=" + user.uid(),
                "--regid=" + user.gid(), "--clear-groups", "--inh-caps=-all", "--no-new-privs", "--")));
        argv.addAll(qemuArgv());
        return List.copyOf(argv);
    }

    /** QEMU's own command line. */
    List<String> qemuArgv() {
        List<String> argv = new ArrayList<>();
        // No legacy PIT and no 8259 PIC (as Firecracker): with both, the PIT's first tick reaches the
        // PIC before the kernel programs it, and arrives as vector 0 right after the kernel first
        // enables interrupts; the kernel reads it as a divide error and panics, so QEMU exits 0.
        // Measured here under TCG: with them 0 boots in 5 at times, without them 5 in 5.
        argv.addAll(List.of(qemu.toString(),
                "-M", "microvm,isa-serial=on,rtc=on,pit=off,pic=off",
                "-accel", accelerator.qemuOption(),
                "-m", memoryMib + "M",
                "-smp", Integer.toString(cpus),
                "-nodefaults", "-no-user-config", "-nic", "none", "-display", "none", "-no-reboot",
                "-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
                "-kernel", guest.kernel().toString(),
                "-initrd", guest.initrd().toString(),
                "-append", kernelCommandLine(),
                "-chardev", "socket,id=console,path=" + option(consoleSocket()) + ",server=on,wait=off",
                "-serial", "chardev:console",
                "-chardev", "socket,id=agent,path=" + option(agentSocket()) + ",server=on,wait=off",
                "-device", "virtio-serial-device",
                "-device", "virtserialport,chardev=agent,name=" + AGENT_PORT_NAME));
        if (egress) {
            argv.addAll(List.of("-chardev", "socket,id=egress,path=" + option(egressSocket()) + ",server=on,wait=off",
                    "-device", "virtserialport,chardev=egress,name=" + EGRESS_PORT_NAME));
        }
        argv.addAll(List.of(
                "-object", "rng-random,id=rng0,filename=/dev/urandom",
                "-device", "virtio-rng-device,rng=rng0",
                "-drive", "file=" + option(guest.root()) + ",format=raw,if=none,id=root,readonly=on",
                "-device", "virtio-blk-device,drive=root"));
        if (accelerator == Accelerator.KVM) {
            argv.addAll(List.of("-cpu", "host"));
        }
        return List.copyOf(argv);
    }

    /**
     * {@code tsc_early_khz}: microvm has no HPET or PM timer to calibrate the TSC against, and a
     * calibration that fails on a busy host stalls the boot for good; the host's own rate avoids it.
     */
    private String kernelCommandLine() {
        StringBuilder line = new StringBuilder("console=ttyS0 panic=-1 quiet s4j.root=/dev/vda s4j.overlay_size=")
                .append(overlayMib).append("m s4j.pids_max=").append(processes).append(" s4j.user=").append(GUEST_USER);
        hostTscKhz().ifPresent(khz -> line.append(" tsc_early_khz=").append(khz));
        return line.toString();
    }

    static Optional<Long> hostTscKhz() {
        try {
            Matcher matcher = CPU_MHZ.matcher(Files.readString(Path.of("/proc/cpuinfo")));
            return matcher.find() ? Optional.of(Math.round(Double.parseDouble(matcher.group(1)) * 1000))
                    : Optional.empty();
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** A path as the value of a QEMU option: a comma would end the value, so it is doubled (QEMU's escape). */
    static String option(Path path) {
        return path.toString().replace(",", ",,");
    }

    /** Refuses a directory whose socket paths would not fit a unix socket address. */
    static void requireSocketRoom(Path directory, String backendName) {
        // No socket name is longer than the console's (the restore and migration sockets' are as long).
        int longest = qemuDirectory(directory).resolve(CONSOLE_SOCKET).toString().getBytes(java.nio.charset.StandardCharsets.UTF_8)
                .length;
        if (longest > MAX_SOCKET_PATH_BYTES) {
            throw new IllegalArgumentException("backend '" + backendName + "': the state root " + directory.getParent()
                    + " is too long for unix socket paths (" + longest + " bytes, at most " + MAX_SOCKET_PATH_BYTES
                    + "); choose a shorter one with MicroVmBackend.builder().stateRoot(path)");
        }
    }
}
