package org.sandbox4j.microvm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.sandbox4j.agent.AgentConnection;
import org.sandbox4j.core.spi.TreeRemoval;

/**
 * The microVM mechanism with none of {@link MicroVmBackend} around it, for the benchmarks to compare
 * with: the very QEMU command line the backend boots ({@link QemuLaunch#argv()} with the builder's
 * defaults) started with a {@link ProcessBuilder}, and a bare {@link AgentConnection} on its agent
 * socket; no record, no console reader, no work dir. It lives in this package, in the bench's jar,
 * only to reach the package-private {@link QemuLaunch}; {@link #restore} does the same for a
 * snapshot restore. The QEMU process is killed by pid on close,
 * on a failed boot and at JVM exit.
 */
public final class HandBootedGuest implements AutoCloseable {

    // MicroVmBackend.Builder's defaults, so this guest and the backend's are the same machine.
    private static final Path QEMU = Path.of("/usr/bin/qemu-system-x86_64");
    private static final int MEMORY_MIB = 256;
    private static final int CPUS = 1;
    private static final int OVERLAY_MIB = 128;
    private static final int PROCESSES = 256;
    private static final Duration EXIT_WAIT = Duration.ofSeconds(5);
    private static final String NAME = "hand-booted";

    private final Path directory;
    private final Process qemu;
    private final Thread killAtExit;
    private final AgentConnection agent;

    private HandBootedGuest(Path directory, Process qemu, Thread killAtExit, AgentConnection agent) {
        this.directory = directory;
        this.qemu = qemu;
        this.killAtExit = killAtExit;
        this.agent = agent;
    }

    /**
     * Boots {@code guest} under the accelerator the backend would pick first on this host, in a
     * fresh temporary directory, and opens a bare agent connection before {@code deadline} passes.
     */
    public static HandBootedGuest boot(GuestImage guest, Duration deadline) throws IOException {
        long until = System.nanoTime() + deadline.toNanos();
        // What the backend also does, and no more: a boot that resets before its agent answers (QEMU exits 0) is
        // made again, and the agent's first connection may be dropped (MicroVm#openAgent).
        for (int attempt = 1; ; attempt++) {
            try {
                return start(guest, until, Optional.empty());
            } catch (GuestReset reset) {
                if (attempt >= MicroVm.BOOT_ATTEMPTS) {
                    throw new IOException("the guest reset on each of " + attempt + " boots", reset.getCause());
                }
            }
        }
    }

    /**
     * Restores {@code guest} from the snapshot a {@link MicroVmBackend} on {@code stateRoot} made of
     * the same launch: QEMU started with the backend's restore arguments ({@code -incoming defer},
     * the snapshot's memory mapped privately), the device state streamed in as the backend does
     * ({@link MicroVm#receiveSnapshot}), and a bare agent connection; no reseed, no clock, no lease,
     * no record.
     *
     * @throws IllegalStateException there is no such snapshot on {@code stateRoot}
     */
    public static HandBootedGuest restore(GuestImage guest, Path stateRoot, Duration deadline) throws IOException {
        return start(guest, System.nanoTime() + deadline.toNanos(), Optional.of(stateRoot));
    }

    private static HandBootedGuest start(GuestImage guest, long until, Optional<Path> snapshotsOf)
            throws IOException {
        Path directory = Files.createTempDirectory("s4jq");
        // The bare mechanism runs QEMU as this user: no setpriv in front of the same command line.
        QemuLaunch launch = new QemuLaunch(QEMU, guest, Accelerator.probeHost().accelerator(), MEMORY_MIB, CPUS,
                OVERLAY_MIB, PROCESSES, directory, Optional.empty(), false);
        Optional<GuestSnapshots.Snapshot> snapshot = snapshotsOf.map(root -> new GuestSnapshots(root,
                Optional.empty()).existing(launch).orElseThrow(() -> new IllegalStateException(
                "no snapshot of this launch under " + root + ": acquire a sandbox on a MicroVmBackend there first")));
        Files.createDirectory(launch.qemuDirectory());
        List<String> argv = new ArrayList<>(launch.argv());
        snapshot.ifPresent(made -> argv.addAll(launch.restoreArguments(made.memory())));
        Process qemu = new ProcessBuilder(argv).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        Thread killAtExit = new Thread(qemu::destroyForcibly, NAME + " qemu killer");
        Runtime.getRuntime().addShutdownHook(killAtExit);
        try {
            qemu.getOutputStream().close();
            if (snapshot.isPresent()) {
                MicroVm.receiveSnapshot(launch, snapshot.get().state(), qemu.toHandle(), until);
            }
            AgentConnection agent = MicroVm.openAgent(launch.agentSocket(), qemu.toHandle(), until, NAME);
            return new HandBootedGuest(directory, qemu, killAtExit, agent);
        } catch (IOException | RuntimeException e) {
            boolean reset = snapshot.isEmpty() && !qemu.isAlive() && qemu.exitValue() == 0;
            kill(qemu, killAtExit, directory);
            if (reset) {
                throw new GuestReset(e);
            }
            throw e;
        }
    }

    /** A boot that ended with QEMU exiting 0 before the agent answered; its cause is what the boot threw. */
    private static final class GuestReset extends RuntimeException {
        private static final long serialVersionUID = 1L;

        GuestReset(Exception boot) {
            super(boot);
        }
    }

    /** The bare connection to the guest's agent. */
    public AgentConnection agent() {
        return agent;
    }

    /** Kills QEMU by its pid and removes the directory. */
    @Override
    public void close() {
        try {
            agent.close();
        } finally {
            kill(qemu, killAtExit, directory);
        }
    }

    private static void kill(Process qemu, Thread killAtExit, Path directory) {
        qemu.destroyForcibly();
        try {
            qemu.waitFor(EXIT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            Runtime.getRuntime().removeShutdownHook(killAtExit);
            TreeRemoval.remove(directory, TreeRemoval.Mode.PROCESSES_STOPPED, TreeRemoval.DEFAULT_DEADLINE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException | IllegalStateException leftForTheOs) {
            // A temporary directory left behind, or the JVM already exiting (its hook kills QEMU).
        }
    }
}
