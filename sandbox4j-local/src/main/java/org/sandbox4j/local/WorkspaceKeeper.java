package org.sandbox4j.local;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.sandbox4j.core.spi.ErrorDetail;
import org.sandbox4j.core.SandboxException;

/**
 * The process that holds one bubblewrap sandbox's workspace: a size-limited tmpfs mounted in a
 * mount namespace of its own (and, for a user who is not root, a user namespace of its own), kept
 * for as long as the sandbox lives. Every exec enters its namespaces ({@code nsenter}) before it
 * starts {@code bwrap}, which binds the tmpfs into the guest; the host reaches the same files
 * through the keeper's root ({@code /proc/<pid>/root}). So a guest cannot store more than the
 * workspace bound on the host — in memory, never on the host's disk — and the user namespace,
 * shared by every exec of the sandbox and by nothing else, is where RLIMIT_NPROC counts the whole
 * sandbox.
 *
 * <p>Recorded in the sandbox's directory ({@value #FILE}: pid and start time), so another
 * process sharing the state root enters the same keeper, and disposal or a reaper ends it. A
 * keeper that is gone (the host rebooted, or it was killed) took the workspace's files with it:
 * the next acquire starts a new one, empty.
 */
final class WorkspaceKeeper {

    static final String FILE = "keeper";
    /** The variable every keeper carries: the sandbox directory it keeps the workspace of. */
    static final String MARKER = "SANDBOX4J_KEEPER";
    private static final String READY = "keeper-ready";
    /** Mounts the tmpfs ($1 options) on $2, says so ($3), then holds the namespaces. Fixed text. */
    private static final String KEEP = "mount -t tmpfs -o \"$1\" sandbox4j-workspace \"$2\" || exit 125\n"
            + ": > \"$3\" || exit 125\n"
            + "exec sleep infinity";
    private static final String KEEP_NAME = "sandbox4j-keeper";
    private static final Duration START_BOUND = Duration.ofSeconds(20);
    private static final Duration POLL = Duration.ofMillis(5);
    /** tmpfs inodes are memory too: one per 8 KiB of the bound, so a workspace of empty files is bounded as well. */
    private static final long BYTES_PER_INODE = 8192;
    private static final long MIN_INODES = 65_536 * 2;

    private final long pid;
    private final Instant started;
    private final boolean ownUserNamespace;
    /** The keeper's own process, when this JVM started it (so this JVM reaps it). */
    private final Optional<Process> process;

    private WorkspaceKeeper(long pid, Instant started, boolean ownUserNamespace, Optional<Process> process) {
        this.pid = pid;
        this.started = started;
        this.ownUserNamespace = ownUserNamespace;
        this.process = process;
    }

    /**
     * Starts the keeper of the sandbox in {@code sandboxDirectory} (its workspace directory must
     * exist and be empty) and records it there; returns once the tmpfs is mounted.
     */
    static WorkspaceKeeper start(Path sandboxDirectory, LocalLimits limits, ResourceLimiter.Programs programs,
            HostUser user, String backendName) {
        boolean ownUserNamespace = !user.isRoot();
        Path workspace = sandboxDirectory.resolve(LocalStore.WORKSPACE);
        Path ready = sandboxDirectory.resolve(READY + "-" + UUID.randomUUID());
        List<String> argv = new ArrayList<>(List.of(programs.unshare()));
        if (ownUserNamespace) {
            // Root of its own user namespace, so the keeper may mount, and so may every exec that enters it.
            argv.addAll(List.of("--user", "--map-root-user"));
        }
        argv.addAll(List.of("--mount", "--propagation", "private", "--", "/bin/sh", "-c", KEEP, KEEP_NAME,
                tmpfsOptions(limits, user), workspace.toString(), ready.toString()));
        Path log = sandboxDirectory.resolve(FILE + ".log");
        Process keeper;
        try {
            ProcessBuilder builder = new ProcessBuilder(argv).redirectInput(ProcessBuilder.Redirect.from(
                    new java.io.File("/dev/null"))).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(log.toFile());
            builder.environment().clear();
            builder.environment().put("PATH", "/usr/bin:/bin:/usr/sbin:/sbin");
            // Found again by it should its sandbox's directory vanish without a disposal (endOrphans).
            builder.environment().put(MARKER, sandboxDirectory.toAbsolutePath().toString());
            keeper = builder.start();
        } catch (IOException e) {
            throw new SandboxException("backend '" + backendName + "' could not start the keeper of a sandbox's "
                    + "workspace (" + programs.unshare() + "): " + ErrorDetail.of(e) + "; install util-linux", e);
        }
        long deadline = System.nanoTime() + START_BOUND.toNanos();
        // The mount takes a few milliseconds: looked for after 1, 2, 4 ms, then every POLL.
        long poll = 1;
        try {
            while (!Files.exists(ready)) {
                if (!keeper.isAlive()) {
                    String said = Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8).strip() : "";
                    throw new SandboxException("backend '" + backendName + "' could not mount a sandbox's workspace: "
                            + "its keeper exited " + keeper.exitValue() + (said.isEmpty() ? "" : " saying '" + said
                            + "'") + "; this host must let " + (ownUserNamespace ? "this user make a user and a mount "
                            + "namespace" : "root make a mount namespace") + " and mount a tmpfs in it");
                }
                if (System.nanoTime() > deadline) {
                    keeper.destroyForcibly();
                    throw new SandboxException("backend '" + backendName + "': a sandbox's workspace keeper did not "
                            + "mount its tmpfs within " + START_BOUND.toSeconds() + " s");
                }
                Thread.sleep(poll);
                poll = Math.min(poll * 2, POLL.toMillis());
            }
            Files.deleteIfExists(ready);
        } catch (IOException e) {
            keeper.destroyForcibly();
            throw new SandboxException("backend '" + backendName + "' could not start a sandbox's workspace keeper: "
                    + ErrorDetail.of(e), e);
        } catch (InterruptedException e) {
            keeper.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new SandboxException("interrupted while a sandbox's workspace keeper started", e);
        }
        Instant started = keeper.toHandle().info().startInstant().orElse(Instant.EPOCH);
        WorkspaceKeeper running = new WorkspaceKeeper(keeper.pid(), started, ownUserNamespace, Optional.of(keeper));
        running.record(sandboxDirectory);
        return running;
    }

    /** The keeper recorded in {@code sandboxDirectory}, when it still runs (the same pid and start time). */
    static Optional<WorkspaceKeeper> find(Path sandboxDirectory) {
        try {
            String[] fields = Files.readString(sandboxDirectory.resolve(FILE), StandardCharsets.US_ASCII).strip()
                    .split(" ");
            long pid = Long.parseLong(fields[0]);
            Instant started = Instant.parse(fields[1]);
            boolean ownUserNamespace = Boolean.parseBoolean(fields[2]);
            WorkspaceKeeper keeper = new WorkspaceKeeper(pid, started, ownUserNamespace, Optional.empty());
            return keeper.alive() ? Optional.of(keeper) : Optional.empty();
        } catch (NoSuchFileException none) {
            return Optional.empty();
        } catch (IOException | RuntimeException unreadable) {
            return Optional.empty();
        }
    }

    /** Ends the keeper recorded in {@code sandboxDirectory}, if it runs: its tmpfs goes when nothing uses it. */
    static void end(Path sandboxDirectory) {
        find(sandboxDirectory).ifPresent(WorkspaceKeeper::kill);
    }

    /**
     * Ends every keeper of this user whose sandbox directory no longer exists (deleted without a
     * disposal, say with its whole state root): it holds memory and keeps nothing anyone can reach.
     *
     * @return how many it ended
     */
    static int endOrphans() {
        int ended = 0;
        for (var keeper : ExecMarker.valuesOf(MARKER).entrySet()) {
            try {
                if (!Files.exists(Path.of(keeper.getValue()), java.nio.file.LinkOption.NOFOLLOW_LINKS)
                        && ProcessHandle.of(keeper.getKey()).map(ProcessHandle::destroyForcibly).orElse(false)) {
                    ended++;
                }
            } catch (RuntimeException unreadable) {
                // Not a path: not one of ours.
            }
        }
        return ended;
    }

    boolean alive() {
        if (process.isPresent()) {
            // This JVM's child: its pid cannot name another process before the JVM reaps it (no /proc read).
            return process.get().isAlive();
        }
        return ProcessHandle.of(pid).filter(ProcessHandle::isAlive)
                .flatMap(handle -> handle.info().startInstant()).map(started::equals).orElse(false);
    }

    /** Whether {@code other} names the same keeper process (the same pid and start time). */
    boolean sameAs(WorkspaceKeeper other) {
        return other != null && pid == other.pid && started.equals(other.started);
    }

    /** Where the host reaches the workspace: the workspace's path, seen from the keeper's root. */
    Path workspaceSeenByTheHost(Path workspace) {
        return Path.of("/proc", Long.toString(pid), "root").resolve(workspace.toAbsolutePath().toString().substring(1));
    }

    /** The words that enter the keeper's namespaces before a launch: its mount namespace, and its user namespace. */
    List<String> enterWords(ResourceLimiter.Programs programs) {
        List<String> words = new ArrayList<>(List.of(programs.nsenter(), "--target", Long.toString(pid), "--mount"));
        if (ownUserNamespace) {
            words.addAll(List.of("--user", "--preserve-credentials"));
        }
        words.add("--");
        return words;
    }

    void kill() {
        process.ifPresentOrElse(Process::destroyForcibly, () -> ProcessHandle.of(pid)
                .filter(handle -> handle.info().startInstant().map(started::equals).orElse(false))
                .ifPresent(ProcessHandle::destroyForcibly));
    }

    private void record(Path sandboxDirectory) {
        Path file = sandboxDirectory.resolve(FILE);
        Path temporary = sandboxDirectory.resolve("." + FILE + "-" + UUID.randomUUID());
        try {
            Files.writeString(temporary, pid + " " + started + " " + ownUserNamespace + "\n", StandardCharsets.US_ASCII);
            Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            kill();
            throw new SandboxException("could not record a sandbox's workspace keeper in " + sandboxDirectory + ": "
                    + ErrorDetail.of(e), e);
        }
    }

    private static String tmpfsOptions(LocalLimits limits, HostUser user) {
        long inodes = Math.max(MIN_INODES, limits.workspaceBytes() / BYTES_PER_INODE);
        return "size=" + limits.workspaceBytes() + ",nr_inodes=" + inodes + ",mode=0755,nosuid,nodev";
    }

    @Override
    public String toString() {
        return "keeper pid " + pid;
    }
}
