package org.sandbox4j.microvm;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.sandbox4j.agent.AgentConnection;
import org.sandbox4j.agent.AgentConnectionFailed;
import org.sandbox4j.agent.EgressConnector;
import org.sandbox4j.agent.EgressTunnel;
import org.sandbox4j.core.SandboxException;
import org.sandbox4j.core.SandboxInterrupted;
import org.sandbox4j.core.spi.ExecRefusals;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.spi.GuestText;
import org.sandbox4j.core.spi.Json;
import org.sandbox4j.core.spi.ProcessPump;

/**
 * One running guest: its QEMU process, the agent connection on its virtio-serial port and the tail
 * of its console. Booting waits for the agent's answer under a deadline; whatever fails on the way,
 * the QEMU process is killed before the error leaves, so no guest outlives a failed boot.
 */
final class MicroVm implements AutoCloseable {

    private static final int DIAGNOSTIC_BYTES = 16 * 1024;
    private static final int DIAGNOSTIC_LINES = 12;
    private static final Duration EXIT_WAIT = Duration.ofSeconds(5);
    private static final int RESEED_BYTES = 64;
    private static final int PID_FILE_BYTES = 32;
    /**
     * How many boots a guest that resets while booting gets. The resets once seen here (from one
     * boot in ten to nine in ten, varying by the hour) were the legacy PIT's tick arriving as vector 0,
     * which {@link QemuLaunch} now leaves out; the retry stays for a reset of any other cause.
     */
    static final int BOOT_ATTEMPTS = 5;
    private static final System.Logger LOG = System.getLogger(MicroVm.class.getName());
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path directory;
    private final Accelerator accelerator;
    private final ProcessHandle qemu;
    private final ByteRing console;
    private final AgentConnection agent;
    /** Restored from a snapshot by this host (not booted, not attached). */
    private final boolean restored;
    private volatile boolean closed;
    /** The lease armed in the guest, renewed with the same length; empty while none is. */
    private volatile Optional<Duration> lease = Optional.empty();
    /** The egress tunnel this host serves the guest, once {@link #openEgress} opened it. */
    private EgressTunnel egress;

    private MicroVm(Path directory, Accelerator accelerator, ProcessHandle qemu, ByteRing console,
            AgentConnection agent, boolean restored) {
        this.restored = restored;
        this.directory = directory;
        this.accelerator = accelerator;
        this.qemu = qemu;
        this.console = console;
        this.agent = agent;
    }

    /**
     * Starts QEMU and waits, until {@code deadline} has passed, for the guest agent's handshake.
     *
     * @throws SandboxException naming QEMU's last words and the console's when the guest does not
     *                          come up; the process is gone by then
     */
    static MicroVm boot(QemuLaunch launch, Duration deadline, String backendName) {
        return bootRetryingResets(launch, List.of(), deadline, backendName);
    }

    /**
     * A boot, made again when the guest reset before its agent answered (QEMU, run with
     * {@code -no-reboot}, then exits with 0 at once), as it did before the kernel printed a line
     * while the machine had a PIT ({@link #BOOT_ATTEMPTS}). A boot that fails any other way is not
     * retried.
     */
    private static MicroVm bootRetryingResets(QemuLaunch launch, List<String> extraArguments, Duration deadline,
            String backendName) {
        long until = System.nanoTime() + deadline.toNanos();
        for (int attempt = 1; ; attempt++) {
            Duration left = Duration.ofNanos(Math.max(until - System.nanoTime(), 1));
            try {
                return start(launch, extraArguments, Optional.empty(), left, backendName);
            } catch (GuestReset reset) {
                if (attempt >= BOOT_ATTEMPTS) {
                    throw reset;
                }
                LOG.log(System.Logger.Level.INFO, () -> "backend '" + backendName + "': the guest reset while it "
                        + "booted; booting it again");
            }
        }
    }

    /** The guest reset during its boot, before its agent answered: QEMU exited with 0. */
    private static final class GuestReset extends SandboxException {
        private static final long serialVersionUID = 1L;

        GuestReset(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Boots a guest to snapshot: the same as {@link #boot}, with a QMP monitor to migrate it through
     * and its memory in {@code memoryFile}.
     */
    static MicroVm bootTemplate(QemuLaunch launch, Path memoryFile, Duration deadline, String backendName) {
        return bootRetryingResets(launch, launch.templateArguments(memoryFile), deadline, backendName);
    }

    /**
     * Starts QEMU on the snapshot's memory, waiting for an incoming migration; streams the
     * snapshot's device state into it, connects to the agent (which answers a new handshake) and
     * renews the guest before anything else runs: every guest restored from one snapshot starts with
     * the same random pool and clock.
     *
     * @throws SandboxException the snapshot was refused or the guest did not answer; QEMU is gone by then
     */
    static MicroVm restore(QemuLaunch launch, GuestSnapshots.Snapshot snapshot, Duration deadline,
            String backendName) {
        return start(launch, launch.restoreArguments(snapshot.memory()), Optional.of(snapshot.state()), deadline,
                backendName);
    }

    private static MicroVm start(QemuLaunch launch, List<String> extraArguments, Optional<Path> snapshot,
            Duration deadline, String backendName) {
        long until = System.nanoTime() + deadline.toNanos();
        ByteRing qemuOutput = new ByteRing(DIAGNOSTIC_BYTES);
        ByteRing console = new ByteRing(DIAGNOSTIC_BYTES);
        Process qemu;
        try {
            for (Path socket : List.of(launch.agentSocket(), launch.consoleSocket(), launch.restoreSocket(),
                    launch.monitorSocket(), launch.egressSocket())) {
                Files.deleteIfExists(socket);
            }
            List<String> argv = new ArrayList<>(launch.argv());
            argv.addAll(extraArguments);
            qemu = new ProcessBuilder(argv).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw ExecRefusals.couldNotStart(backendName, launch.qemu().toString(),
                    "install QEMU (apt-get install --no-install-recommends qemu-system-x86), or name it with "
                            + "MicroVmBackend.builder().qemu(path)", e);
        }
        ProcessPump.daemon(backendName + " qemu output", () -> qemuOutput.drain(qemu.getInputStream())).start();
        try {
            // setpriv execs QEMU: the pid started is QEMU's.
            SandboxRecord.writeHostFile(launch.pidFile(), Long.toString(qemu.pid()) + "\n");
            qemu.getOutputStream().close();
            if (snapshot.isPresent()) {
                receiveSnapshot(launch, snapshot.get(), qemu.toHandle(), until);
            }
            MicroVm vm = connectTo(launch.directory(), launch.accelerator(), qemu.toHandle(), console, until,
                    backendName, snapshot.isPresent());
            if (snapshot.isPresent()) {
                renew(vm.agent(), backendName);
            }
            return vm;
        } catch (RuntimeException | IOException e) {
            kill(qemu.toHandle());
            if (snapshot.isEmpty() && !qemu.isAlive() && qemu.exitValue() == 0) {
                throw new GuestReset("backend '" + backendName + "': the guest reset while it booted (QEMU exited "
                        + "with 0 before its agent answered; the console ended with: "
                        + GuestText.quote(console.tail(DIAGNOSTIC_LINES)) + ")", e);
            }
            throw new SandboxException("backend '" + backendName + "': the guest did not come up"
                    + (snapshot.isPresent() ? " from the snapshot " + snapshot.get() : "") + " within "
                    + deadline.toSeconds() + " s under " + launch.accelerator() + " (" + ErrorDetail.of(e)
                    + "); QEMU said: " + GuestText.quote(qemuOutput.tail(DIAGNOSTIC_LINES))
                    + "; the console ended with: "
                    + GuestText.quote(console.tail(DIAGNOSTIC_LINES)), e);
        }
    }

    /**
     * What a restored guest needs before anything runs in it: every guest restored from one snapshot
     * starts with the same random state and a clock stopped at the instant the snapshot was taken.
     * The agent mixes 64 fresh bytes into the guest's pool and rekeys its generator at once
     * ({@code RESEED}), then sets the clock to the host's ({@code SET_CLOCK}).
     */
    static void renew(AgentConnection agent, String backendName) {
        byte[] seed = new byte[RESEED_BYTES];
        RANDOM.nextBytes(seed);
        if (agent.reseed(seed) == 0) {
            throw new SandboxException("backend '" + backendName + "': the restored guest's agent could not credit "
                    + "fresh randomness (its RESEED credited nothing), so it would share its random state with every "
                    + "guest restored from the same snapshot");
        }
        agent.setClock(Instant.now());
    }

    /**
     * Tells QEMU (waiting with {@code -incoming defer}) to take a migration that leaves out the
     * memory it already maps ({@code x-ignore-shared}, as the template's was made), and copies the
     * snapshot's device state into the socket it then serves, under the deadline.
     */
    static void receiveSnapshot(QemuLaunch launch, Path state, ProcessHandle qemu, long until)
            throws IOException {
        try (QemuMonitor monitor = QemuMonitor.connect(launch.monitorSocket(), qemu, until);
                QemuSockets.Guard monitorDeadline = QemuSockets.closeAt(until, monitor)) {
            monitor.execute("migrate-set-capabilities", GuestSnapshots.IGNORE_SHARED);
            monitor.execute("migrate-incoming", "{\"uri\":" + Json.quote("unix:" + launch.restoreSocket()) + "}");
        }
        try (SocketChannel channel = QemuSockets.connect(launch.restoreSocket(), qemu, until);
                QemuSockets.Guard deadline = QemuSockets.closeAt(until, channel);
                FileChannel in = FileChannel.open(state, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            long size = in.size();
            for (long sent = 0; sent < size; ) {
                sent += in.transferTo(sent, size - sent, channel);
            }
        }
    }

    /**
     * Connects to a guest another instance (or another process) booted, as its pid file names it;
     * empty when that QEMU is gone. QEMU serves one connection at a time: while another process
     * holds the agent's, this fails.
     */
    static Optional<MicroVm> attach(Path directory, Accelerator accelerator, Duration deadline, String backendName) {
        Optional<ProcessHandle> qemu = recordedProcess(directory);
        if (qemu.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(connectTo(directory, accelerator, qemu.get(), new ByteRing(DIAGNOSTIC_BYTES),
                    System.nanoTime() + deadline.toNanos(), backendName, false));
        } catch (IOException | RuntimeException e) {
            throw new SandboxException("backend '" + backendName + "': the guest in " + directory + " (QEMU pid "
                    + qemu.get().pid() + ") is running but its agent does not answer here (" + ErrorDetail.of(e)
                    + "); another process may hold its connection: dispose of the sandbox to replace it", e);
        }
    }

    private static MicroVm connectTo(Path directory, Accelerator accelerator, ProcessHandle qemu, ByteRing console,
            long until, String backendName, boolean restored) throws IOException {
        Path sockets = QemuLaunch.qemuDirectory(directory);
        SocketChannel consoleChannel = QemuSockets.connect(sockets.resolve(QemuLaunch.CONSOLE_SOCKET), qemu, until);
        ProcessPump.daemon(backendName + " console", () -> console.drain(QemuSockets.input(consoleChannel))).start();
        try {
            AgentConnection agent = openAgent(sockets.resolve(QemuLaunch.AGENT_SOCKET), qemu, until, backendName);
            return new MicroVm(directory, accelerator, qemu, console, agent, restored);
        } catch (IOException | RuntimeException e) {
            consoleChannel.close();
            throw e;
        }
    }

    /**
     * The agent's handshake on its port. QEMU 10 may drop a connection made while the guest's kernel
     * is still bringing its virtio-serial device up (a reset, before the agent has read a byte): the
     * handshake is then made again on a new connection, until the deadline or QEMU's exit.
     */
    static AgentConnection openAgent(Path socket, ProcessHandle qemu, long until, String backendName)
            throws IOException {
        while (true) {
            SocketChannel channel = QemuSockets.connect(socket, qemu, until);
            try {
                Duration left = Duration.ofNanos(Math.max(until - System.nanoTime(), 0));
                return AgentConnection.open(QemuSockets.input(channel), QemuSockets.output(channel), backendName,
                        left);
            } catch (AgentConnectionFailed dropped) {
                channel.close();
                if (!qemu.isAlive() || System.nanoTime() - until > 0) {
                    throw dropped;
                }
                QemuSockets.pause();
            } catch (RuntimeException e) {
                channel.close();
                throw e;
            }
        }
    }

    AgentConnection agent() {
        return agent;
    }

    /**
     * Arms the guest's lease (or renews it with a new length): unless {@link #renewLease()} follows
     * within {@code length}, the guest powers itself off, so it cannot outlive a host that vanished.
     * Only a sandbox's guest, after its clock is set: never a snapshot template, whose lease every
     * guest restored from it would inherit.
     *
     * @return what was left of a lease the guest already had; zero for a guest just booted or restored
     * @throws SandboxException the guest's agent predates leases (see {@link #leaseUnsupported()})
     */
    Duration armLease(Duration length) {
        Duration left = agent.setLease(length);
        lease = Optional.of(length);
        return left;
    }

    /** Renews the lease {@link #armLease} armed; nothing when none is. */
    void renewLease() {
        Optional<Duration> armed = lease;
        if (armed.isPresent() && !closed) {
            agent.setLease(armed.get());
        }
    }

    /** Why the guest cannot be given a lease, or empty when it can. */
    Optional<String> leaseUnsupported() {
        return agent.hello().lease() ? Optional.empty() : Optional.of("its agent (" + GuestText.quote(
                agent.hello().agent()) + ") predates leases: rebuild the guest with "
                + "sandbox4j-microvm/src/main/guest/build-guest.sh");
    }

    /** Whether this host restored the guest from a snapshot: it then holds what the snapshot's template made. */
    boolean restored() {
        return restored;
    }

    ProcessHandle process() {
        return qemu;
    }

    Accelerator accelerator() {
        return accelerator;
    }

    Path directory() {
        return directory;
    }

    /** The console's last lines, escaped, for a message. */
    String consoleTail() {
        return GuestText.quote(console.tail(DIAGNOSTIC_LINES));
    }

    /** Whether this host closed the guest (disposed of it). */
    boolean closed() {
        return closed;
    }

    /**
     * Serves the guest's egress port, unless this host already does: every connection a guest program
     * makes to {@code 127.0.0.1:3128} becomes one {@code connector} opens (to the sandbox's
     * allowlisting proxy). Waits, until {@code deadline}, for the guest's end of the tunnel to answer,
     * so the first command's first request finds it up.
     *
     * @throws SandboxException the port could not be reached, or the guest's end did not answer
     */
    synchronized void openEgress(Path egressSocket, EgressConnector connector, Duration deadline,
            String backendName) {
        if (egress != null && egress.isOpen()) {
            return;
        }
        if (egress != null) {
            egress.close();
        }
        long until = System.nanoTime() + deadline.toNanos();
        try {
            SocketChannel channel = QemuSockets.connect(egressSocket, qemu, until);
            EgressTunnel tunnel = EgressTunnel.start(QemuSockets.input(channel), QemuSockets.output(channel), connector,
                    backendName + " egress");
            egress = tunnel;
            if (!tunnel.awaitEstablished(deadline)) {
                tunnel.close();
                throw new IOException("the guest's end of the tunnel did not answer within " + deadline.toMillis()
                        + " ms" + tunnel.failure().map(why -> " (" + why + ")").orElse(""));
            }
        } catch (IOException e) {
            throw new SandboxException("backend '" + backendName + "': the guest's egress port " + egressSocket
                    + " could not be served (" + ErrorDetail.of(e) + "); the console ended with: " + consoleTail(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SandboxInterrupted("interrupted while opening the guest's egress tunnel", e);
        }
    }

    /** Kills QEMU (the guest and every process in it end with it) and closes the connections. */
    @Override
    public void close() {
        closed = true;
        try {
            synchronized (this) {
                if (egress != null) {
                    egress.close();
                }
            }
            agent.close();
        } finally {
            kill(qemu);
        }
    }

    private static void kill(ProcessHandle qemu) {
        qemu.destroyForcibly();
        try {
            qemu.onExit().get(EXIT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // Still exiting: SIGKILL was sent, and nothing in the guest can delay it.
        }
    }

    /** Kills the QEMU a pid file names, when that process is still a QEMU of this directory. */
    static boolean killRecorded(Path directory) {
        Optional<ProcessHandle> recorded = recordedProcess(directory);
        recorded.ifPresent(MicroVm::kill);
        return recorded.isPresent();
    }

    /**
     * The live QEMU process a sandbox directory's pid file names (the host wrote it; QEMU cannot
     * write there), checked by its command line and its user: a recycled pid must not be killed.
     */
    static Optional<ProcessHandle> recordedProcess(Path directory) {
        Optional<Long> pid = SandboxRecord.readHostFile(directory.resolve(QemuLaunch.PID_FILE), PID_FILE_BYTES)
                .flatMap(MicroVm::parsePid);
        if (pid.isEmpty()) {
            return Optional.empty();
        }
        Path sockets = QemuLaunch.qemuDirectory(directory);
        String agentSocket = QemuLaunch.option(sockets.resolve(QemuLaunch.AGENT_SOCKET));
        return ProcessHandle.of(pid.get()).filter(ProcessHandle::isAlive)
                .filter(process -> process.info().arguments().map(words -> String.join(" ", words))
                        .filter(line -> line.contains("path=" + agentSocket + ",")).isPresent())
                .filter(process -> sameOwner(Path.of("/proc", Long.toString(process.pid())), sockets));
    }

    private static Optional<Long> parsePid(String text) {
        try {
            return Optional.of(Long.parseLong(text.strip()));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static boolean sameOwner(Path one, Path other) {
        try {
            return Files.getAttribute(one, "unix:uid", LinkOption.NOFOLLOW_LINKS)
                    .equals(Files.getAttribute(other, "unix:uid", LinkOption.NOFOLLOW_LINKS));
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }


}
